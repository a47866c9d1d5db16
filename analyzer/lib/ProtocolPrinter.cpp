//===- ProtocolPrinter.cpp - the protocol as text ---------------------------------===//
#include "wsv/analyzer/ProtocolPrinter.h"

#include "wsv/analyzer/Roles.h"

#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

std::string bytes(const Protocol &P, const ProtocolValue &V) {
  if (V.known())
    return P.exprString(V.E) + " B";
  return formatValue(P, V);
}

std::string copyBytes(const Protocol &P, const Event &E) {
  switch (E.BytesFrom) {
  case BytesOrigin::TensorBox:
    return bytes(P, E.Bytes) + " (tensor box)";
  case BytesOrigin::AllocationBound:
    return "at most " + bytes(P, E.Bytes) +
           (slotBounded(P, E) ? " (the slot; the box is not known)"
                              : " (up to the barriers after its buffer; the box is not known)");
  case BytesOrigin::BarrierExpect:
    return bytes(P, E.Bytes) + " (what its barrier expects; the box is not known)";
  case BytesOrigin::Unknown:
    return "unknown bytes (" + E.Bytes.Unknown + ")";
  case BytesOrigin::None:
    return "";
  default:
    return bytes(P, E.Bytes);
  }
}

/// `256 TMEM columns from c` (c the first column, the address tcgen05.alloc wrote counted
/// as 0; in parentheses when it is more than one term), or `TMEM columns not known`.
std::string tmemColumns(const Protocol &P, const Event &E) {
  if (!E.TmemColumn.known() || !E.TmemColumns)
    return "TMEM columns not known";
  std::string From = P.exprString(E.TmemColumn.E);
  if (From.find(' ') != std::string::npos)
    From = "(" + From + ")";
  return std::to_string(E.TmemColumns) + " TMEM columns from " + From;
}

std::string multicast(const Protocol &P, const Event &E) {
  std::string Out;
  if (E.CtaGroup)
    Out += " cta_group::" + std::to_string(E.CtaGroup);
  if (E.Multicast) {
    Out += " multicast to CTAs " + formatCtaMask(P, E.CtaMask);
  }
  return Out;
}

bool sameThreads(const ThreadSet &A, const ThreadSet &B) {
  if (A.isUnknown() || B.isUnknown() || !A.conditional().empty() || !B.conditional().empty())
    return false;
  if (A.members() != B.members() || A.elected().size() != B.elected().size())
    return false;
  for (unsigned I = 0; I < A.elected().size(); ++I)
    if (A.elected()[I].Warps != B.elected()[I].Warps ||
        A.elected()[I].Excluded != B.elected()[I].Excluded)
      return false;
  return true;
}

/// The accumulators of a bit set: `0` or `0, 1` (numbered by the destination vectors of the
/// function's wgmma instructions, in program order).
std::string accumulatorSet(uint32_t Bits) {
  std::string Out;
  for (unsigned B = 0; B < 32; ++B)
    if (Bits >> B & 1)
      Out += (Out.empty() ? "" : ", ") + std::to_string(B);
  return Out;
}

std::string countOf(const ThreadSet &S) {
  if (std::optional<unsigned> N = S.count())
    return std::to_string(*N) + (*N == 1 ? " thread" : " threads");
  return "threads not counted";
}

class TextPrinter {
public:
  TextPrinter(const Protocol &P, llvm::raw_ostream &OS) : P(P), OS(OS) {}
  void print();

private:
  void barriers();
  void buffers();
  void items(const std::vector<ProtocolItem> &Items, unsigned Indent, const Role *In);
  std::string who(const Event &E, const Role *In);

  const Protocol &P;
  llvm::raw_ostream &OS;
  std::vector<const ProtocolLoop *> Stack;
};

std::string TextPrinter::who(const Event &E, const Role *In) {
  if (In && (sameThreads(E.Threads, In->Threads) || sameThreads(E.Threads, In->Active)))
    return "";
  return describeThreadSet(E.Threads) + ": ";
}

