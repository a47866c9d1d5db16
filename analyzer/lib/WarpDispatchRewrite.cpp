//===- WarpDispatchRewrite.cpp - the rewritten text and the note ----------------------===//
//
// The load of the state becomes the first round's state, computed from %tid.x (chosen among
// the scenarios by their branches' conditions, computed again, where they differ); each
// resolved read of a captured value becomes the value; the branches back to the dispatch go
// to a copy of its prefix that continues where the exit state leads. Every edit stays on its
// line.
//
//===----------------------------------------------------------------------------------===//
#include "WarpDispatchResolver.h"

#include "wsv/analyzer/ExprPtx.h"
#include "wsv/models/SyncOp.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::dispatch;
using llvm::StringRef;
#include "wsv/ptx_parser/Printer.h"

#include <functional>

std::optional<std::string> Resolver::scenarioPredicate(const Scenario &S, const std::string &Name,
                                                       std::string &Decls, std::string &Code,
                                                       std::string &Why) const {
  std::string Pred;
  for (size_t J = 0; J < S.Sides.size(); ++J) {
    auto [B, Side] = S.Sides[J];
    std::optional<PtxValue> P = emitPtx(literal(B, Side), Name + "_" + std::to_string(J), Why);
    if (!P)
      return std::nullopt;
    Decls += P->Decls;
    Code += P->Code;
    if (Pred.empty()) {
      Pred = P->Reg;
    } else {
      std::string And = "%" + Name + "_and" + std::to_string(J);
      Decls += ".reg .pred " + And + "; ";
      Code += "and.pred " + And + ", " + Pred + ", " + P->Reg + "; ";
      Pred = And;
    }
  }
  return Pred;
}

