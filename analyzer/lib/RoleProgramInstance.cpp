//===- RoleProgramInstance.cpp - role programs for concrete parameter values ------===//
//
// Unrolls every agent's program into straight-line concrete steps. Loops run their trip
// count; slots, parities, counts and thread-dependent ids become numbers; what does not
// evaluate (a leaf the instance gives no value, a division by zero) makes the whole system
// unknown with the reason, since exploring around it could pass a protocol it never ran.
//
//===----------------------------------------------------------------------------------===//
#include "InstanceFrames.h"
#include "InstanceParts.h"

#include "wsv/analyzer/RoleProgram.h"
#include "wsv/analyzer/Roles.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/models/NamedBarrier.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <mutex>
#include <map>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

using instance::Frame;
using instance::FrameCache;

unsigned arrayOffset(const Protocol &P, unsigned Array, bool Buffers) {
  unsigned Offset = 0;
  for (unsigned A = 0; A < Array; ++A)
    Offset += Buffers ? P.Buffers[A].Slots : P.Barriers[A].Slots;
  return Offset;
}

class Instantiation {
public:
  Instantiation(const RolePrograms &RP, const Instance &I, ConcreteSystem &Out)
      : RP(RP), P(*RP.P), I(I), Out(Out) {}

  void run() {
    Out.P = &P;
    Out.Programs = &RP;
    Out.ClusterSize = RP.ClusterSize;
    Out.BlockThreads = RP.BlockThreads;
    Out.GridCtas = gridCtas();
    Out.FirstCta = I.FirstCta;
    for (unsigned A = 0; A < P.Barriers.size(); ++A)
      for (unsigned S = 0; S < P.Barriers[A].Slots; ++S)
        for (unsigned C = 0; C < RP.ClusterSize; ++C)
          Out.Barriers.push_back({A, S, C});
    for (unsigned B = 0; B < P.Buffers.size(); ++B)
      for (unsigned S = 0; S < P.Buffers[B].Slots; ++S)
        for (unsigned C = 0; C < RP.ClusterSize; ++C)
          Out.Buffers.push_back({B, S, C});
    for (const auto &[Name, Value] : I.Params)
      Out.Assumptions.push_back(Name + " = " + std::to_string(Value));
    Out.Assumptions.push_back("one cluster of " + std::to_string(RP.ClusterSize) +
                              " CTA(s), %ctaid.x from " + std::to_string(I.FirstCta) +
                              ", %nctaid.x = " + std::to_string(gridCtas()));
    for (unsigned Pr = 0; Pr < RP.Programs.size() && Out.Unknown.empty(); ++Pr) {
      const RoleProgram &R = RP.Programs[Pr];
      for (unsigned C = 0; C < RP.ClusterSize && Out.Unknown.empty(); ++C)
        for (unsigned Copy = 0; Copy < R.Copies && Out.Unknown.empty(); ++Copy)
          agent(Pr, C, Copy);
    }
    if (Out.Unknown.empty()) {
      instance::startEpiloguesEarly(Out);
      instance::dropPrivateNamedBarriers(Out);
    }
    if (Unmatched)
      Out.Assumptions.push_back(std::to_string(Unmatched) +
                                " operand read(s) in no buffer: races on them are not checked");
    if (Matched)
      Out.Assumptions.push_back(std::to_string(Matched) +
                                " MMA operand address(es) matched to buffer slots by offset");
  }

private:
  uint64_t gridCtas() const { return I.GridCtas ? I.GridCtas : RP.ClusterSize; }

  void fail(const std::string &Why) {
    if (Out.Unknown.empty())
      Out.Unknown = Why;
  }

  std::optional<uint64_t> param(const Expr *Leaf) const {
    if (Leaf->payload() != 0)
      return std::nullopt;
    for (const auto &[Name, Value] : I.Params) {
      if (Name == Leaf->name())
        return Value;
      for (unsigned K = 0; K < P.ParamSymbols.size() && K < P.ParamNames.size(); ++K)
        if (P.ParamSymbols[K] == Leaf->name() && P.ParamNames[K] == Name)
          return Value;
    }
    return std::nullopt;
  }

