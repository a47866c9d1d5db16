// Decoding the generic-proxy accesses that can touch shared memory (ld/st/atom/red on shared
// or generic addresses, ldmatrix, stmatrix, st.async, red.async, st.bulk) and leaving the
// others alone. Lines from tests/corpus and the reference kernels' PTX unless a comment names
// the PTX ISA syntax block as the source.
#include "SyncOpTestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

TEST(SyncOpMemory, SharedLoadsFromTritonAndNvcc) {
  Line L("ld.shared.b32 \t%r51, [%r7+4096];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::SharedLoad);
  EXPECT_EQ(Op.family(), SyncFamily::MemoryAccess);
  EXPECT_EQ(Op.Space, StateSpace::SharedCta);
  EXPECT_EQ(Op.AccessBytes, 4);
  EXPECT_EQ(roleList(Op), "data,address");
  EXPECT_EQ(text(Op.operand(OperandRole::Address)), "[%r7+4096]");
  Line Vector("ld.shared.v4.b32 \t{%r30, %r31, %r32, %r33}, [%r4];");
  ASSERT_TRUE(Vector.result().isDecoded()) << Vector.describe();
  EXPECT_EQ(Vector.op().AccessBytes, 16);
  Line Symbol("ld.shared.u32 \t%r3, [_ZZ7ws_tmemPKtS0_PfE9tmem_base];");
  ASSERT_TRUE(Symbol.result().isDecoded()) << Symbol.describe();
  EXPECT_EQ(text(Symbol.op().operand(OperandRole::Address)), "[_ZZ7ws_tmemPKtS0_PfE9tmem_base]");
}

TEST(SyncOpMemory, SharedStores) {
  Line L("st.shared.v2.b64 \t[%r5+1024], {%rd1, %rd2};");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Kind, SyncKind::SharedStore);
  EXPECT_EQ(L.op().AccessBytes, 16);
  EXPECT_EQ(roleList(L.op()), "address,data");
  Line Symbol("st.shared.u64 \t[bars+24], %rd5;");
  ASSERT_TRUE(Symbol.result().isDecoded()) << Symbol.describe();
  EXPECT_EQ(text(Symbol.op().operand(OperandRole::Address)), "[bars+24]");
}

TEST(SyncOpMemory, VolatileAndOrderedSharedAccesses) {
  Line Volatile("ld.volatile.shared.u32 %r3, [%r1];");
  ASSERT_TRUE(Volatile.result().isDecoded()) << Volatile.describe();
  EXPECT_EQ(Volatile.op().Sem, MemorySemantics::Volatile);
  // PTX ISA syntax: ld.acquire.scope / st.release.scope.
  Line Acquire("ld.acquire.cta.shared::cta.u32 %r3, [%r1];");
  ASSERT_TRUE(Acquire.result().isDecoded()) << Acquire.describe();
  EXPECT_EQ(Acquire.op().Sem, MemorySemantics::Acquire);
  EXPECT_EQ(Acquire.op().Scope, SyncScope::Cta);
  Line Release("st.release.cluster.shared::cluster.u32 [%r1], %r3;");
  ASSERT_TRUE(Release.result().isDecoded()) << Release.describe();
  EXPECT_EQ(Release.op().Space, StateSpace::SharedCluster);
}

TEST(SyncOpMemory, GenericAccessesMayPointToShared) {
  Line Load("ld.u32 \t%r3, [%rd4];");
  ASSERT_TRUE(Load.result().isDecoded()) << Load.describe();
  EXPECT_EQ(Load.op().Kind, SyncKind::GenericLoad);
  EXPECT_EQ(Load.op().Space, StateSpace::Generic);
  Line Store("st.u32 [%rd4], %r3;");
  ASSERT_TRUE(Store.result().isDecoded()) << Store.describe();
  EXPECT_EQ(Store.op().Kind, SyncKind::GenericStore);
}

TEST(SyncOpMemory, AccessesOutsideSharedMemoryAreNotSynchronization) {
  const char *Lines[] = {
      "ld.global.nc.u32 %r3, [%rd4];",
      "ld.param.u64 %rd1, [tmap];",
      "st.global.v4.b32 [%rd4], {%r1, %r2, %r3, %r4};",
      "atom.global.add.u32 %r1, [%rd4], 1;",
      "red.global.add.u32 [%rd4], 1;",
      "ld.local.f32 %f1, [%rd4];",
      "add.s32 %r1, %r2, %r3;",
      "bra.uni $L__BB0_1;",
  };
  for (const char *Text : Lines) {
    Line L(Text);
    ASSERT_TRUE(L.parsed()) << Text;
    EXPECT_TRUE(L.result().isNotSync()) << Text << ": " << L.describe();
  }
}

