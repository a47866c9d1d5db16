//===- WarpDispatchScenarios.cpp - what each worker reads, scenario by scenario --------===//
//
// A scenario decides some branches on the launch. In it, the passes of the barrier before
// each store and read are counted on the paths it leaves (a count that still differs by path
// splits on the next branch that reaches the place), a store counts only where some thread
// makes it whenever the scenario holds, and each read sees the store with the most passes
// before it, fewer than its own.
//
//===----------------------------------------------------------------------------------===//
#include "WarpDispatchResolver.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::dispatch;

const Expr *Resolver::literal(BlockId B, unsigned Side) const {
  return FA->values().edgeCondition(B, FA->cfg().block(B).Succs[Side]);
}

bool Resolver::cut(const Scenario &S, BlockId From, BlockId To) const {
  for (auto [B, Side] : S.Sides)
    if (B == From && FA->cfg().block(B).Succs[Side] != To)
      return true;
  return false;
}

BlockId Resolver::splitFor(const Scenario &S, const std::vector<int64_t> &In, BlockId At) const {
  const Cfg &G = FA->cfg();
  for (BlockId Br : Branches) {
    if (In[Br] == Unset || S.decides(Br))
      continue;
    // Br reaches At.
    llvm::BitVector Seen(G.size());
    llvm::SmallVector<BlockId, 16> Work{Br};
    while (!Work.empty()) {
      BlockId B = Work.pop_back_val();
      if (B == At)
        return Br;
      if (Seen.test(B))
        continue;
      Seen.set(B);
      for (BlockId Succ : G.block(B).Succs)
        Work.push_back(Succ);
    }
  }
  return NoIndex;
}

Resolver::Verdict Resolver::runsWhenever(const Scenario &S, BlockId B, BlockId &Split) const {
  const Expr *C = FA->guards().blockCondition(B);
  if (!C)
    return Verdict::Fail;
  ExprContext &Ctx = FA->context();
  C = Ctx.rewrite(C, [&](const Expr *N) -> const Expr * {
    for (auto [Br, Side] : S.Sides) {
      if (N == literal(Br, Side))
        return Ctx.boolean(true);
      if (N == literal(Br, 1 - Side))
        return Ctx.boolean(false);
    }
    return nullptr;
  });
  // Some thread of the CTA runs the block: the default warps' stores are each made by one.
  for (unsigned T = 0; T < Shape.BlockX; ++T) {
    std::optional<uint64_t> V =
        ExprContext::evaluate(C, [&](const Expr *Leaf) { return leafAt(Leaf, T); });
    if (V && *V)
      return Verdict::Ok;
  }
  // A condition on the launch that the scenario leaves open: split on its branch.
  for (BlockId Br : Branches)
    if (!S.decides(Br) &&
        (containsNode(C, literal(Br, 0)) || containsNode(C, literal(Br, 1)))) {
      Split = Br;
      return Verdict::Split;
    }
  return Verdict::Fail;
}