  std::optional<uint64_t> special(SpecialRegister R, const Frame &F) const {
    uint64_t Cluster = RP.ClusterSize;
    switch (R) {
    case SpecialRegister::TidX: return F.Thread;
    case SpecialRegister::TidY:
    case SpecialRegister::TidZ:
    case SpecialRegister::CtaidY:
    case SpecialRegister::CtaidZ:
    case SpecialRegister::ClusterCtaidY:
    case SpecialRegister::ClusterCtaidZ:
    case SpecialRegister::ClusteridY:
    case SpecialRegister::ClusteridZ: return 0;
    case SpecialRegister::NtidX: return P.Launch.BlockX;
    case SpecialRegister::NtidY: return P.Launch.BlockY;
    case SpecialRegister::NtidZ: return P.Launch.BlockZ;
    case SpecialRegister::LaneId: return F.Thread % WarpSize;
    case SpecialRegister::WarpId: return F.Thread / WarpSize;
    case SpecialRegister::NWarpId: return std::nullopt;
    case SpecialRegister::CtaidX: return I.FirstCta + F.Cta;
    case SpecialRegister::NctaidX: return gridCtas();
    case SpecialRegister::NctaidY:
    case SpecialRegister::NctaidZ:
    case SpecialRegister::NclusteridY:
    case SpecialRegister::NclusteridZ:
    case SpecialRegister::ClusterNctaidY:
    case SpecialRegister::ClusterNctaidZ: return 1;
    case SpecialRegister::ClusterCtaRank:
    case SpecialRegister::ClusterCtaidX: return F.Cta;
    case SpecialRegister::ClusterNctaRank:
    case SpecialRegister::ClusterNctaidX: return Cluster;
    case SpecialRegister::ClusteridX: return (I.FirstCta + F.Cta) / Cluster;
    case SpecialRegister::NclusteridX: return gridCtas() / Cluster;
    }
    return std::nullopt;
  }

  /// The value of E in frame F; symbols read as 0 only when SymbolsAtZero (address matching).
  std::optional<uint64_t> eval(const Expr *E, const Frame &F, bool SymbolsAtZero = false) {
    if (!SymbolsAtZero)
      return Cache.eval(E, F, [&](const Expr *Leaf) { return leaf(Leaf, F, false); });
    return ExprContext::evaluate(
        E, [&](const Expr *Leaf) { return leaf(Leaf, F, SymbolsAtZero); });
  }

  std::optional<uint64_t> leaf(const Expr *Leaf, const Frame &F, bool SymbolsAtZero) const {
    {
      switch (Leaf->kind()) {
      case ExprKind::Constant: return Leaf->payload();
      case ExprKind::Param: return param(Leaf);
      case ExprKind::SpecialReg: return special(Leaf->specialRegister(), F);
      case ExprKind::IterationVar:
        for (const auto &[L, V] : F.Loops)
          if (L == Leaf->payload())
            return V;
        return std::nullopt;
      case ExprKind::Symbol:
        if (SymbolsAtZero)
          return 0;
        return std::nullopt;
      default: return std::nullopt;
      }
    }
  }

  /// E at the agent's first thread, where it evaluates and its last thread has the same
  /// value (Differs says when that is what failed).
  std::optional<uint64_t> uniform(const Expr *E, const Frame &F, bool &Differs) {
    Differs = false;
    std::optional<uint64_t> V = eval(E, F);
    if (V && Cache.threadDependent(E)) {
      Frame Last = F;
      Last.Thread = LastThread;
      Differs = eval(E, Last) != V;
    }
    return Differs ? std::nullopt : V;
  }

  /// A CTA-uniform or agent-uniform value (uniform); the instance fails without one.
  std::optional<uint64_t> value(const Expr *E, const Frame &F, const char *What) {
    if (!E) {
      fail(std::string(What) + " is missing");
      return std::nullopt;
    }
    bool Differs = false;
    std::optional<uint64_t> V = uniform(E, F, Differs);
    if (!V)
      fail(std::string(What) + " `" + P.exprString(E) + "` " +
           (Differs ? "differs between threads of one agent"
                    : "does not evaluate for this instance"));
    return V;
  }

  bool holds(const Expr *When, const Frame &F) {
    if (!When)
      return true;
    std::optional<uint64_t> V = value(When, F, "condition");
    return V && *V != 0;
  }

  std::optional<unsigned> threads(const ThreadCount &C, const Frame &F) {
    unsigned N = C.Fixed;
    for (const auto &[Cond, Count] : C.Conditional) {
      std::optional<uint64_t> V = value(Cond, F, "thread condition");
      if (!V)
        return std::nullopt;
      if (*V)
        N += Count;
    }
    return N;
  }

  std::optional<unsigned> barrier(unsigned Array, const Expr *SlotE, unsigned Cta,
                                  const Frame &F) {
    std::optional<uint64_t> Slot = value(SlotE, F, "barrier slot");
    if (!Slot)
      return std::nullopt;
    if (*Slot >= P.Barriers[Array].Slots || Cta >= RP.ClusterSize) {
      fail("barrier " + P.Barriers[Array].Name + "[" + std::to_string(*Slot) + "] in CTA " +
           std::to_string(Cta) + " is outside the barrier array or the cluster");
      return std::nullopt;
    }
    return Out.barrierIndex(Array, *Slot, Cta);
  }

