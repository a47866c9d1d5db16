// Facts from the reference kernels' protocol comments, checked on the PTX the build generates:
// trip counts in K, stages, starting phases, phases carried across persistent tiles, and who
// waits and arrives. (The protocol IR's own tests compare its JSON with every fact; these are
// the ones the core analyses already decide.)
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// One spin wait of a kernel, seen from the counted loop around it.
struct Wait {
  InstId At = NoIndex;
  std::string Barrier;        ///< the barrier address as printed
  LoopId Around = NoIndex;    ///< the innermost counted loop containing the wait
  const Expr *Parity = nullptr; ///< closed form
  ThreadSet Threads;
};

class Kernel {
public:
  /// Loads WSV_PTX_DIR/File and analyzes its entry whose name ends in _f16.
  bool load(const std::string &File) {
    std::string Path = std::string(WSV_PTX_DIR) + "/" + File;
    if (!llvm::sys::fs::exists(Path))
      return false;
    auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
    if (!Parsed) {
      llvm::consumeError(Parsed.takeError());
      return false;
    }
    Result = std::move(*Parsed);
    for (const ptx::Function *F : Result.M->functions())
      if (F->isDefinition() && F->isEntry() && F->name().ends_with("_f16"))
        FA = std::make_unique<FunctionAnalysis>(*Result.M, *F);
    if (!FA)
      return false;
    Launch = *LaunchShape::fromFunction(FA->cfg().function());
    for (const Loop &L : FA->loops().loops()) {
      const LoopSummary &S = FA->values().loopSummary(L.Index);
      if (!S.Spin)
        continue;
      Wait W;
      W.At = S.Spin->Wait;
      W.Barrier = FA->values().closedForm(S.Spin->Barrier)->str();
      for (LoopId P = L.Parent; P != NoIndex; P = FA->loops().loop(P).Parent)
        if (FA->values().loopSummary(P).Trip.isCounted()) {
          W.Around = P;
          break;
        }
      W.Parity = FA->values().closedForm(S.Spin->Parity);
      W.Threads = FA->guards().threadsAt(W.At, Launch);
      Waits.push_back(std::move(W));
    }
    return true;
  }

  /// The waits whose barrier mentions Name.
  std::vector<const Wait *> waitsOn(llvm::StringRef Name) const {
    std::vector<const Wait *> Out;
    for (const Wait &W : Waits)
      if (llvm::StringRef(W.Barrier).contains(Name))
        Out.push_back(&W);
    return Out;
  }

  /// Parities of a wait in iterations 0 .. N-1 of the loop around it (other iteration numbers
  /// 0), with the k-dimension parameter set to KDim.
  std::vector<uint64_t> paritySequence(const Wait &W, unsigned N, uint64_t KDim = 4096) {
    std::vector<uint64_t> Out;
    const Expr *I = FA->context().iterationVar(W.Around);
    for (uint64_t It = 0; It < N; ++It)
      Out.push_back(evaluate(W.Parity, {{I, It}}, KDim).value_or(~0ull));
    return Out;
  }

  std::optional<uint64_t>
  evaluate(const Expr *E, std::vector<std::pair<const Expr *, uint64_t>> Values,
           uint64_t KDim = 4096) {
    return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
      for (auto &[Leaf, V] : Values)
        if (Leaf == L)
          return V;
      if (L->is(ExprKind::IterationVar))
        return 0;
      if (L->is(ExprKind::Param) && L->name().ends_with("_param_6"))
        return KDim;
      return std::nullopt;
    });
  }

  /// The trip count of a loop as a number, for K = KDim.
  std::optional<uint64_t> iterations(LoopId L, uint64_t KDim) {
    const TripCount &T = FA->values().loopSummary(L).Trip;
    return T.isCounted() ? evaluate(T.Iterations, {}, KDim) : std::nullopt;
  }

  ptx::ParseResult Result;
  std::unique_ptr<FunctionAnalysis> FA;
  LaunchShape Launch;
  std::vector<Wait> Waits;
};

/// Threads of a set, counting threads that are in it under the loop's entry condition.
unsigned threadCount(const ThreadSet &S) {
  unsigned N = S.members().count();
  for (const auto &G : S.elected())
    N += G.Excluded ? -static_cast<int>(G.Warps.size()) : G.Warps.size();
  for (const auto &C : S.conditional())
    N += C.Threads.count();
  return N;
}

/// Whether thread T is in the set, unconditionally or under the loop's entry condition.
bool holds(const ThreadSet &S, unsigned T) {
  if (S.members().test(T))
    return true;
  for (const auto &C : S.conditional())
    if (C.Threads.test(T))
      return true;
  return false;
}

