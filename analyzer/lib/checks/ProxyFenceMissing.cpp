//===- ProxyFenceMissing.cpp - generic-proxy writes read by the async proxy unfenced --===//
//
// st.shared and stmatrix write through the generic proxy; TMA stores and wgmma/tcgen05
// operand reads go through the async proxy. The PTX memory model orders the two only with a
// proxy fence (fence.proxy.async) executed by the writing threads after their writes; a
// barrier alone orders the threads, not the proxies. So for each shared-memory write into a
// buffer that an async operation later reads, the writers must run fence.proxy.async before
// the barrier that publishes the data (or before the async operation when they issue it
// themselves). The finding points at that barrier or operation: the place the fence belongs
// in front of.
//
//===----------------------------------------------------------------------------------===//
#include "StageOrder.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {

bool isProxyFence(const Event &E) {
  return E.Kind == EventKind::Fence && E.Sync && *E.Sync == models::SyncKind::FenceProxyAsync;
}

/// Whether the event reads Buffer through the async proxy.
bool asyncReads(const Event &E, unsigned Buffer) {
  if (E.Kind == EventKind::AsyncStore)
    return E.Src.resolved() && E.Src.Buffer == Buffer;
  if (E.Kind == EventKind::Mma)
    for (const BufferRef &R : E.Reads)
      if (R.resolved() && R.Buffer == Buffer)
        return true;
  return false;
}

/// The writers fenced, but the thread that issues the async read does not wait for them.
void reportUnpublished(CheckContext &Ctx, const StageOrder &Order, const Sequence &Seq,
                       unsigned W, const Event &Fence, const Event &Read) {
  const Event &Write = Order.event(Seq, W);
  const Buffer &Buf = Ctx.protocol().Buffers[Write.Dst.Buffer];
  std::string Msg;
  llvm::raw_string_ostream OS(Msg);
  OS << Order.who(Seq, W) << " issues " << (Read.Kind == EventKind::Mma ? "an MMA" : "a TMA store")
     << " that reads " << Buf.Name << " from " << describeThreads(possibleThreads(Read.Threads))
     << " after their own fence.proxy.async, but no barrier after the fence holds them back "
     << "until the other threads that write " << Buf.Name
     << " with " << (Write.Opcode.empty() ? std::string("st.shared") : Write.Opcode)
     << " have written and fenced, so the async proxy can read data not written yet";
  Finding &F = Ctx.report(Severity::Error, Msg, Read);
  addNote(F, "the generic-proxy write of " + Buf.Name + " by " +
                 describeThreads(possibleThreads(Write.Threads)),
          Write);
  addNote(F, "their fence; a barrier of the writing threads and the issuing ones (bar.sync) "
             "belongs between it and the async read",
          Fence);
}

} // namespace

void wsv::analyzer::checks::ProxyFenceMissing(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  StageOrder Order(P);
  std::set<unsigned> Reported;
  std::set<std::pair<const Sequence *, unsigned>> SaidFor;
  for (const Sequence &Seq : Order.sequences())
    for (unsigned W = 0; W < Seq.Steps.size(); ++W) {
      const Event &Write = Order.event(Seq, W);
      if (Write.Kind != EventKind::SmemWrite || !Write.Dst.resolved() ||
          Reported.count(Seq.Steps[W].Event))
        continue;
      unsigned Target = Write.Dst.Buffer;
      const Event *FirstSync = nullptr, *Fence = nullptr;
      std::vector<const Event *> Published; // barriers of the writers after their fence
      for (unsigned J = W + 1; J < Seq.Steps.size(); ++J) {
        const Event &E = Order.event(Seq, J);
        // A fence the writing threads run (thread sets wsv cannot count exactly, such as a
        // warp index from shfl, are taken to be the writers').
        if (!Fence && isProxyFence(E) && overlaps(Write.Threads, E.Threads)) {
          Fence = &E;
          continue;
        }
        bool Syncs = synchronizes(E, Write.Threads);
        if (!FirstSync && Syncs)
          FirstSync = &E;
        if (Fence) {
          // Fenced. Writers that do not issue the async read themselves must still have
          // written and fenced before the thread that does: a barrier of both after the
          // fence (h5's second bar.sync before its elected thread's TMA store).
          if (Syncs)
            Published.push_back(&E);
          if (!asyncReads(E, Target))
            continue;
          if (!coveredBy(Write.Threads, E.Threads) &&
              llvm::none_of(Published,
                            [&](const Event *B) { return synchronizes(*B, E.Threads); }) &&
              SaidFor.insert({&Seq, Target}).second)
            reportUnpublished(Ctx, Order, Seq, W, *Fence, E);
          Reported.insert(Seq.Steps[W].Event);
          break;
        }
        if (!asyncReads(E, Target))
          continue;
        Reported.insert(Seq.Steps[W].Event);
        // Writes of one role into one buffer (unrolled copies of one statement, all the
        // writes a barrier publishes) miss the same fence: say it once.
        if (!SaidFor.insert({&Seq, Target}).second)
          break;
        const Buffer &Buf = P.Buffers[Target];
        std::string Msg;
        llvm::raw_string_ostream OS(Msg);
        OS << Order.who(Seq, W) << " writes " << Buf.Name << " with "
           << (Write.Opcode.empty() ? std::string("st.shared") : Write.Opcode)
           << " and " << (E.Kind == EventKind::Mma ? "an MMA" : "a TMA store")
           << " reads it through the async proxy, but the writing threads run no "
              "fence.proxy.async before "
           << (FirstSync ? "this barrier" : "it")
           << ", so the async proxy can read stale shared memory";
        Finding &F = Ctx.report(Severity::Error, Msg, FirstSync ? *FirstSync : E);
        addNote(F, "the generic-proxy write of " + Buf.Name, Write);
        addNote(F, "the async-proxy read of " + Buf.Name, E);
        break;
      }
    }
}