void TextPrinter::items(const std::vector<ProtocolItem> &Items, unsigned Indent,
                        const Role *In) {
  std::string Pad(Indent, ' ');
  for (unsigned K = 0; K < Items.size();) {
    const ProtocolItem &I = Items[K];
    if (I.isLoop()) {
      const ProtocolLoop &L = P.Loops[I.Index];
      OS << Pad << formatLoop(P, L);
      if (L.When.known())
        OS << " when " << formatCondition(P, L.When.E);
      OS << "  # " << formatSource(L.Where) << '\n';
      Stack.push_back(&L);
      items(L.Body, Indent + 2, In);
      Stack.pop_back();
      ++K;
      continue;
    }
    // Consecutive events that read the same (eight wgmma of one k-tile) print once.
    auto Line = [&](const Event &E) {
      std::string S = who(E, In) + formatEvent(P, E, Stack);
      if (E.When.known())
        S += " if " + formatCondition(P, E.When.E);
      return S;
    };
    const Event &E = P.Events[I.Index];
    std::string Text = Line(E);
    unsigned N = 1;
    while (K + N < Items.size() && Items[K + N].isEvent() &&
           Line(P.Events[Items[K + N].Index]) == Text)
      ++N;
    OS << Pad << (N > 1 ? std::to_string(N) + "x " : "") << Text << "  # "
       << formatSource(E.Where) << '\n';
    K += N;
  }
}

void TextPrinter::barriers() {
  if (P.Barriers.empty())
    return;
  OS << "barriers\n";
  // Who does what on each array, in the words of the events.
  std::vector<std::vector<std::string>> Uses(P.Barriers.size());
  auto Note = [&](const std::vector<ProtocolItem> &Items, const std::string &Who) {
    P.forEachEvent(Items, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
      if (!E.Barrier.resolved() || E.Kind == EventKind::Init)
        return;
      std::string Use = Who + " " +
                        (E.Kind == EventKind::AsyncLoad ? std::string("complete_tx")
                                                        : std::string(toString(E.Kind)));
      auto &U = Uses[E.Barrier.Array];
      if (std::find(U.begin(), U.end(), Use) == U.end())
        U.push_back(Use);
    });
  };
  Note(P.Prologue, "prologue");
  for (const Role &R : P.Roles)
    Note(R.Body, R.Name);
  Note(P.Epilogue, "epilogue");
  for (unsigned A = 0; A < P.Barriers.size(); ++A) {
    const BarrierArray &B = P.Barriers[A];
    OS << "  " << B.Name;
    if (B.Slots > 1)
      OS << "[" << B.Slots << "]";
    OS << " at " << (B.Base ? P.exprString(B.Base) : std::string("?"));
    if (B.Offset)
      OS << (B.Offset > 0 ? " + " : " - ") << (B.Offset > 0 ? B.Offset : -B.Offset);
    if (B.Slots > 1 && B.Stride != 8)
      OS << " stride " << B.Stride;
    // The init counts, once when every slot has the same.
    std::set<std::string> Counts;
    for (const ProtocolValue &C : B.InitCounts)
      Counts.insert(formatValue(P, C));
    OS << ": init ";
    if (Counts.size() == 1)
      OS << *Counts.begin();
    else
      for (unsigned S = 0; S < B.InitCounts.size(); ++S)
        OS << (S ? ", " : "") << "[" << S << "] " << formatValue(P, B.InitCounts[S]);
    if (!B.InitEvents.empty())
      OS << " by " << describeThreadSet(P.Events[B.InitEvents.front()].Threads);
    if (!Uses[A].empty()) {
      OS << "; ";
      for (unsigned U = 0; U < Uses[A].size(); ++U)
        OS << (U ? ", " : "") << Uses[A][U];
    }
    OS << '\n';
  }
}

void TextPrinter::buffers() {
  if (P.Buffers.empty())
    return;
  OS << "buffers\n";
  for (const Buffer &B : P.Buffers) {
    OS << "  " << B.Name;
    if (B.Slots > 1)
      OS << "[" << B.Slots << "]";
    OS << " at " << P.exprString(B.Base);
    if (B.Offset)
      OS << " + " << B.Offset;
    if (B.Slots > 1)
      OS << " stride " << B.Stride;
    if (B.SlotBytes)
      OS << ", " << *B.SlotBytes << " B per slot";
    OS << '\n';
  }
}