#define LOAD_OR_SKIP(K, File)                                                                 \
  if (!K.load(File))                                                                          \
  GTEST_SKIP() << File << " is not in " << WSV_PTX_DIR << " (build the reference kernels)"

TEST(ReferenceKernelsTest, H2ProducerAndConsumerPhases) {
  // h2.clang.ptx keeps the k-loops rolled: one wait per loop.
  Kernel K;
  LOAD_OR_SKIP(K, "h2.clang.ptx");
  // full[s] at +131072, empty[s] at +131104 in the 1024-aligned dynamic shared memory.
  std::vector<const Wait *> Full = K.waitsOn("+ 131072"), Empty = K.waitsOn("+ 131104");
  ASSERT_EQ(Full.size(), 1u);
  ASSERT_EQ(Empty.size(), 1u);
  // The consumer waits full[s] for parity r & 1 (starts 0), the producer empty[s] for
  // (r & 1) ^ 1 (starts 1); s = i % 4, r = i / 4.
  EXPECT_EQ(K.paritySequence(*Full[0], 9), (std::vector<uint64_t>{0, 0, 0, 0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(K.paritySequence(*Empty[0], 9), (std::vector<uint64_t>{1, 1, 1, 1, 0, 0, 0, 0, 1}));
  // Both loops run K / 64 times.
  for (uint64_t KDim : {64u, 256u, 4096u}) {
    EXPECT_EQ(K.iterations(Full[0]->Around, KDim), KDim / 64);
    EXPECT_EQ(K.iterations(Empty[0]->Around, KDim), KDim / 64);
  }
  // Consumer = warps 0-3, producer = one elected lane of warp 4.
  EXPECT_EQ(threadCount(Full[0]->Threads), 128u);
  ASSERT_EQ(Empty[0]->Threads.elected().size(), 1u);
  EXPECT_EQ(Empty[0]->Threads.elected()[0].Warps, (llvm::SmallVector<unsigned, 4>{4}));
}

TEST(ReferenceKernelsTest, H2UnrolledProducerStillCoversKOver64Tiles) {
  // nvcc unrolls the producer loop by 4 and adds a remainder loop: together they run K/64
  // k-tiles.
  Kernel K;
  LOAD_OR_SKIP(K, "h2.ptx");
  // empty[0..3] sit at +131104 .. +131128; the unrolled copies wait on each.
  std::vector<const Wait *> Empty;
  for (const char *Offset : {"131104", "131112", "131120", "131128"})
    for (const Wait *W : K.waitsOn(Offset))
      if (std::find(Empty.begin(), Empty.end(), W) == Empty.end())
        Empty.push_back(W);
  ASSERT_EQ(Empty.size(), 5u) << "four in the unrolled loop, one in the remainder loop";
  LoopId Unrolled = NoIndex, Remainder = NoIndex;
  for (const Wait *W : Empty) {
    const LoopSummary &S = K.FA->values().loopSummary(W->Around);
    unsigned WaitsInLoop = 0;
    for (const Wait *X : Empty)
      WaitsInLoop += X->Around == W->Around;
    (WaitsInLoop == 4 ? Unrolled : Remainder) = W->Around;
    EXPECT_TRUE(S.Trip.isCounted()) << S.Trip.Reason;
  }
  ASSERT_NE(Unrolled, NoIndex);
  ASSERT_NE(Remainder, NoIndex);
  for (uint64_t Tiles : {4u, 5u, 7u, 8u, 13u, 64u}) {
    uint64_t KDim = Tiles * 64;
    uint64_t Main = Tiles >= 4 ? *K.iterations(Unrolled, KDim) : 0;
    uint64_t Rest = Tiles % 4 ? *K.iterations(Remainder, KDim) : 0;
    EXPECT_EQ(4 * Main + Rest, Tiles) << "K = " << KDim;
  }
}

TEST(ReferenceKernelsTest, B2TmaWarpAndMmaWarp) {
  Kernel K;
  LOAD_OR_SKIP(K, "b2.ptx");
  std::vector<const Wait *> Full = K.waitsOn("full_barriers"), Empty = K.waitsOn("empty_barriers"),
                            Flush = K.waitsOn("flush_barrier");
  ASSERT_EQ(Full.size(), 1u);
  ASSERT_EQ(Empty.size(), 1u);
  ASSERT_EQ(Flush.size(), 1u);
  // TMA warp: producer_phase starts at 1; MMA warp: consumer_phase starts at 0; STAGES = 4.
  EXPECT_EQ(K.paritySequence(*Empty[0], 8), (std::vector<uint64_t>{1, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(K.paritySequence(*Full[0], 8), (std::vector<uint64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  // flush_barrier is waited once with parity 0.
  EXPECT_EQ(Flush[0]->Around, NoIndex);
  EXPECT_TRUE(Flush[0]->Parity->isConstant(0));
  // Both warps run K_TILES = K / 64 iterations.
  EXPECT_EQ(K.iterations(Full[0]->Around, 4096), 64u);
  EXPECT_EQ(K.iterations(Empty[0]->Around, 4096), 64u);
  // The whole TMA warp (tid 0-31) waits on empty, the whole MMA warp (32-63) on full.
  EXPECT_EQ(threadCount(Empty[0]->Threads), 32u);
  EXPECT_EQ(threadCount(Full[0]->Threads), 32u);
  EXPECT_TRUE(holds(Full[0]->Threads, 32) && holds(Full[0]->Threads, 63));
  EXPECT_FALSE(holds(Full[0]->Threads, 0));
  EXPECT_TRUE(holds(Empty[0]->Threads, 0) && holds(Empty[0]->Threads, 31));
}

TEST(ReferenceKernelsTest, B3PhasesCarriedAcrossPersistentTiles) {
  Kernel K;
  LOAD_OR_SKIP(K, "b3.ptx");
  ExprContext &C = K.FA->context();
  std::vector<const Wait *> Mma2Tma = K.waitsOn("mma2tma"), Tma2Mma = K.waitsOn("tma2mma"),
                            Mma2Ld = K.waitsOn("mma2ld");
  ASSERT_EQ(Mma2Tma.size(), 1u);
  ASSERT_EQ(Tma2Mma.size(), 1u);
  ASSERT_GE(Mma2Ld.size(), 1u);
  // The producer waits mma2tma starting at (stage 0, phase 1), the MMA warp tma2mma at (0, 0),
  // PIPE_DEPTH = 2, the stage and phase carried across tiles: for global k-tile g = j * KT + i
  // (tile j of this CTA, k-tile i), the phase is start ^ ((g / 2) & 1).
  const Wait &Producer = *Mma2Tma[0], &Consumer = *Tma2Mma[0];
  LoopId Inner = Producer.Around;
  LoopId Outer = K.FA->loops().loop(Inner).Parent;
  while (Outer != NoIndex && !K.FA->values().loopSummary(Outer).Trip.isCounted())
    Outer = K.FA->loops().loop(Outer).Parent;
  ASSERT_NE(Outer, NoIndex);
  const uint64_t KT = 3, KDim = KT * 64;
  for (uint64_t J = 0; J < 4; ++J)
    for (uint64_t I = 0; I < KT; ++I) {
      uint64_t G = J * KT + I;
      auto Parity = K.evaluate(Producer.Parity,
                               {{C.iterationVar(Inner), I}, {C.iterationVar(Outer), J}}, KDim);
      EXPECT_EQ(Parity, 1 ^ ((G / 2) & 1)) << "tile " << J << " k-tile " << I;
    }
  LoopId CInner = Consumer.Around;
  LoopId COuter = K.FA->loops().loop(CInner).Parent;
  while (COuter != NoIndex && !K.FA->values().loopSummary(COuter).Trip.isCounted())
    COuter = K.FA->loops().loop(COuter).Parent;
  ASSERT_NE(COuter, NoIndex);
  for (uint64_t J = 0; J < 4; ++J)
    for (uint64_t I = 0; I < KT; ++I) {
      uint64_t G = J * KT + I;
      auto Parity = K.evaluate(Consumer.Parity,
                               {{C.iterationVar(CInner), I}, {C.iterationVar(COuter), J}}, KDim);
      EXPECT_EQ(Parity, (G / 2) & 1) << "tile " << J << " k-tile " << I;
    }
  // The writeback warpgroup waits mma2ld once per tile, starting at phase 0.
  EXPECT_EQ(K.paritySequence(*Mma2Ld[0], 4, KDim), (std::vector<uint64_t>{0, 1, 0, 1}));
  EXPECT_EQ(threadCount(Mma2Ld[0]->Threads), 128u);
  // The tile loops visit blockIdx.x, blockIdx.x + gridDim.x, ...: with 10 tiles and a grid of
  // 4, CTA 1 has tiles 1, 5, 9.
  const TripCount &T = K.FA->values().loopSummary(Outer).Trip;
  ASSERT_TRUE(T.isCounted());
  auto Tiles = ExprContext::evaluate(T.Iterations, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L == C.specialRegister(SpecialRegister::CtaidX))
      return 1;
    if (L == C.specialRegister(SpecialRegister::NctaidX))
      return 4;
    if (L->is(ExprKind::Param) && L->name().ends_with("_param_4"))
      return 2 * 128; // M: 2 tiles
    if (L->is(ExprKind::Param) && L->name().ends_with("_param_5"))
      return 5 * 128; // N: 5 tiles
    return std::nullopt;
  });
  EXPECT_EQ(Tiles, 3u);
}

} // namespace
