// Decoding bulk copies (TMA loads and stores, non-tensor bulk copies, reductions, prefetches,
// bulk groups) and the sm_80 cp.async. Lines from tests/corpus and the reference kernels'
// PTX unless a comment says the PTX ISA's syntax block is the source.
#include "SyncOpTestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

TEST(SyncOpCopy, TensorLoadToSharedCtaFromTriton) {
  Line L("@%p24 cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes "
         "[%r62], [%rd5, {%r195, %r194}], [%r61];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::BulkTensorLoad);
  EXPECT_EQ(Op.family(), SyncFamily::BulkCopy);
  EXPECT_EQ(Op.Dims, 2);
  EXPECT_EQ(Op.DstSpace, StateSpace::SharedCta);
  EXPECT_EQ(Op.SrcSpace, StateSpace::Global);
  EXPECT_EQ(Op.Completion, CompletionMechanism::MbarrierCompleteTx);
  EXPECT_EQ(Op.LoadMode, TensorLoadMode::Tile) << "tile is the default load mode";
  EXPECT_EQ(roleList(Op), "dst,tensor,barrier");
  EXPECT_EQ(text(Op.dst()), "[%r62]");
  EXPECT_EQ(text(Op.tensorMap()), "%rd5");
  EXPECT_EQ(text(Op.coords()), "{%r195, %r194}");
  EXPECT_EQ(text(Op.barrier()), "[%r61]");
  EXPECT_FALSE(Op.Multicast);
  EXPECT_EQ(Op.CtaGroup, 0);
  EXPECT_TRUE(Op.isAsync());
}

TEST(SyncOpCopy, TensorLoadToSharedClusterFromNvcc) {
  Line L("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
         "[%r205], [%rd54, {%r211, %r5}], [%r210];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().DstSpace, StateSpace::SharedCluster);
  EXPECT_EQ(L.op().Space, StateSpace::SharedCluster) << "the barrier is addressed like dst";
}

TEST(SyncOpCopy, TwoCtaTensorLoadWritesCtaGroupBeforeTheSpaces) {
  // B4 (Step 8): nvcc puts .cta_group::2 between the dimension and the state spaces.
  Line L("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global."
         "mbarrier::complete_tx::bytes [%r486], [%rd19, {%r508, %r39}], [%r483];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().CtaGroup, 2);
  EXPECT_EQ(L.op().DstSpace, StateSpace::SharedCluster);
  EXPECT_EQ(L.op().SrcSpace, StateSpace::Global);
}

TEST(SyncOpCopy, MulticastTensorLoadNamesTheCtaMask) {
  Line L("@%p5 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes."
         "multicast::cluster \t[%r17], [%rd2, {%r16, 0}], [%r10], %rs1;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_TRUE(L.op().Multicast);
  EXPECT_EQ(roleList(L.op()), "dst,tensor,barrier,ctaMask");
  EXPECT_EQ(text(L.op().ctaMask()), "%rs1");
  EXPECT_EQ(text(L.op().coords()), "{%r16, 0}");
}

TEST(SyncOpCopy, TensorLoadsWithTouchingTokensAndFiveDimensions) {
  Line Touching("@%leader cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                "mbarrier::complete_tx::bytes[%r1+1024],[%rd2,{%r6,%r7}],[%r1];");
  ASSERT_TRUE(Touching.result().isDecoded()) << Touching.describe();
  EXPECT_EQ(text(Touching.op().dst()), "[%r1+1024]");
  Line FiveD("@%leader cp.async.bulk.tensor.5d.shared::cluster.global.tile."
             "mbarrier::complete_tx::bytes [%r1+2048], [%rd2, {%r6, %r7, %r6, %r7, %r6}], [%r1];");
  ASSERT_TRUE(FiveD.result().isDecoded()) << FiveD.describe();
  EXPECT_EQ(FiveD.op().Dims, 5);
}

TEST(SyncOpCopy, CacheHintAndMulticastTogether) {
  // PTX ISA syntax: {, ctaMask} comes before {, cache-policy}.
  Line L("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes."
         "multicast::cluster.L2::cache_hint [%r2], [%rd1, {%r3, %r3}], [%r1], %rs1, %rd2;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_TRUE(L.op().CacheHint);
  EXPECT_EQ(roleList(L.op()), "dst,tensor,barrier,ctaMask,cachePolicy");
}

TEST(SyncOpCopy, Im2colLoadsTakeTheirOffsetVector) {
  // PTX ISA syntax: im2col modes carry im2colInfo after [mbar].
  Line L("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
         "[%r2], [%rd1, {%r3, %r3, %r3}], [%r1], {%rs1};");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().LoadMode, TensorLoadMode::Im2col);
  EXPECT_EQ(roleList(L.op()), "dst,tensor,barrier,im2colInfo");
  Line W("cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w."
         "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r3, %r3}], [%r1], {%rs1, %rs1};");
  ASSERT_TRUE(W.result().isDecoded()) << W.describe();
  EXPECT_EQ(W.op().LoadMode, TensorLoadMode::Im2colW);
}

TEST(SyncOpCopy, Gather4LoadsFiveCoordinatesOfATwoDTensor) {
  Line L("cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4."
         "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r3, %r3, %r3, %r3}], [%r1];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().LoadMode, TensorLoadMode::TileGather4);
}

TEST(SyncOpCopy, TensorStoreFromTriton) {
  Line L("@%p47 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
         "[%rd1, {%r124, %r125}], [%r126];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::BulkTensorStore);
  EXPECT_EQ(Op.Completion, CompletionMechanism::BulkGroup);
  EXPECT_EQ(Op.DstSpace, StateSpace::Global);
  EXPECT_EQ(Op.SrcSpace, StateSpace::SharedCta);
  EXPECT_EQ(roleList(Op), "tensor,src");
  EXPECT_EQ(text(Op.src()), "[%r126]");
  EXPECT_FALSE(Op.has(OperandRole::Barrier)) << "stores complete through bulk groups";
}

TEST(SyncOpCopy, TensorReduceAndPrefetch) {
  // PTX ISA syntax blocks of cp.reduce.async.bulk.tensor and cp.async.bulk.prefetch.tensor.
  Line Reduce("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group "
              "[%rd1, {%r3, %r3}], [%r2];");
  ASSERT_TRUE(Reduce.result().isDecoded()) << Reduce.describe();
  EXPECT_EQ(Reduce.op().Kind, SyncKind::BulkTensorReduce);
  EXPECT_EQ(Reduce.op().Reduction, ReductionOp::Add);
  Line Prefetch("cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint "
                "[%rd1, {%r3, %r3}], %rd2;");
  ASSERT_TRUE(Prefetch.result().isDecoded()) << Prefetch.describe();
  EXPECT_EQ(Prefetch.op().Kind, SyncKind::BulkTensorPrefetch);
  EXPECT_EQ(roleList(Prefetch.op()), "tensor,cachePolicy");
  EXPECT_FALSE(Prefetch.op().has(OperandRole::Barrier));
}

TEST(SyncOpCopy, NonTensorBulkLoadFromClang) {
  Line L("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
         "[%r99], [%rd102], %r98, [%r97];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::BulkLoad);
  EXPECT_EQ(roleList(Op), "dst,src,size,barrier");
  EXPECT_EQ(text(Op.size()), "%r98");
  EXPECT_EQ(text(Op.barrier()), "[%r97]");
}

TEST(SyncOpCopy, NonTensorBulkForms) {
  // PTX ISA syntax blocks of cp.async.bulk and cp.reduce.async.bulk.
  Line Peer("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
            "[%r2], [%r2], 16, [%r1];");
  ASSERT_TRUE(Peer.result().isDecoded()) << Peer.describe();
  EXPECT_EQ(Peer.op().Kind, SyncKind::BulkSharedToCluster);
  Line Store("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.cp_mask "
             "[%rd2], [%r2], 16, %rd2, %rs1;");
  ASSERT_TRUE(Store.result().isDecoded()) << Store.describe();
  EXPECT_EQ(Store.op().Kind, SyncKind::BulkStore);
  EXPECT_EQ(roleList(Store.op()), "dst,src,size,cachePolicy,byteMask");
  Line Multicast("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes."
                 "multicast::cluster [%r2], [%rd2], 16, [%r1], %rs1;");
  ASSERT_TRUE(Multicast.result().isDecoded()) << Multicast.describe();
  EXPECT_EQ(roleList(Multicast.op()), "dst,src,size,barrier,ctaMask");
  Line ReduceToPeer("cp.reduce.async.bulk.shared::cluster.shared::cta."
                    "mbarrier::complete_tx::bytes.add.u32 [%r2], [%r2], 16, [%r1];");
  ASSERT_TRUE(ReduceToPeer.result().isDecoded()) << ReduceToPeer.describe();
  EXPECT_EQ(ReduceToPeer.op().Kind, SyncKind::BulkReduce);
  EXPECT_EQ(ReduceToPeer.op().Completion, CompletionMechanism::MbarrierCompleteTx);
  Line ReduceToGlobal("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 "
                      "[%rd2], [%r2], 16;");
  ASSERT_TRUE(ReduceToGlobal.result().isDecoded()) << ReduceToGlobal.describe();
  EXPECT_EQ(ReduceToGlobal.op().Completion, CompletionMechanism::BulkGroup);
  Line Prefetch("cp.async.bulk.prefetch.L2.global [%rd2], 16;");
  ASSERT_TRUE(Prefetch.result().isDecoded()) << Prefetch.describe();
  EXPECT_EQ(Prefetch.op().Kind, SyncKind::BulkPrefetch);
}

TEST(SyncOpCopy, BulkGroupsFromTheReferenceKernels) {
  Line Commit("cp.async.bulk.commit_group;");
  ASSERT_TRUE(Commit.result().isDecoded()) << Commit.describe();
  EXPECT_EQ(Commit.op().Kind, SyncKind::BulkCommitGroup);
  EXPECT_EQ(Commit.op().numRoles(), 0u);
  Line Read("cp.async.bulk.wait_group.read \t0;");
  ASSERT_TRUE(Read.result().isDecoded()) << Read.describe();
  EXPECT_EQ(Read.op().Kind, SyncKind::BulkWaitGroup);
  EXPECT_TRUE(Read.op().ReadOnly);
  EXPECT_EQ(Read.op().name(), "cp.async.bulk.wait_group.read");
  EXPECT_EQ(Read.op().waitN().integerValue(), 0);
  Line Full("cp.async.bulk.wait_group 0;");
  ASSERT_TRUE(Full.result().isDecoded()) << Full.describe();
  EXPECT_FALSE(Full.op().ReadOnly);
}

TEST(SyncOpCopy, AmpereCpAsyncFromTriton) {
  Line L("cp.async.cg.shared.global [ %r144 + 0 ], [ %rd76 + 0 ], 0x10, %r146;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::CpAsync);
  EXPECT_EQ(Op.family(), SyncFamily::AsyncCopy);
  EXPECT_EQ(Op.DstSpace, StateSpace::SharedCta);
  EXPECT_EQ(roleList(Op), "dst,src,copySize,srcSize");
  EXPECT_EQ(Op.operand(OperandRole::CopySize).integerValue(), 16);
  Line Commit("cp.async.commit_group;");
  ASSERT_TRUE(Commit.result().isDecoded()) << Commit.describe();
  EXPECT_EQ(Commit.op().Kind, SyncKind::CpAsyncCommitGroup);
  Line Wait("cp.async.wait_group \t4;");
  ASSERT_TRUE(Wait.result().isDecoded()) << Wait.describe();
  EXPECT_EQ(Wait.op().waitN().integerValue(), 4);
  Line All("cp.async.wait_all;");
  ASSERT_TRUE(All.result().isDecoded()) << All.describe();
  EXPECT_EQ(All.op().Kind, SyncKind::CpAsyncWaitAll);
}

TEST(SyncOpCopy, AmpereCpAsyncWithCacheHint) {
  // PTX ISA syntax: with .L2::cache_hint the last operand is the cache policy.
  Line L("cp.async.ca.shared::cta.global.L2::cache_hint.L2::128B [%r2], [%rd2], 8, %rd3;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(roleList(L.op()), "dst,src,copySize,cachePolicy");
}

struct Malformed {
  const char *Text;
  SyncFamily Family;
  const char *ReasonPart;
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Malformed &C, std::ostream *OS) { *OS << C.Text; }

class SyncOpCopyMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyncOpCopyMalformed, IsUnrecognizedWithAReason) {
  Line L(GetParam().Text);
  ASSERT_TRUE(L.parsed()) << GetParam().Text;
  ASSERT_TRUE(L.result().isUnrecognized()) << L.describe();
  EXPECT_EQ(L.result().family(), GetParam().Family);
  std::string Reason;
  llvm::raw_string_ostream OS(Reason);
  L.result().printReason(OS);
  EXPECT_NE(OS.str().find(GetParam().ReasonPart), std::string::npos) << OS.str();
}

constexpr SyncFamily Bulk = SyncFamily::BulkCopy;
constexpr SyncFamily Async = SyncFamily::AsyncCopy;

INSTANTIATE_TEST_SUITE_P(
    SyncOp, SyncOpCopyMalformed,
    ::testing::Values(
        Malformed{"cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes."
                  "multicast::cluster [%r2], [%rd1, {%r3, %r3}], [%r1], %rs1;",
                  Bulk, "'.shared::cluster'"},
        Malformed{"cp.async.bulk.tensor.2d.global.shared::cta.mbarrier::complete_tx::bytes "
                  "[%rd1, {%r3, %r3}], [%r2];",
                  Bulk, "'.bulk_group'"},
        Malformed{"cp.async.bulk.tensor.2d.shared::cluster.global.bulk_group "
                  "[%r2], [%rd1, {%r3, %r3}], [%r1];",
                  Bulk, "complete_tx"},
        Malformed{"cp.async.bulk.tensor.2d.global.shared::cluster.bulk_group "
                  "[%rd1, {%r3, %r3}], [%r2];",
                  Bulk, "a tensor copy goes"},
        Malformed{"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
                  "[%r2], [%rd1, {%r3, %r3}], [%r1];",
                  Bulk, "dimensions"},
        Malformed{"cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes "
                  "[%r2], [%rd1, {%r3, %r3}], [%r1];",
                  Bulk, "'.1d' to '.5d'"},
        Malformed{"cp.async.bulk.tensor.2d.shared::cluster.global.L2::cache_hint "
                  "[%r2], [%rd1, {%r3, %r3}], [%r1], %rd2;",
                  Bulk, "complete_tx"},
        Malformed{"cp.async.bulk.tensor.3d.shared::cluster.global.im2col."
                  "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r3, %r3}], [%r1];",
                  Bulk, "im2colInfo"},
        Malformed{"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                  "[%r2], %rd1, [%r1];",
                  Bulk, "[tensorMap, {coordinates}]"},
        Malformed{"cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes."
                  "multicast::cluster [%r2], [%rd2], 16, [%r1], %rs1;",
                  Bulk, "multicast"},
        Malformed{"cp.async.bulk.shared::cta.global.bulk_group [%r2], [%rd2], 16;", Bulk,
                  "complete_tx"},
        Malformed{"cp.async.bulk.wait_group %r3;", Bulk, "immediate"},
        Malformed{"cp.async.bulk.commit_group.read;", Bulk, "unknown modifier"},
        Malformed{"cp.reduce.async.bulk.tensor.2d.global.shared::cta.bulk_group "
                  "[%rd1, {%r3, %r3}], [%r2];",
                  Bulk, "reduction"},
        Malformed{"cp.async.bulk.prefetch.global [%rd2], 16;", Bulk, "'.L2.global'"},
        Malformed{"cp.async.cg.shared.global [%r2], [%rd2], 8;", Async, "16 bytes"},
        Malformed{"cp.async.ca.global.shared [%r2], [%rd2], 8;", Async, "'.global' to"},
        Malformed{"cp.async.wait_group;", Async, "immediate"},
        Malformed{"cp.async.foo;", Async, "unknown cp.async instruction"}));

} // namespace