Resolver::Verdict Resolver::analyze(const Scenario &S, const Dispatch &D, Reading &Out,
                                    BlockId &Split, std::string &Why) const {
  const Cfg &G = FA->cfg();
  const Loop &Lp = FA->loops().loop(D.L);
  std::vector<int64_t> In, Count;
  if (!passCounts(D.Id, D.L, S, In, Count, Why))
    return Verdict::Fail;
  auto PassesAt = [&](InstId I) -> int64_t {
    BlockId B = G.inst(I).Block;
    if (In[B] < 0)
      return In[B];
    int64_t N = In[B];
    for (InstId J = G.block(B).Begin; J < I; ++J)
      N += passes(J, D.Id);
    return N;
  };
  // A count that differs by path is split on the branch on the launch that decides it.
  auto Differs = [&](BlockId At, const std::string &What) {
    Why = "the passes of barrier " + std::to_string(D.Id) + " before " + What + " differ by path";
    Split = splitFor(S, In, At);
    return Split == NoIndex ? Verdict::Fail : Verdict::Split;
  };
  Out = Reading();
  Out.State.assign(D.Offset.size(), -1);
  Out.Captured.assign(D.Captures.size(), nullptr);
  Out.CaptureWhy.assign(D.Captures.size(), "");
  int64_t First = PassesAt(D.Ld);
  if (First == Unset)
    return Verdict::Ok; // no worker gets here in this scenario
  if (First == Conflict)
    return Differs(G.inst(D.Ld).Block, "it");
  int64_t Second = Unset;
  for (BlockId Latch : Lp.Latches) {
    if (In[Latch] == Unset)
      continue;
    int64_t Out = In[Latch] < 0 ? In[Latch] : In[Latch] + Count[Latch];
    if (Out < 0 || (Second != Unset && Second != Out)) {
      Why = "the rounds of the loop around it pass barrier " + std::to_string(D.Id) +
            " a different number of times on different paths";
      return Verdict::Fail;
    }
    Second = Out;
  }
  if (Second < 0) {
    Why = "no round of the loop around it comes back to it";
    return Verdict::Fail;
  }
  Second += D.Before;

  // The stores this scenario runs, with the passes before each.
  std::vector<int64_t> StorePasses(D.Stores.size(), Unset);
  for (size_t K = 0; K < D.Stores.size(); ++K) {
    const Store &St = D.Stores[K];
    BlockId B = G.inst(St.I).Block;
    if (In[B] == Unset)
      continue;
    StorePasses[K] = PassesAt(St.I);
    if (StorePasses[K] == Conflict)
      return Differs(B, "the store at ptx line " + std::to_string(line(St.I)));
    switch (runsWhenever(S, B, Split)) {
    case Verdict::Ok: break;
    case Verdict::Split: return Verdict::Split;
    case Verdict::Fail:
      Why = "the store at ptx line " + std::to_string(line(St.I)) +
            " runs only under a condition that no branch on the launch decides";
      return Verdict::Fail;
    }
  }
  // The store a read after Passes passes sees in bytes [Offset, Offset + Size): the one
  // with the most passes before it, fewer than the read's.
  auto Latest = [&](bool Captures, int64_t Offset, int64_t Size, int64_t Passes,
                    const Store *&Best) -> bool {
    Best = nullptr;
    for (size_t K = 0; K < D.Stores.size(); ++K) {
      const Store &St = D.Stores[K];
      if (StorePasses[K] < 0 || St.Capture != Captures || Offset + Size <= St.Offset ||
          Offset >= St.Offset + St.Size)
        continue;
      if (StorePasses[K] == Passes) {
        Why = "the store at ptx line " + std::to_string(line(St.I)) + " and the read race: "
              "both come after pass " + std::to_string(Passes) + " of barrier " +
              std::to_string(D.Id);
        return false;
      }
      if (StorePasses[K] > Passes)
        continue;
      if (Best && StorePasses[Best - D.Stores.data()] == StorePasses[K] &&
          !Best->sameAs(St, Offset)) {
        Why = "the stores at ptx lines " + std::to_string(line(Best->I)) + " and " +
              std::to_string(line(St.I)) + " write different values between the same passes";
        return false;
      }
      if (!Best || StorePasses[K] > StorePasses[Best - D.Stores.data()])
        Best = &St;
    }
    if (!Best)
      Why = "no store reaches byte " + std::to_string(Offset) + " of " +
            D.Symbol->name().str() + " before pass " + std::to_string(Passes);
    return Best != nullptr;
  };
  auto ByteAt = [&](int64_t Byte, int64_t Passes) -> std::optional<uint8_t> {
    const Store *Best = nullptr;
    if (!Latest(false, Byte, 1, Passes, Best))
      return std::nullopt;
    return Best->Bytes[Byte - Best->Offset];
  };

  llvm::BitVector Runs(G.size());
  for (size_t W = 0; W < D.Offset.size(); ++W) {
    if (D.Offset[W] < 0)
      continue;
    std::optional<uint8_t> V0 = ByteAt(D.Offset[W], First);
    if (!V0)
      return Verdict::Fail;
    std::optional<uint8_t> V1 = ByteAt(D.Offset[W], Second);
    if (!V1)
      return Verdict::Fail;
    Out.State[W] = *V0;
    bool Left = false;
    BlockId To = follow(D.Ld, D.LoadLeaf, D.L, W, *V1, Left);
    if (To == NoIndex || !Left) {
      Why = "warp " + std::to_string(W) + "'s second state (" + std::to_string(*V1) +
            ") does not lead out of the loop, so the warp would take a second role";
      return Verdict::Fail;
    }
    if (Out.Exit != NoIndex && Out.Exit != To) {
      Why = "the warps leave the loop for different places";
      return Verdict::Fail;
    }
    Out.Exit = To;
    // What the warp runs in its first round: the blocks of the loop from where its state
    // leads, up to the branches back to the header.
    To = follow(D.Ld, D.LoadLeaf, D.L, W, *V0, Left);
    llvm::SmallVector<BlockId, 16> Work;
    if (To != NoIndex && !Left)
      Work.push_back(To);
    while (!Work.empty()) {
      BlockId B = Work.pop_back_val();
      if (Runs.test(B) || !Lp.contains(B) || B == Lp.Header)
        continue;
      Runs.set(B);
      for (BlockId Succ : G.block(B).Succs)
        Work.push_back(Succ);
    }
  }
  // The values the partitions that run read from the default warps' stores.
  for (size_t C = 0; C < D.Captures.size(); ++C) {
    const Capture &Cap = D.Captures[C];
    if (!Runs.test(G.inst(Cap.I).Block))
      continue;
    int64_t A = PassesAt(Cap.I);
    if (A == Conflict)
      return Differs(G.inst(Cap.I).Block, "the read at ptx line " + std::to_string(line(Cap.I)));
    // A read that cannot be resolved stays as it was (a load the analysis does not know),
    // with the reason in the note: it does not undo the roles.
    const Store *Best = nullptr;
    std::string Kept = Why;
    if (A < 0 || !Latest(true, Cap.Offset, Cap.Size, A, Best))
      Out.CaptureWhy[C] = A < 0 ? "it is not reached on one path" : Why;
    else if (Best->Offset != Cap.Offset || Best->Size != Cap.Size)
      Out.CaptureWhy[C] = "the store at ptx line " + std::to_string(line(Best->I)) +
                          " writes only part of it";
    else
      Out.Captured[C] = Best->Value;
    Why = Kept;
  }
  return Verdict::Ok;
}