void TextPrinter::print() {
  OS << "kernel " << P.Kernel << ": " << P.Launch.threads() << " threads (" << P.LaunchFrom
     << ")";
  if (P.Launch.ClusterSize > 1)
    OS << ", clusters of " << P.Launch.ClusterSize << " CTAs"
       << (P.ClusterFrom == ".reqnctapercluster" ? "" : " (" + P.ClusterFrom + ")");
  OS << '\n';
  if (P.SharedNames && !P.SharedNames->named().empty()) {
    OS << "terms named in the long expressions below\n";
    for (const Expr *N : P.SharedNames->named())
      OS << "  " << P.SharedNames->nameOf(N) << " = " << P.namedTermDefinition(N) << '\n';
  }
  if (P.Events.empty()) {
    OS << "no synchronization\n";
  } else {
    barriers();
    buffers();
    if (!P.Prologue.empty()) {
      OS << "prologue\n";
      items(P.Prologue, 2, nullptr);
    }
    for (const Role &R : P.Roles) {
      OS << formatRoleHeader(P, R) << '\n';
      items(R.Body, 2, &R);
    }
    if (!P.Epilogue.empty()) {
      OS << "epilogue\n";
      items(P.Epilogue, 2, nullptr);
    }
  }
  for (const ProtocolNote &N : P.Notes)
    OS << "note: " << N.Message << '\n';
}

} // namespace

std::string wsv::analyzer::formatSource(const SourceRef &S) {
  std::string Out = "ptx " + std::to_string(S.PtxLine);
  if (const CudaFrame *F = S.kernelFrame())
    Out += ", " + llvm::sys::path::filename(F->File).str() + ":" + std::to_string(F->Line);
  return Out;
}

std::string wsv::analyzer::formatLoop(const Protocol &P, const ProtocolLoop &L) {
  std::string Out = "loop " + P.loopVar(L.Loop);
  if (!L.Trip.known())
    return Out + " (trip count unknown: " + L.Trip.Unknown + ")";
  Out += " in [0, " + P.exprString(simplifyInvariants(P, L.Trip.E, L.When.E)) + ")";
  std::string Needs;
  for (const auto &[C, Discharged] : L.TripConditions)
    if (!Discharged)
      Needs += (Needs.empty() ? "" : " && ") + P.exprString(C);
  if (!Needs.empty())
    Out += " (exact if " + Needs + ")";
  return Out;
}

std::string wsv::analyzer::formatRoleHeader(const Protocol &P, const Role &R) {
  std::string Out = "role " + R.Name + " = ";
  if (R.Threads.isUnknown())
    return Out + describeThreadSet(R.Threads);
  Out += describeThreads(R.Threads.members(), P.Launch.threads()) + ", " + countOf(R.Threads);
  if (!sameThreads(R.Active, R.Threads)) {
    if (R.Active.members().none() && R.Active.elected().empty())
      Out += "; no work of its own";
    else
      Out += "; its work: " + describeThreadSet(R.Active) + ", " + countOf(R.Active);
  }
  if (R.When.known())
    Out += "; when " + P.exprString(R.When.E);
  return Out;
}