  /// The buffer slot instance an operand names; nullopt when it is in no buffer.
  std::optional<unsigned> buffer(const SlotExpr &S, unsigned Cta, const Frame &F) {
    if (S.Array != NoIndex) {
      std::optional<uint64_t> Slot = value(S.Slot, F, "buffer slot");
      if (!Slot)
        return std::nullopt;
      if (*Slot >= P.Buffers[S.Array].Slots) {
        fail("buffer " + P.Buffers[S.Array].Name + " slot " + std::to_string(*Slot) +
             " is outside the buffer");
        return std::nullopt;
      }
      return bufferIndex(S.Array, *Slot, Cta);
    }
    // An operand address (a wgmma descriptor's start) that no buffer claimed: compare
    // offsets with every buffer based on a symbol it mentions, all symbols at 0.
    std::optional<uint64_t> Addr = eval(S.Address, F, /*SymbolsAtZero=*/true);
    if (Addr) {
      for (unsigned B = 0; B < P.Buffers.size(); ++B) {
        const Buffer &Buf = P.Buffers[B];
        if (!Buf.Base || Buf.Symbol.empty() ||
            !S.Address->mentions([&](const Expr *L) {
              return L->is(ExprKind::Symbol) && L->name() == Buf.Symbol;
            }))
          continue;
        std::optional<uint64_t> Base = eval(Buf.Base, F, true);
        if (!Base)
          continue;
        int64_t Off = static_cast<int64_t>(*Addr) - static_cast<int64_t>(*Base) - Buf.Offset;
        uint64_t Size = Buf.SlotBytes.value_or(Buf.Stride);
        if (Off < 0 || !Size)
          continue;
        uint64_t Slot = Buf.Stride ? Off / Buf.Stride : 0;
        uint64_t In = Buf.Stride ? Off % Buf.Stride : Off;
        if (Slot < Buf.Slots && In < Size) {
          ++Matched;
          return bufferIndex(B, Slot, Cta);
        }
      }
    }
    ++Unmatched;
    return std::nullopt;
  }

  unsigned bufferIndex(unsigned B, unsigned Slot, unsigned Cta) const {
    return (arrayOffset(P, B, true) + Slot) * RP.ClusterSize + Cta;
  }

  /// The CTAs a multicast reaches: the bits of Mask below the cluster size. A bit above it
  /// names no CTA (undefined behaviour): the step says so, and the others are reached.
  std::vector<unsigned> ctas(const Expr *Mask, unsigned Own, const Frame &F,
                             ConcreteStep &Step) {
    if (!Mask)
      return {Own};
    std::vector<unsigned> Out;
    if (std::optional<uint64_t> M = value(Mask, F, "multicast CTA mask")) {
      for (unsigned C = 0; C < 16; ++C)
        if (*M >> C & 1) {
          if (C >= RP.ClusterSize) {
            if (Step.Undefined.empty()) {
              Step.Undefined = "multicast mask " + std::to_string(*M) + " names CTA " +
                               std::to_string(C) + " outside the cluster of " +
                               std::to_string(RP.ClusterSize) + " (undefined behaviour)";
              Step.UndefinedCheck = "cluster-multicast-mask";
            }
            continue;
          }
          Out.push_back(C);
        }
    }
    return Out;
  }

  void agent(unsigned Program, unsigned Cta, unsigned Copy) {
    const RoleProgram &R = RP.Programs[Program];
    ConcreteAgent A;
    A.Program = Program;
    A.Cta = Cta;
    A.Copy = Copy;
    A.Place = R.Place;
    A.FirstThread = R.FirstThread + Copy * R.CopyStride;
    A.Threads = R.CopyThreads;
    // What a part of this agent shares with it (ConcreteAgent::After).
    const ConcreteAgent Shell = A;
    std::string Base = R.Name + (R.Copies > 1 ? "." + std::to_string(Copy) : std::string());
    A.Name = Base + "@cta" + std::to_string(Cta);
    LastThread = A.FirstThread + std::max(1u, A.Threads) - 1;
    ProbesRun = 0;
    Whole = agentThreads(R, A);
    Mask.clear();
    Fork.reset();
    Stopped = false;
    Emit = true;
    Frame F;
    F.Cta = Cta;
    F.Thread = A.FirstThread;
    if (holds(R.When, F))
      items(R, R.Body, F, A);
    if (!Fork || !Out.Unknown.empty()) {
      Out.Agents.push_back(std::move(A));
      return;
    }
    // The threads part: this agent ran up to the first iteration that not all of them run;
    // each part goes on from there on its own (ConcreteAgent::After).
    if (instance::inFlightAtEnd(A)) {
      fail(A.Name + ": its threads part at a loop while its asynchronous operations (wgmma, "
                    "bulk stores or tcgen05) may be in flight, which no part would wait for");
      Out.Agents.push_back(std::move(A));
      return;
    }
    A.Forked = true;
    unsigned Before = static_cast<unsigned>(Out.Agents.size());
    Out.Agents.push_back(std::move(A));
    ForkPoint Point = std::move(*Fork);
    for (const auto &[Trip, Threads] : Point.Parts) {
      ConcreteAgent Part = Shell;
      Part.After = Before;
      Part.Mask = Threads;
      Part.FirstThread = static_cast<unsigned>(Threads.find_first());
      Part.Threads = static_cast<unsigned>(Threads.count());
      Part.Name = Base + "[threads " + threadList(Threads) + "]@cta" + std::to_string(Cta);
      LastThread = static_cast<unsigned>(Threads.find_last());
      ProbesRun = 0; // a probe of the shared part sets no flag of this one
      Mask = Threads;
      PartTrip = Trip;
      Fork = Point; // where to start emitting
      Stopped = false;
      Emit = false;
      Frame PF;
      PF.Cta = Cta;
      PF.Thread = Part.FirstThread;
      items(R, R.Body, PF, Part);
      if (Emit == false && Out.Unknown.empty())
        fail(Part.Name + ": the loop where its threads part was not reached again");
      Out.Agents.push_back(std::move(Part));
    }
    Mask.clear();
    Fork.reset();
  }

