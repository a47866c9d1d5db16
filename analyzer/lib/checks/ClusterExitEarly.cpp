//===- ClusterExitEarly.cpp - a CTA leaves while cluster peers still use it -------===//
//
// In a cluster, peers arrive on this CTA's mbarriers (mapa + mbarrier.arrive.shared::cluster),
// multicast TMA and tcgen05.commit signal them, and 2-CTA MMAs read both CTAs' shared memory
// and write both CTAs' TMEM. A CTA that exits, or frees its TMEM, while a peer still does
// that makes the peer's access undefined (PTX ISA: shared::cluster accesses to a CTA that has
// exited). The kernel must end with barrier.cluster.arrive + barrier.cluster.wait executed by
// every thread after the roles are done (CUTLASS's producer tail and cluster_sync; SGLang
// 32907). A `bar.sync 0` only waits for this CTA's own threads.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void ClusterExitEarly(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  std::vector<EventSite> Sites = eventSites(P);

  const EventSite *FirstCross = nullptr;
  for (const EventSite &S : Sites)
    if (S.In == Part::Role && crossesCtas(*S.E)) {
      FirstCross = &S;
      break;
    }
  if (!FirstCross)
    return;

  ClusterShape Cluster = clusterShape(P);
  if (!Cluster.Known) {
    Ctx.report(Severity::Remark,
               FirstCross->E->Opcode +
                   " reaches other CTAs of a cluster, but neither .reqnctapercluster nor a "
                   "launch description gives the cluster size, so whether every CTA waits "
                   "for its peers before exiting was not checked",
               *FirstCross->E);
    return;
  }
  if (Cluster.Size <= 1)
    return;

  // The trailing cluster barrier: an arrive and a wait of every thread after the roles.
  bool Arrived = false, Joined = false;
  const EventSite *LastCtaSync = nullptr;
  for (const EventSite &S : Sites) {
    if (S.In != Part::Epilogue)
      continue;
    if (S.E->Kind == EventKind::ClusterArrive && !S.E->When.known() &&
        threadCount(S.E->Threads) == P.Launch.threads())
      Arrived = true;
    if (S.E->Kind == EventKind::ClusterWait && Arrived && isCtaWideSync(P, *S.E))
      Joined = true;
    if (S.E->Kind == EventKind::NamedBarrier && isCtaWideSync(P, *S.E))
      LastCtaSync = &S;
  }
  if (Joined)
    return;

  std::string Peers = "its " + std::to_string(Cluster.Size - 1) + " peer CTA" +
                      (Cluster.Size > 2 ? "s" : "") + " (clusters of " +
                      std::to_string(Cluster.Size) + " from " + Cluster.From + ")";
  std::string Uses =
      FirstCross->E->Opcode + " by " + FirstCross->R->Name + ", " + at(FirstCross->E->Where);
  auto AddNotes = [&](Finding &F) {
    unsigned Noted = 0;
    for (const EventSite &S : Sites)
      if (S.In == Part::Role && crossesCtas(*S.E) && Noted++ < 3)
        note(F, "CTAs of the cluster reach each other here (" + S.E->Opcode + ")", S.E->Where);
    for (const EventSite &S : Sites)
      if (S.In == Part::Epilogue && S.E->Kind == EventKind::Dealloc) {
        note(F, "TMEM is freed here while a peer may still use it", S.E->Where);
        break;
      }
  };
  if (LastCtaSync) {
    Finding &F = Ctx.report(
        Severity::Error,
        "the last barrier before the CTA exits is " + LastCtaSync->E->Opcode +
            ", which waits only for this CTA's threads, not for " + Peers +
            "; a CTA can exit while a peer still arrives on its barriers or accesses its "
            "memory (" +
            Uses + "), so no barrier.cluster.arrive/wait follows the roles",
        *LastCtaSync->E);
    AddNotes(F);
    return;
  }
  std::vector<SourceRef> Exits = kernelExits(P);
  SourceRef Where = Exits.empty() ? FirstCross->E->Where : Exits.back();
  Finding &F = Ctx.report(
      Severity::Error,
      "the CTA exits without barrier.cluster.arrive/wait after its roles, so it can leave "
      "while " +
          Peers + " still arrive on its barriers or access its memory (" + Uses +
          "), which is undefined",
      Where);
  AddNotes(F);
  unsigned Noted = 0;
  for (const SourceRef &End : pathsIntoExits(P))
    if (End.PtxLine != Where.PtxLine && Noted++ < 3)
      note(F, "a path leaves the kernel body here, with no cluster barrier before it", End);
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
