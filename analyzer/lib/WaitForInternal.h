//===- WaitForInternal.h - pieces shared by the wait-for analysis and its diagnosis ===//
#pragma once

#include "wsv/analyzer/WaitFor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// evaluateAt, with %tid.x bound to Tid where it is given (a named barrier id per warpgroup).
std::optional<uint64_t> evaluateFor(const Protocol &P, const Expr *E,
                                    const std::map<unsigned, uint64_t> &Iterations,
                                    const std::map<std::string, uint64_t> &Params,
                                    std::optional<unsigned> Tid);

/// Every event each role runs (prologue, its body, epilogue), in order, with its loops.
std::vector<std::vector<EventSite>> collectSites(const Protocol &P);

/// Whether E moves a barrier phase towards completion (an arrival or delivered bytes).
bool completes(const Event &E);
bool slotMayBe(const Event &E, unsigned Slot);
std::optional<unsigned> barrierArray(const Protocol &P, const std::string &Name);

/// The named barrier id E uses in the warp of thread Tid, when it can be evaluated.
std::optional<unsigned> namedIdAt(const Protocol &P, const Event &E, unsigned Tid,
                                  const std::map<std::string, uint64_t> &Params);
/// Whether E can be bar.sync Id in one of Warps (true when the id cannot be evaluated).
bool namedIdMatches(const Protocol &P, const Event &E, unsigned Id,
                    const std::vector<unsigned> &Warps,
                    const std::map<std::string, uint64_t> &Params);
/// Whether some warp of role Role reaches E with id Id (true when it cannot be evaluated).
bool namedIdMatchesAnyThread(const Protocol &P, unsigned Role, const Event &E, unsigned Id,
                             const std::map<std::string, uint64_t> &Params);

std::vector<unsigned> findCycle(size_t Nodes, const std::vector<WaitEdge> &Edges);

Diagnosis diagnose(const Protocol &P, const Snapshot &S, const WaitForAnalysis &A,
                   const std::vector<std::vector<EventSite>> &Sites);

} // namespace analyzer
} // namespace wsv