  /// The threads an agent stands for: its range, less the threads its role does not hold.
  llvm::BitVector agentThreads(const RoleProgram &R, const ConcreteAgent &A) const {
    unsigned Size = std::max(RP.BlockThreads, LastThread + 1);
    llvm::BitVector T(Size);
    T.set(A.FirstThread, LastThread + 1);
    if (R.Place == Placement::Role && R.Role < P.Roles.size()) {
      llvm::BitVector Members = P.Roles[R.Role].Threads.members();
      Members.resize(Size);
      if (T.anyCommon(Members))
        T &= Members;
    }
    return T;
  }

  /// How many times loop L runs for thread T in frame F: Forever where it never ends;
  /// nullopt (and the instance fails) where that cannot be told.
  static constexpr uint64_t Forever = UINT64_MAX;
  std::optional<uint64_t> tripFor(const RoleLoop &L, Frame F, unsigned T) {
    F.Thread = T;
    if (L.Forever) {
      std::optional<uint64_t> V = eval(L.Forever, F);
      if (!V) {
        fail("whether the loop " + P.loopVar(L.Loop) + " ends does not evaluate for thread " +
             std::to_string(T));
        return std::nullopt;
      }
      if (*V)
        return Forever;
    }
    std::optional<uint64_t> V = eval(L.Trip, F);
    if (!V) {
      fail("trip count `" + P.exprString(L.Trip) + "` does not evaluate for thread " +
           std::to_string(T));
      return std::nullopt;
    }
    // The launch search checks the conditions that make the count exact, except those that
    // read the thread (a step of 0 for some): those hold here, for every thread that leaves.
    // A launch given as it is (Instance::CheckTripConditions) has all of them checked here,
    // at every entry, with the iteration numbers of the loops around.
    for (const auto &[Cond, Established] : RP.TripConditions[L.ProtocolLoop]) {
      bool Thread = L.Forever && Cache.threadDependent(Cond);
      if (Established || (!Thread && !I.CheckTripConditions))
        continue;
      if (std::optional<uint64_t> C = eval(Cond, F); !C || !*C) {
        fail("the loop " + P.loopVar(L.Loop) + " runs its closed-form trip count only when " +
             P.exprString(Cond) + ", which " + (C ? "fails" : "does not evaluate") +
             " for thread " + std::to_string(T));
        return std::nullopt;
      }
    }
    return V;
  }

  /// The trip count of L for the agent's threads; a fork (Fork, then the agent stops at
  /// iteration Fork->At) where they differ.
  std::optional<uint64_t> trip(const RoleLoop &L, const Frame &F) {
    bool PerThread = Cache.threadDependent(L.Trip) ||
                     (L.Forever && Cache.threadDependent(L.Forever));
    if (!PerThread)
      return tripFor(L, F, F.Thread);
    const llvm::BitVector &Threads = Mask.empty() ? Whole : Mask;
    std::map<uint64_t, llvm::BitVector> Parts;
    for (int T : Threads.set_bits()) {
      std::optional<uint64_t> V = tripFor(L, F, static_cast<unsigned>(T));
      if (!V)
        return std::nullopt;
      auto [It, New] = Parts.try_emplace(*V, Threads.size());
      It->second.set(T);
    }
    if (Parts.size() == 1)
      return Parts.begin()->first;
    if (!Mask.empty()) {
      fail("threads of one part of an agent part again at the loop " + P.loopVar(L.Loop) +
           " (ptx line " + std::to_string(P.Loops[L.ProtocolLoop].Where.PtxLine) + ")");
      return std::nullopt;
    }
    ForkPoint Point;
    Point.Loop = L.Loop;
    Point.Outer = F.Loops;
    Point.At = Parts.begin()->first;
    for (auto &[Trip, T] : Parts) {
      if (Trip != Forever)
        Point.Longest = std::max(Point.Longest, Trip);
      Point.Parts.push_back({Trip, std::move(T)});
    }
    Fork = std::move(Point);
    return Fork->At;
  }

