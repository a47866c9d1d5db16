//===- Tcgen05AllocExhaustion.cpp - TMEM column counts that cannot be granted -----===//
//
// tcgen05.alloc takes a power of two of columns from 32 to 512, and blocks until that many
// of the SM's 512 columns are free (PTX ISA, "tcgen05.alloc"). A count outside that range
// is invalid; allocations that together ask one CTA for more than 512 columns block
// forever, since the CTA itself holds what it waits for. CTAs that share an SM and together
// ask for more than 512 columns wait for each other's dealloc: harmless for independent
// CTAs, a hang for CTAs of one cluster that meet at a cluster barrier before freeing, and
// the count that `.minnctapersm N` asks to keep resident cannot be.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include "wsv/analyzer/FunctionAnalysis.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace {
constexpr uint64_t TmemColumns = 512; ///< columns of an SM's tensor memory (PTX ISA)

/// Warps that execute the event: each of them allocates.
unsigned warpsOf(const ThreadSet &T) {
  llvm::BitVector Threads = possibleThreads(T);
  unsigned Warps = 0;
  for (unsigned W = 0; W * WarpSize < Threads.size(); ++W) {
    bool Any = false;
    for (unsigned L = 0; L < WarpSize && W * WarpSize + L < Threads.size(); ++L)
      Any |= Threads.test(W * WarpSize + L);
    Warps += Any;
  }
  return Warps;
}
} // namespace

namespace wsv {
namespace analyzer {
namespace checks {

void Tcgen05AllocExhaustion(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  uint64_t Total = 0;
  const Event *Last = nullptr;
  bool AllKnown = true;

  for (const EventSite &S : eventSites(P)) {
    const Event &E = *S.E;
    if (E.Kind != EventKind::Alloc || Seen[S.Index])
      continue;
    Seen[S.Index] = true;
    std::optional<uint64_t> N = E.Columns.constant();
    if (!N) {
      AllKnown = false;
      Ctx.report(Severity::Remark,
                 E.Opcode + " allocates a column count wsv could not resolve" +
                     (E.Columns.Unknown.empty() ? std::string() : " (" + E.Columns.Unknown + ")") +
                     ", so it was not checked against the 512 columns of TMEM",
                 E);
      continue;
    }
    if (*N < 32 || *N > TmemColumns || (*N & (*N - 1)) != 0) {
      Ctx.report(Severity::Error,
                 E.Opcode + " allocates " + std::to_string(*N) +
                     " columns, but the count must be a power of two from 32 to 512 (TMEM has "
                     "512 columns), so the allocation is invalid" +
                     (*N > TmemColumns ? " and can never be granted: the warp hangs" : ""),
                 E);
      AllKnown = false; // already reported; totals would say the same again
      continue;
    }
    unsigned Warps = std::max(1u, warpsOf(E.Threads));
    uint64_t Before = Total;
    Total += *N * Warps;
    if (Before <= TmemColumns && Total > TmemColumns) {
      Finding &F = Ctx.report(
          Severity::Error,
          E.Opcode + " allocates " + std::to_string(*N) + " columns" +
              (Warps > 1 ? " in each of " + std::to_string(Warps) + " warps" : std::string()) +
              ", bringing this CTA's TMEM to " + std::to_string(Total) +
              " of 512 columns; the allocation waits for columns the CTA itself holds, so it "
              "hangs",
          E);
      if (Last)
        note(F, "earlier allocation of the same CTA", Last->Where);
    }
    Last = &E;
  }

  if (!AllKnown || Total == 0 || Total > TmemColumns || !P.Analysis)
    return;
  // CTAs the kernel asks to keep resident on one SM together.
  const ptx::Function &F = P.Analysis->cfg().function();
  if (const ptx::Directive *MinCtas = F.headerDirective(".minnctapersm"))
    if (!MinCtas->operands().empty())
      if (std::optional<int64_t> Ctas = MinCtas->operands()[0].integerValue())
        if (*Ctas >= 2 && uint64_t(*Ctas) * Total > TmemColumns) {
          Ctx.report(Severity::Warning,
                     "each CTA allocates " + std::to_string(Total) +
                         " TMEM columns and .minnctapersm " + std::to_string(*Ctas) + " asks for " +
                         std::to_string(*Ctas) + " CTAs per SM, " +
                         std::to_string(uint64_t(*Ctas) * Total) +
                         " of its 512 columns, so a CTA's allocation waits until another CTA "
                         "on the SM deallocates",
                     *Last);
          return;
        }

  // CTAs of one cluster that share an SM: one waits in tcgen05.alloc for columns a peer frees
  // only after a cluster barrier the waiting CTA never reaches. (A cta_group::2 pair sits on
  // two SMs, and CTAs of different clusters free their columns without waiting for others.)
  ClusterShape Cluster = clusterShape(P);
  if (!Cluster.Known || Cluster.Size < 2 || Last->CtaGroup == 2)
    return;
  Residency Resident = residentCtas(P);
  unsigned Together = std::min(Resident.MaxCtas, Cluster.Size);
  if (Together < 2 || uint64_t(Together) * Total <= TmemColumns)
    return;
  std::vector<EventSite> Sites = eventSites(P);
  const EventSite *Alloc = nullptr, *ClusterWait = nullptr;
  for (const EventSite &S : Sites) {
    if (S.E == Last)
      Alloc = &S;
    else if (Alloc && !ClusterWait && S.E->Kind == EventKind::ClusterWait)
      ClusterWait = &S;
    else if (ClusterWait && S.E->Kind == EventKind::Dealloc) {
      Finding &Fd = Ctx.report(
          Severity::Warning,
          "up to " + std::to_string(Together) + " CTAs of a cluster can share an SM (" +
              Resident.Why + "; clusters of " + std::to_string(Cluster.Size) + " from " +
              Cluster.From + ") and each allocates " + std::to_string(Total) +
              " of its 512 TMEM columns, so one CTA's alloc may wait for columns a peer frees "
              "only after the cluster barrier the waiting CTA never reaches",
          *Last);
      note(Fd, "the cluster barrier between the allocation and the free", ClusterWait->E->Where);
      note(Fd, "the free", S.E->Where);
      return;
    }
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