TEST(SyncOpMemory, SharedAtomicsFromClang) {
  Line L("atom.shared.add.u32 \t%r78, [%r22+-4], %r108;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::SharedAtomic);
  EXPECT_EQ(Op.Reduction, ReductionOp::Add);
  EXPECT_EQ(roleList(Op), "result,address,data");
  EXPECT_EQ(Op.Sem, MemorySemantics::Relaxed) << "atom defaults to .relaxed";
  EXPECT_EQ(Op.Scope, SyncScope::Gpu) << "at .gpu scope";
  // PTX ISA syntax: cas takes two values; red returns nothing.
  Line Cas("atom.shared.cas.b32 %r1, [%r2], %r3, %r4;");
  ASSERT_TRUE(Cas.result().isDecoded()) << Cas.describe();
  EXPECT_EQ(roleList(Cas.op()), "result,address,data,data2");
  Line Red("red.relaxed.cta.shared::cta.add.u32 [%r2], 1;");
  ASSERT_TRUE(Red.result().isDecoded()) << Red.describe();
  EXPECT_EQ(roleList(Red.op()), "address,data");
}

TEST(SyncOpMemory, MatrixLoadsAndStoresFromTheHopperKernels) {
  Line Ld("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r184, %r185, %r186, %r187}, [%r287+1024];");
  ASSERT_TRUE(Ld.result().isDecoded()) << Ld.describe();
  EXPECT_EQ(Ld.op().Kind, SyncKind::Ldmatrix);
  EXPECT_EQ(Ld.op().Repeat, 4);
  EXPECT_EQ(Ld.op().ShapeM, 8);
  EXPECT_EQ(Ld.op().ShapeN, 8);
  EXPECT_TRUE(Ld.op().Aligned);
  EXPECT_EQ(roleList(Ld.op()), "data,address");
  Line St("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r313], {%r309, %r310, %r311, %r312};");
  ASSERT_TRUE(St.result().isDecoded()) << St.describe();
  EXPECT_EQ(St.op().Kind, SyncKind::Stmatrix);
  EXPECT_EQ(roleList(St.op()), "address,data");
  // PTX ISA syntax: stmatrix .m16n8 with .trans and .b8.
  Line Trans("stmatrix.sync.aligned.m16n8.x2.trans.shared::cta.b8 [%r3], {%r1, %r2};");
  ASSERT_TRUE(Trans.result().isDecoded()) << Trans.describe();
  EXPECT_TRUE(Trans.op().Transposed);
  EXPECT_EQ(Trans.op().ShapeM, 16);
}

TEST(SyncOpMemory, RemoteStoresAndReductionsCompleteBytesOnAPeerBarrier) {
  // PTX ISA syntax blocks of st.async and red.async.
  Line St("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r1], {%r2, %r3}, "
          "[%r4];");
  ASSERT_TRUE(St.result().isDecoded()) << St.describe();
  EXPECT_EQ(St.op().Kind, SyncKind::StAsync);
  EXPECT_EQ(roleList(St.op()), "dst,data,barrier");
  EXPECT_EQ(St.op().fixedCompleteTxBytes(), 8u);
  EXPECT_TRUE(St.op().isAsync());
  Line Red("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
           "[%r1], %r2, [%r4];");
  ASSERT_TRUE(Red.result().isDecoded()) << Red.describe();
  EXPECT_EQ(Red.op().Kind, SyncKind::RedAsync);
  EXPECT_EQ(Red.op().fixedCompleteTxBytes(), 4u);
  Line Global("st.async.mmio.release.gpu.global.u32 [%rd1], %r2;");
  ASSERT_TRUE(Global.parsed());
  EXPECT_TRUE(Global.result().isNotSync()) << "a store to global memory";
}

TEST(SyncOpMemory, BulkZeroingOfSharedMemory) {
  // PTX ISA syntax: st.bulk{.weak}{.shared::cta} [a], size, initval.
  Line L("st.bulk.weak.shared::cta [%r1], 128, 0;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Kind, SyncKind::SharedStore);
  EXPECT_EQ(roleList(L.op()), "address,size,data");
}

struct Malformed {
  const char *Text;
  const char *ReasonPart;
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Malformed &C, std::ostream *OS) { *OS << C.Text; }

class SyncOpMemoryMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyncOpMemoryMalformed, IsUnrecognizedWithAReason) {
  Line L(GetParam().Text);
  ASSERT_TRUE(L.parsed()) << GetParam().Text;
  ASSERT_TRUE(L.result().isUnrecognized()) << L.describe();
  EXPECT_EQ(L.result().family(), SyncFamily::MemoryAccess);
  std::string Reason;
  llvm::raw_string_ostream OS(Reason);
  L.result().printReason(OS);
  EXPECT_NE(OS.str().find(GetParam().ReasonPart), std::string::npos) << OS.str();
}

INSTANTIATE_TEST_SUITE_P(
    SyncOp, SyncOpMemoryMalformed,
    ::testing::Values(
        Malformed{"ld.shared.frob.u32 %r3, [%r1];", "unknown modifier"},
        Malformed{"ld.shared %r3, [%r1];", "type"},
        Malformed{"ld.shared.u32.u32 %r3, [%r1];", "repeated"},
        Malformed{"ld.release.cta.shared.u32 %r3, [%r1];", "not defined"},
        Malformed{"ld.acquire.shared.u32 %r3, [%r1];", "scope"},
        Malformed{"st.shared.wb.ca.u32 [%r1], %r3;", "unknown modifier"},
        Malformed{"st.shared.u32 %r3, [%r1];", "st takes"},
        Malformed{"atom.shared.u32 %r1, [%r2], %r3;", "operation"},
        Malformed{"red.shared.cas.b32 [%r2], %r3;", "'.cas'"},
        Malformed{"atom.shared.cas.b32 %r1, [%r2], %r3;", "atom takes"},
        Malformed{"ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1, %r2, %r3}, [%r4];",
                  "'.x1', '.x2' or '.x4'"},
        Malformed{"ldmatrix.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r4];",
                  "'.sync.aligned'"},
        Malformed{"stmatrix.sync.aligned.m16n16.x4.shared.b16 [%r4], {%r1, %r2, %r3, %r4};",
                  "shape"},
        Malformed{"stmatrix.sync.aligned.m8n8.x4.shared::cluster.b16 [%r4], {%r1};",
                  "'.shared{::cta}'"},
        Malformed{"st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r1], %r2;",
                  "[mbar]"},
        Malformed{"red.async.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
                  "[%r1], %r2, [%r4];",
                  "'.relaxed.cluster'"}));

} // namespace