  void items(const RoleProgram &R, const std::vector<RoleItem> &Items, Frame &F,
             ConcreteAgent &A) {
    for (const RoleItem &It : Items) {
      if (!Out.Unknown.empty() || Stopped)
        return;
      if (!It.IsLoop) {
        step(R, It.Index, F, A);
        continue;
      }
      const RoleLoop &L = R.Loops[It.Index];
      if (!L.Unknown.empty()) {
        fail(R.Name + ": " + L.Unknown);
        return;
      }
      if (!holds(L.When, F))
        continue;
      // A part replays the shared run without steps up to where its threads parted, and
      // from there runs its own count.
      bool PartsHere = !Emit && Fork && L.Loop == Fork->Loop && F.Loops == Fork->Outer;
      bool WasForked = Fork.has_value();
      std::optional<uint64_t> Trip = PartsHere ? std::optional<uint64_t>(PartTrip) : trip(L, F);
      if (!Trip)
        return;
      // The shared run stops after the iterations that all of its threads run.
      bool ForksHere = !WasForked && Fork.has_value();
      uint64_t From = PartsHere ? Fork->At : 0;
      bool Endless = *Trip == Forever;
      // Threads that never leave run one pass more than the longest of the others, which
      // is where they show what they wait for; then they stop at a loop-forever step.
      uint64_t To = Endless ? std::max(From, Fork ? Fork->Longest : 0) + 1 : *Trip;
      if (PartsHere)
        Emit = true;
      if (To > I.MaxSteps) {
        fail("loop " + P.loopVar(L.Loop) + " runs " + std::to_string(To) +
             " times, more than the exploration bound");
        return;
      }
      F.Loops.push_back({L.Loop, 0});
      for (uint64_t K = From; K < To && Out.Unknown.empty() && !Stopped; ++K) {
        F.Loops.back().second = K;
        items(R, L.Body, F, A);
      }
      if (ForksHere)
        Stopped = true;
      if (Endless && !Stopped && Out.Unknown.empty()) {
        ConcreteStep C;
        C.Kind = StepKind::Diverge;
        C.Event = instance::firstEvent(R, L.Body);
        C.Iterations.assign(F.Loops.begin(), F.Loops.end());
        C.Reason = "the loop " + P.loopVar(L.Loop) + " (ptx line " +
                   std::to_string(P.Loops[L.ProtocolLoop].Where.PtxLine) +
                   ") never ends for these threads: its counter does not move for them";
        if (C.Event == NoIndex)
          fail(C.Reason);
        A.Steps.push_back(std::move(C));
        Stopped = true;
      }
      F.Loops.pop_back();
    }
  }

  /// The threads that must run a collective step together (collectiveUnit of its event).
  unsigned collectiveUnit(const RoleStep &S) const {
    return wsv::analyzer::collectiveUnit(P.Events[S.Event]);
  }

  /// Why a collective step is undefined behaviour (partialCollective), once per event.
  const std::string &partialCollective(const RoleStep &S) {
    auto [It, New] = Partial.try_emplace(S.Event);
    if (New)
      It->second = wsv::analyzer::partialCollective(P.Events[S.Event], collectiveUnit(S));
    return It->second;
  }
  std::map<unsigned, std::string> Partial;

  /// The agent flag a probe step of program R sets: its rank among R's probe steps.
  int8_t probeFlag(const RoleProgram &R, const void *Site) const {
    int Flag = 0;
    for (const RoleStep &S : R.Steps)
      if (S.Kind == StepKind::Probe) {
        if (&P.Analysis->cfg().inst(P.Events[S.Event].Inst) == Site)
          return static_cast<int8_t>(Flag);
        ++Flag;
      }
    return -1;
  }

  static constexpr int SkipAlways = -2;