std::string wsv::analyzer::formatEvent(const Protocol &P, const Event &E,
                                       llvm::ArrayRef<const ProtocolLoop *> Loops) {
  auto Bar = [&] { return formatBarrier(P, E.Barrier, Loops); };
  auto Count = [&](const char *Word) -> std::string {
    if (E.Count.constant() == 1u)
      return "";
    return std::string(" ") + Word + " " + formatValue(P, E.Count);
  };
  switch (E.Kind) {
  case EventKind::Init:
    return "init " + Bar() + " count " + formatValue(P, E.Count);
  case EventKind::Inval:
    return "inval " + Bar();
  case EventKind::Arrive:
    return std::string("arrive") + (E.Detail.empty() ? "" : "." + E.Detail) + " " + Bar() +
           Count("count");
  case EventKind::ArriveExpectTx:
    return "arrive.expect_tx " + Bar() + " " + bytes(P, E.TxBytes);
  case EventKind::ExpectTx:
    return "expect_tx " + Bar() + " " + bytes(P, E.TxBytes);
  case EventKind::CompleteTx:
    return "complete_tx " + Bar() + " " + bytes(P, E.TxBytes);
  case EventKind::Wait:
    return "wait " + Bar() + " parity " + formatParity(P, E, Loops);
  case EventKind::Probe:
    return "try_wait " + Bar() + " parity " + formatParity(P, E, Loops) +
           (E.FastPath ? " (once: the fast path of the wait after it)" : " (once, result kept)");
  case EventKind::AsyncLoad: {
    std::string Out = (E.Sync == models::SyncKind::BulkTensorLoad ? "TMA load " : "copy ") +
                      (E.Detail.empty() ? "" : E.Detail + " ") + formatBuffer(P, E.Dst, Loops) +
                      " " + copyBytes(P, E);
    if (E.Barrier.present())
      Out += " completes " + Bar();
    return Out + multicast(P, E);
  }
  case EventKind::AsyncStore:
    return (E.Sync == models::SyncKind::BulkTensorStore ? "TMA store " : "bulk store ") +
           (E.Detail.empty() ? "" : E.Detail + " ") + "from " + formatBuffer(P, E.Src, Loops) +
           " " + copyBytes(P, E);
  case EventKind::AsyncCopy:
    return "cp.async to " + formatBuffer(P, E.Dst, Loops);
  case EventKind::CpAsyncArrive:
    return "cp.async.mbarrier.arrive" + (E.Detail.empty() ? "" : "." + E.Detail) + " " + Bar();
  case EventKind::MmaCommit:
    return "tcgen05.commit " + Bar() + multicast(P, E);
  case EventKind::Mma: {
    std::string Out = E.Detail;
    if (E.CtaGroup)
      Out += " cta_group::" + std::to_string(E.CtaGroup);
    for (unsigned R = 0; R < E.Reads.size(); ++R)
      Out += (R ? ", " : " reads ") + formatBuffer(P, E.Reads[R], Loops);
    if (E.Sync == models::SyncKind::Tcgen05Mma)
      Out += " writes " + tmemColumns(P, E);
    return Out;
  }
  case EventKind::WgmmaFence:
    return "wgmma.fence";
  case EventKind::GroupCommit:
    return "commit_group " + E.Detail;
  case EventKind::GroupWait:
    return std::string("wait_group") + (E.ReadOnly ? ".read " : " ") + E.Detail + " " +
           formatValue(P, E.WaitN);
  case EventKind::TmemLoad:
    return "tcgen05.ld of " + tmemColumns(P, E);
  case EventKind::TmemStore:
    return E.Detail == "st" ? "tcgen05.st of " + tmemColumns(P, E) : "tcgen05." + E.Detail;
  case EventKind::TmemWait:
    return "tcgen05.wait::" + E.Detail;
  case EventKind::SmemRead:
    return llvm::StringRef(E.Opcode).split('.').first.str() + " " + formatBuffer(P, E.Src, Loops);
  case EventKind::SmemWrite:
    return llvm::StringRef(E.Opcode).split('.').first.str() + " " + formatBuffer(P, E.Dst, Loops);
  case EventKind::AccumulatorRead:
    return llvm::StringRef(E.Opcode).split('.').first.str() + " reads wgmma accumulators " +
           accumulatorSet(E.Accumulators);
  case EventKind::NamedBarrier: {
    std::string Out = "bar." + E.Detail + " " + formatValue(P, E.Named.Id);
    if (E.Named.Threads.absent())
      return Out + " (all threads)";
    return Out + ", " + formatValue(P, E.Named.Threads);
  }
  case EventKind::WarpSync:
    return "bar.warp.sync";
  case EventKind::ClusterArrive:
    return "barrier.cluster.arrive";
  case EventKind::ClusterWait:
    return "barrier.cluster.wait";
  case EventKind::Fence:
    return E.Detail;
  case EventKind::Alloc:
    return "tcgen05.alloc " + formatValue(P, E.Columns) + " columns" + multicast(P, E);
  case EventKind::Dealloc:
    return "tcgen05.dealloc " + formatValue(P, E.Columns) + " columns" + multicast(P, E);
  case EventKind::Relinquish:
    return "tcgen05.relinquish_alloc_permit";
  case EventKind::Setmaxnreg:
    return std::string("setmaxnreg.") + (E.Increase ? "inc " : "dec ") +
           formatValue(P, E.RegCount);
  case EventKind::TryCancel:
    return "clusterlaunchcontrol.try_cancel completes " + Bar() + " " + bytes(P, E.Bytes);
  case EventKind::Exit:
    return E.Detail + " (leaves the kernel)";
  case EventKind::Unknown:
    return "unknown " + E.Opcode + " (" + E.Reason + ")";
  }
  return E.Opcode;
}

void wsv::analyzer::printProtocol(const Protocol &P, llvm::raw_ostream &OS) {
  // Long expressions recur across a listing (a stream-K schedule's terms in every stage,
  // parity and trip count): a first pass counts their subterms, the second prints the
  // recurring ones by name, defined once at the top.
  ExprNames Names;
  P.SharedNames = &Names;
  llvm::raw_null_ostream Counting;
  TextPrinter(P, Counting).print();
  Names.choose();
  TextPrinter(P, OS).print();
  P.SharedNames = nullptr;
}