bool Resolver::rewrite(const Dispatch &D, const std::vector<Scenario> &Leaves,
                       const std::vector<Reading> &Readings, BlockId Exit) {
  const Cfg &G = FA->cfg();
  const Loop &Lp = FA->loops().loop(D.L);
  const BasicBlock &H = G.block(Lp.Header);
  const InstId Ld = D.Ld;
  const unsigned Warps = D.Offset.size();
  if (!G.block(Exit).Label || G.block(Exit).LabelFrame != 0)
    return fail(Ld, "the place the exit state leads to has no label");
  const ptx::Label *HeaderLabel = H.Label;
  if (!HeaderLabel || H.LabelFrame != 0)
    return fail(Ld, "the loop header has no label");
  for (BlockId Latch : Lp.Latches) {
    bool Falls = fallsInto(Latch, Lp.Header), Jumps = jumpsTo(Latch, Lp.Header);
    if (G.block(Latch).Terminator == TerminatorKind::Switch ||
        (Falls && Latch + 1 != Lp.Header) || (!Falls && !Jumps) ||
        (Jumps && G.inst(G.terminatorInst(Latch)).Frame != 0))
      return fail(Ld, "a branch back to the loop header is not a plain branch of the kernel");
  }
  StringRef Src = M.source();
  auto Statement = [&](InstId I, size_t &At, size_t &End) {
    At = G.inst(I).I->ptr() - Src.data();
    End = Src.find(';', At);
    return End != StringRef::npos && !Src.substr(At, End - At).contains('\n');
  };
  std::string S = std::to_string(Serial);

  // Scenarios that lead somewhere: the rewrite tells them apart only where they differ.
  std::vector<size_t> Live;
  for (size_t K = 0; K < Leaves.size(); ++K)
    if (Readings[K].Exit != NoIndex)
      Live.push_back(K);
  // Chooses by scenario among per-scenario values: Pick(K) writes scenario K's value into a
  // register and returns it; the first live scenario is the default.
  auto Select = [&](const std::string &Name, const std::string &MovType, const std::string &Dest,
                    const std::vector<size_t> &Which,
                    const std::function<std::optional<std::string>(size_t, std::string &,
                                                                   std::string &)> &Pick,
                    std::string &Text, std::string &Why) -> bool {
    std::string Decls, Code;
    for (size_t N = 0; N < Which.size(); ++N) {
      std::optional<std::string> R = Pick(Which[N], Decls, Code);
      if (!R)
        return false;
      if (N == 0) {
        Code += "mov" + MovType + " " + Dest + ", " + *R + "; ";
        continue;
      }
      std::optional<std::string> P =
          scenarioPredicate(Leaves[Which[N]], Name + "_s" + std::to_string(N), Decls, Code, Why);
      if (!P)
        return false;
      Code += "@" + *P + " mov" + MovType + " " + Dest + ", " + *R + "; ";
    }
    Text = "{ " + Decls + Code + "}";
    return true;
  };

  // The load's statement becomes the first round's state, from %tid.x.
  size_t LdAt = 0, LdEnd = 0;
  if (!Statement(Ld, LdAt, LdEnd))
    return fail(Ld, "the load's statement spans lines");
  ptx::Operand DestOp = G.inst(Ld).I->operands()[0];
  std::string Type = DestOp.isName() ? registerType(Ld, DestOp.text()) : "";
  unsigned Bits = 0;
  if (Type.size() < 2 || StringRef(Type).drop_front().getAsInteger(10, Bits) ||
      (Bits != 16 && Bits != 32 && Bits != 64))
    return fail(Ld, "its destination is not a 16, 32 or 64-bit register");
  const std::string MovType = ".b" + std::to_string(Bits);
  // Runs of warps with one state in scenario K; warps that never load take their neighbours'.
  auto RunsOf = [&](size_t K) {
    std::vector<std::pair<unsigned, int64_t>> Runs; // (first warp, state)
    for (unsigned W = 0; W < Warps; ++W)
      if (Readings[K].State[W] >= 0 && (Runs.empty() || Runs.back().second != Readings[K].State[W]))
        Runs.push_back({Runs.empty() ? 0 : W, Readings[K].State[W]});
    return Runs;
  };
  // The scenarios a rewritten value tells apart: the first alone where all of them agree,
  // else every one (a scenario's predicate is exact only for that scenario itself).
  auto TellApart = [](std::vector<size_t> Candidates, auto Same) {
    if (llvm::all_of(Candidates, [&](size_t K) { return Same(K, Candidates.front()); }))
      Candidates.resize(std::min<size_t>(Candidates.size(), 1));
    return Candidates;
  };
  std::vector<size_t> StateScenarios =
      TellApart(Live, [&](size_t A, size_t B) { return RunsOf(A) == RunsOf(B); });
  std::string WReg = "%wsv_dispatch_warp" + S, QReg = "%wsv_dispatch_pred" + S;
  std::string Load, Why;
  bool Ok = Select(
      "wsv_dispatch" + S, MovType, DestOp.text().str(), StateScenarios,
      [&](size_t K, std::string &Decls, std::string &Code) -> std::optional<std::string> {
        std::string V = "%wsv_dispatch_state" + S + "_" + std::to_string(K);
        if (Decls.empty())
          Decls += ".reg .b32 " + WReg + "; .reg .pred " + QReg + "; ";
        if (Code.empty())
          Code += "mov.u32 " + WReg + ", %tid.x; shr.u32 " + WReg + ", " + WReg + ", 5; ";
        Decls += ".reg " + MovType + " " + V + "; ";
        auto Runs = RunsOf(K);
        Code += "mov" + MovType + " " + V + ", " + std::to_string(Runs.back().second) + "; ";
        for (size_t R = Runs.size() - 1; R-- > 0;)
          Code += "setp.lt.u32 " + QReg + ", " + WReg + ", " + std::to_string(Runs[R + 1].first) +
                  "; @" + QReg + " mov" + MovType + " " + V + ", " +
                  std::to_string(Runs[R].second) + "; ";
        return V;
      },
      Load, Why);
  if (!Ok)
    return fail(Ld, "the scenarios cannot be told apart in PTX: " + Why);
  Edits.push_back({LdAt, LdEnd + 1 - LdAt, Load});

  // Each captured value read becomes the value stored, computed again.
  std::vector<std::string> CaptureNotes;
  for (size_t C = 0; C < D.Captures.size(); ++C) {
    const Capture &Cap = D.Captures[C];
    std::string Kept = Cap.Why;
    std::vector<size_t> Reading;
    for (size_t K : Live) {
      if (Kept.empty() && !Readings[K].CaptureWhy[C].empty())
        Kept = Readings[K].CaptureWhy[C];
      if (Readings[K].Captured[C])
        Reading.push_back(K);
    }
    std::vector<size_t> Which = TellApart(Reading, [&](size_t A, size_t B) {
      return Readings[A].Captured[C] == Readings[B].Captured[C];
    });
    size_t At = 0, End = 0;
    ptx::Operand Dst = G.inst(Cap.I).I->operands()[0];
    std::string DType = Dst.isName() ? registerType(Cap.I, Dst.text()) : "";
    unsigned DBits = 0;
    if (Kept.empty() && (Which.empty() || !Statement(Cap.I, At, End) || DType.size() < 2 ||
                         StringRef(DType).drop_front().getAsInteger(10, DBits) ||
                         DBits != 8 * unsigned(Cap.Size)))
      Kept = "it is not read in a way the rewrite can replace";
    std::string Text;
    std::string Name = "wsv_capture" + S + "_" + std::to_string(C);
    if (Kept.empty() &&
        !Select(Name, ".b" + std::to_string(DBits), Dst.text().str(), Which,
                [&](size_t K, std::string &Decls, std::string &Code) -> std::optional<std::string> {
                  std::optional<PtxValue> P = emitPtx(
                      FA->context().resize(Readings[K].Captured[C], DBits),
                      Name + "_v" + std::to_string(K), Kept);
                  if (!P)
                    return std::nullopt;
                  Decls += P->Decls;
                  Code += P->Code;
                  return P->Reg;
                },
                Text, Kept) &&
        Kept.empty())
      Kept = "the value cannot be computed in PTX";
    if (!Kept.empty()) {
      CaptureNotes.push_back("the read at ptx line " + std::to_string(line(Cap.I)) +
                             " stays a load: " + Kept);
      continue;
    }
    Edits.push_back({At, End + 1 - At, Text});
    // The stores, by line: the values themselves are long expressions of the launch.
    std::string From;
    for (const Store &St : D.Stores)
      if (St.Capture && llvm::any_of(Which, [&](size_t K) {
            return Readings[K].Captured[C] == St.Value;
          }) && St.Offset == Cap.Offset)
        From += (From.empty() ? "" : ", ") + std::to_string(line(St.I));
    CaptureNotes.push_back("the read at ptx line " + std::to_string(line(Cap.I)) +
                           " is the value of the launch stored at ptx line " + From +
                           ", computed again");
  }

  // The rounds after the first: the header's prefix again, then where the exit state leads.
  std::string Again = "$L__wsv_dispatch_done" + S;
  std::string Clone;
  llvm::raw_string_ostream CS(Clone);
  // An entry that falls into the header must not fall into the copy placed before it.
  if (llvm::any_of(H.Preds, [&](BlockId P) {
        return !Lp.contains(P) && P + 1 == Lp.Header && fallsInto(P, Lp.Header);
      }))
    CS << "bra.uni " << HeaderLabel->name() << "; ";
  CS << Again << ": ";
  for (InstId I = H.Begin; I < Ld; ++I) {
    std::string One;
    llvm::raw_string_ostream IS(One);
    ptx::printStatement(*G.inst(I).I, IS);
    CS << StringRef(One).trim() << " ";
  }
  CS << "bra.uni " << G.block(Exit).Label->name() << "; ";
  std::replace(Clone.begin(), Clone.end(), '\n', ' ');
  Edits.push_back({size_t(HeaderLabel->ptr() - Src.data()), 0, Clone});
  for (BlockId Latch : Lp.Latches) {
    if (!jumpsTo(Latch, Lp.Header))
      continue;
    ptx::Operand Target = G.inst(G.terminatorInst(Latch)).I->operands()[0];
    Edits.push_back({size_t(Target.ptr() - Src.data()), Target.text().size(), Again});
  }

  // The note: an assumption of every verdict.
  std::string Note;
  llvm::raw_string_ostream NS(Note);
  NS << "warp roles chosen by a shared-memory byte (ld.shared at ptx line " << line(Ld)
     << ") resolved from the stores of constants at ptx line(s) ";
  bool Comma = false;
  for (const Store &St : D.Stores)
    if (!St.Capture) {
      NS << (Comma ? ", " : "") << line(St.I);
      Comma = true;
    }
  NS << " and the passes of barrier " << D.Id << ":";
  for (size_t N = 0; N < StateScenarios.size(); ++N) {
    size_t K = StateScenarios[N];
    if (StateScenarios.size() > 1) {
      NS << (N ? "; " : " ") << "where";
      for (size_t J = 0; J < Leaves[K].Sides.size(); ++J) {
        auto [B, Side] = Leaves[K].Sides[J];
        NS << (J ? " and " : " ") << *literal(B, Side);
      }
      NS << ",";
    }
    auto Runs = RunsOf(K);
    for (size_t R = 0; R < Runs.size(); ++R) {
      unsigned Last = R + 1 < Runs.size() ? Runs[R + 1].first - 1 : Warps - 1;
      while (Last > Runs[R].first && Readings[K].State[Last] < 0)
        --Last;
      unsigned FirstW = Runs[R].first;
      while (FirstW < Last && Readings[K].State[FirstW] < 0)
        ++FirstW;
      bool Left = false;
      BlockId To = follow(Ld, D.LoadLeaf, D.L, FirstW, uint64_t(Runs[R].second), Left);
      NS << (R ? ";" : "") << " warp" << (Last > FirstW ? "s " : " ") << FirstW;
      if (Last > FirstW)
        NS << "-" << Last;
      NS << " read state " << Runs[R].second;
      if (To != NoIndex && !G.block(To).empty())
        NS << " and run the code at ptx line "
           << G.location(G.block(To).Begin).Line;
    }
  }
  NS << "; then each reads the exit state and leaves (ptx line "
     << (G.block(Exit).empty() ? 0 : G.location(G.block(Exit).Begin).Line) << ")";
  for (const std::string &C : CaptureNotes)
    NS << "; " << C;
  NS << "; assumes no other store writes bytes " << D.Lo << "-" << D.Hi - 1 << " of "
     << D.Symbol->name();
  Notes.push_back(Note);
  return true;
}