  /// How a wait with a skip condition runs in frame F: SkipAlways, -1 (always waits), or
  /// the flag of the probe whose success skips it; nullopt when that cannot be told.
  std::optional<int> skipFlag(const RoleProgram &R, const RoleStep &S, const Frame &F) {
    std::optional<uint64_t> Iteration;
    for (const auto &[L, V] : F.Loops)
      if (L == S.SkipLoop)
        Iteration = V;
    if (!Iteration) {
      fail("a wait's skip condition reads a loop it is not in");
      return std::nullopt;
    }
    const Expr *V = *Iteration == 0 ? S.SkipEntry : S.SkipLatch;
    llvm::SmallVector<const Expr *, 2> Probes;
    V->mentions([&](const Expr *L) {
      if (L->is(ExprKind::Opaque) && !llvm::is_contained(Probes, L))
        Probes.push_back(L);
      return false;
    });
    ExprContext &Ctx = P.Analysis->context();
    auto Constant = [&](const Expr *E) -> std::optional<int> {
      std::optional<uint64_t> X = value(E, F, "skip condition");
      if (!X)
        return std::nullopt;
      return *X ? SkipAlways : -1;
    };
    if (Probes.empty())
      return Constant(V);
    if (Probes.size() > 1) {
      fail("a wait's skip condition reads two probes");
      return std::nullopt;
    }
    const Expr *L = Probes.front();
    const Expr *IfFailed, *IfPassed;
    {
      // Instantiations may run on several threads (exploreAllTrips builds its classes at
      // once); the expression context is shared and this is the only place one adds to it.
      static std::mutex ContextLock;
      std::lock_guard<std::mutex> Hold(ContextLock);
      IfFailed = Ctx.substitute(V, L, Ctx.constant(0, L->width()));
      IfPassed = Ctx.substitute(V, L, Ctx.constant(1, L->width()));
    }
    std::optional<int> Failed = Constant(IfFailed);
    std::optional<int> Passed = Constant(IfPassed);
    if (!Failed || !Passed)
      return std::nullopt;
    if (*Failed == *Passed)
      return Failed;
    int8_t Flag = probeFlag(R, L->site());
    if (*Passed != SkipAlways || Flag < 0 || !(ProbesRun >> Flag & 1)) {
      fail("a wait is skipped on a probe's result in a way the model does not run");
      return std::nullopt;
    }
    return Flag;
  }

  void step(const RoleProgram &R, unsigned Index, const Frame &F, ConcreteAgent &A) {
    if (!Emit)
      return;
    const RoleStep &S = R.Steps[Index];
    std::optional<unsigned> N =
        Mask.empty() || !S.Unknown.empty()
            ? threads(S.Threads, F)
            : threads(countIn(P.Events[S.Event].Threads, Mask), F);
    if (!N || !*N || !holds(S.When, F))
      return;
    if (!Mask.empty() && S.Unknown.empty())
      if (std::string Why = instance::splitUnit(P, S, collectiveUnit(S), Mask, Whole);
          !Why.empty()) {
        // What follows is not modeled; a search that ends with the part here is unknown.
        ConcreteStep C;
        C.Kind = StepKind::Unknown;
        C.RoleStep = Index;
        C.Event = S.Event;
        C.Iterations.assign(F.Loops.begin(), F.Loops.end());
        C.Reason = std::move(Why);
        A.Steps.push_back(std::move(C));
        Stopped = true;
        return;
      }
    int Skip = -1;
    if (S.Kind == StepKind::Wait && S.SkipEntry && S.Unknown.empty()) {
      std::optional<int> K = skipFlag(R, S, F);
      if (!K || *K == SkipAlways)
        return;
      Skip = *K;
    }
    if (!S.Unknown.empty()) {
      const Event &E = P.Events[S.Event];
      fail(R.Name + ": " + S.Unknown + " (ptx line " + std::to_string(E.Where.PtxLine) + ")");
      return;
    }
    if (++TotalSteps > I.MaxSteps) {
      fail("more than " + std::to_string(I.MaxSteps) + " steps for this instance");
      return;
    }
    ConcreteStep C;
    C.Kind = S.Kind;
    C.RoleStep = Index;
    C.Event = S.Event;
    C.Undefined = partialCollective(S);
    if (!C.Undefined.empty())
      C.UndefinedCheck = S.Kind == StepKind::Setmaxnreg ? "setmaxnreg-nonuniform"
                         : S.Kind == StepKind::Alloc || S.Kind == StepKind::Dealloc
                             ? "tcgen05-alloc-lane-guard"
                             : "aligned-divergent";
    C.Iterations.assign(F.Loops.begin(), F.Loops.end());
    auto Num = [&](const Expr *E, const char *What, uint64_t Default) -> uint64_t {
      if (!E)
        return Default;
      return value(E, F, What).value_or(0);
    };
    // The TMEM columns of an MMA or a tcgen05.ld: every column where they are not known, or
    // differ between the agent's threads (the column, not the lane: the lane is in the high
    // half of the address, which TmemColumn leaves out).
    auto Columns = [&] {
      C.TmemFirst = 0;
      C.TmemEnd = 1u << 16;
      C.TmemPair = S.TmemPair;
      bool Differs = false;
      if (!S.TmemColumn || !S.TmemColumns)
        return;
      if (std::optional<uint64_t> V = uniform(S.TmemColumn, F, Differs)) {
        C.TmemFirst = static_cast<uint32_t>(*V);
        C.TmemEnd = static_cast<uint32_t>(*V + S.TmemColumns);
      }
    };
    unsigned OwnCta = A.Cta;
    if (S.Barrier.Array != NoIndex) {
      unsigned Cta = OwnCta;
      if (S.Barrier.PeerRank)
        Cta = static_cast<unsigned>(Num(S.Barrier.PeerRank, "peer CTA rank", OwnCta));
      // mapa to a rank outside the cluster: no barrier there (undefined behaviour).
      if (Cta >= RP.ClusterSize) {
        C.Undefined = "the barrier of CTA rank " + std::to_string(Cta) + " (mapa) is outside "
                      "the cluster of " + std::to_string(RP.ClusterSize) +
                      " (undefined behaviour)";
        C.UndefinedCheck = "cluster-multicast-mask";
      } else if (std::optional<unsigned> B = barrier(S.Barrier.Array, S.Barrier.Slot, Cta, F))
        C.Barrier = *B;
    }
    switch (S.Kind) {
    case StepKind::Init:
      C.Count = static_cast<uint32_t>(Num(S.Count, "init count", 1));
      break;
    case StepKind::Arrive:
      C.Count = static_cast<uint32_t>(*N * Num(S.Count, "arrival count", 1));
      C.TxBytes = static_cast<uint32_t>(*N * Num(S.TxBytes, "expect_tx bytes", 0));
      break;
    case StepKind::ExpectTx:
      C.TxBytes = static_cast<uint32_t>(*N * Num(S.TxBytes, "expect_tx bytes", 0));
      break;
    case StepKind::Wait:
      C.Parity = static_cast<uint32_t>(Num(S.Parity, "wait parity", 0) & 1);
      C.Flag = static_cast<int8_t>(Skip);
      break;
    case StepKind::Probe:
      C.Parity = static_cast<uint32_t>(Num(S.Parity, "probe parity", 0) & 1);
      C.Flag = probeFlag(R, &P.Analysis->cfg().inst(P.Events[S.Event].Inst));
      if (C.Flag < 0 || C.Flag >= 32)
        fail("more probes in one program than the model's flags");
      else
        ProbesRun |= uint32_t(1) << C.Flag;
      break;
    case StepKind::AsyncLoad:
      C.Count = *N; // issuing threads: each issues its own copy
      C.Queue = S.Queue; // CpAsync: an sm_80 cp.async, in the thread's cp.async groups
      C.TxBytes = static_cast<uint32_t>(Num(S.Bytes, "copy bytes", 0));
      // Without multicast the copy lands in the issuing CTA and signals the barrier operand
      // (a peer's with .cta_group::2); with it, each CTA of the mask gets the data and the
      // barrier at the same offset.
      if (!S.CtaMask && C.Barrier != NoIndex)
        C.Targets.push_back(C.Barrier);
      for (unsigned Cta : ctas(S.CtaMask, OwnCta, F, C)) {
        // (A cp.async has no barrier, and its kernel may have none at all.)
        if (S.CtaMask && C.Barrier != NoIndex) {
          const BarrierInstance &Own = Out.Barriers[C.Barrier];
          C.Targets.push_back(Out.barrierIndex(Own.Array, Own.Slot, Cta));
        }
        for (const SlotExpr &W : S.Writes)
          if (std::optional<unsigned> B = buffer(W, Cta, F))
            C.Writes.push_back(*B);
      }
      break;
    case StepKind::MmaCommit:
      C.Count = *N;
      C.Queue = S.Queue;
      if (C.Barrier != NoIndex && !S.CtaMask) {
        C.Targets.push_back(C.Barrier);
      } else if (C.Barrier != NoIndex) {
        const BarrierInstance Own = Out.Barriers[C.Barrier];
        for (unsigned Cta : ctas(S.CtaMask, OwnCta, F, C))
          C.Targets.push_back(Out.barrierIndex(Own.Array, Own.Slot, Cta));
      }
      break;
    case StepKind::MmaIssue:
    case StepKind::AsyncStore:
    case StepKind::Read:
      if (S.Kind == StepKind::MmaIssue && S.Queue == AsyncQueue::Tcgen05)
        Columns();
      C.Accumulators = P.Events[S.Event].Accumulators;
      C.Queue = S.Queue;
      C.Count = *N;
      for (const SlotExpr &Rd : S.Reads)
        if (std::optional<unsigned> B = buffer(Rd, OwnCta, F))
          C.Reads.push_back(*B);
      break;
    case StepKind::Write:
      for (const SlotExpr &W : S.Writes)
        if (std::optional<unsigned> B = buffer(W, OwnCta, F))
          C.Writes.push_back(*B);
      break;
    case StepKind::GroupCommit:
      C.Queue = S.Queue;
      break;
    case StepKind::GroupWait:
      C.Queue = S.Queue;
      C.ReadOnly = S.ReadOnly;
      C.WaitAll = S.WaitAll;
      C.WaitN = static_cast<uint32_t>(Num(S.WaitN, "wait_group count", 0));
      break;
    case StepKind::NamedSync:
    case StepKind::NamedArrive:
      C.NamedId = static_cast<uint32_t>(Num(S.NamedId, "named barrier id", 0));
      C.Count = static_cast<uint32_t>(Num(S.NamedThreads, "named barrier threads",
                                          P.Launch.threads()));
      C.Arriving = (*N + WarpSize - 1) / WarpSize * WarpSize;
      break;
    case StepKind::ClusterArrive:
    case StepKind::ClusterWait:
      C.Count = RP.ClusterSize * P.Launch.threads();
      C.Arriving = *N;
      break;
    case StepKind::Alloc:
    case StepKind::Dealloc:
      C.Columns = static_cast<uint32_t>(Num(S.Columns, "TMEM columns", 0));
      break;
    case StepKind::AccumulatorRead:
      C.Accumulators = P.Events[S.Event].Accumulators;
      break;
    case StepKind::TmemRead:
    case StepKind::TmemWrite:
      Columns();
      break;
    case StepKind::TmemWait:
    case StepKind::TmemWriteWait:
    case StepKind::ProxyFence:
    case StepKind::Inval:
    case StepKind::BarrierStore:
    case StepKind::InitFence:
    case StepKind::Setmaxnreg:
    case StepKind::Exit:
    case StepKind::Diverge:
    case StepKind::Unknown:
      break;
    }
    if (R.Copies > 1)
      for (const std::vector<SlotExpr> *L : {&S.Reads, &S.Writes})
        for (const SlotExpr &X : *L)
          C.PerCopy |= X.PerThread;
    instance::appendStep(A, std::move(C));
  }

  const RolePrograms &RP;
  const Protocol &P;
  const Instance &I;
  ConcreteSystem &Out;
  FrameCache Cache;
  unsigned LastThread = 0;
  /// Where the agent's threads part (ConcreteAgent::After): the loop instance (its loop and
  /// the iterations of the loops around it), the first iteration not all of them run, and
  /// each part's trip count (Forever for threads that never leave) with its threads.
  struct ForkPoint {
    LoopId Loop = NoIndex;
    llvm::SmallVector<std::pair<LoopId, uint64_t>, 4> Outer;
    uint64_t At = 0;
    uint64_t Longest = 0; ///< the largest finite trip count of a part
    std::vector<std::pair<uint64_t, llvm::BitVector>> Parts;
  };
  std::optional<ForkPoint> Fork;
  /// The agent's threads; a part's threads (empty while the agent is not a part).
  llvm::BitVector Whole, Mask;
  uint64_t PartTrip = 0;
  /// Stopped: the agent's steps end here (the shared run at its fork, a part at a step the
  /// model cannot run for it). Emit: steps are kept (a part's replay of the shared run
  /// keeps none).
  bool Stopped = false, Emit = true;
  /// Probe flags the agent being unrolled has set so far (a wait may read only those).
  uint32_t ProbesRun = 0;
  uint64_t TotalSteps = 0;
  unsigned Matched = 0, Unmatched = 0;
};

} // namespace

unsigned ConcreteSystem::barrierIndex(unsigned Array, unsigned Slot, unsigned Cta) const {
  return (arrayOffset(*P, Array, false) + Slot) * ClusterSize + Cta;
}

std::string ConcreteSystem::barrierName(unsigned Instance) const {
  const BarrierInstance &B = Barriers[Instance];
  const BarrierArray &A = P->Barriers[B.Array];
  std::string S = A.Name;
  if (A.Slots > 1)
    S += "[" + std::to_string(B.Slot) + "]";
  if (ClusterSize > 1)
    S += "@cta" + std::to_string(B.Cta);
  return S;
}

std::string ConcreteSystem::bufferName(unsigned Instance) const {
  const BufferInstance &B = Buffers[Instance];
  const Buffer &Buf = P->Buffers[B.Buffer];
  std::string S = Buf.Name;
  if (Buf.Slots > 1)
    S += "[" + std::to_string(B.Slot) + "]";
  if (ClusterSize > 1)
    S += "@cta" + std::to_string(B.Cta);
  return S;
}

ConcreteSystem wsv::analyzer::instantiate(const RolePrograms &Programs, const Instance &I) {
  ConcreteSystem Out;
  Instantiation(Programs, I, Out).run();
  return Out;
}
