#include "wsv/runner/Trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace wsv {
namespace runner {

using nlohmann::json;

static json waitJson(const StuckWait &W) {
  if (W.Op == abi::OpNamedBarrier)
    return {{"op", "bar.sync"}, {"id", W.Index}, {"threads", W.Parity}};
  return {{"op", "mbarrier.try_wait.parity"},
          {"barrier", W.Barrier},
          {"index", W.Index},
          {"parity", W.Parity}};
}

std::string hangTraceJson(const HangReport &Report, const TraceLaunch &Launch) {
  json Doc;
  Doc["schema"] = TraceSchema;
  Doc["source"] = "hardware";
  Doc["kernel"] = Launch.Kernel;
  Doc["entry"] = Launch.Entry;
  Doc["variant"] = Launch.Variant.empty() ? json(nullptr) : json(Launch.Variant);
  Doc["ptx"] = Launch.PtxFile;
  Doc["launch"] = {
      {"grid", {Launch.Grid[0], Launch.Grid[1], Launch.Grid[2]}},
      {"block", {Launch.Block[0], Launch.Block[1], Launch.Block[2]}},
      {"cluster", {Launch.Cluster[0], Launch.Cluster[1], Launch.Cluster[2]}},
      {"smem_bytes", Launch.SmemBytes},
      {"problem",
       {{"m", Launch.P.M}, {"n", Launch.P.N}, {"k", Launch.P.K}, {"dtype", dtypeName(Launch.P.Type)}}}};
  Doc["roles"] = Report.Roles;
  Doc["barriers"] = Report.Barriers;
  Doc["timeout_ns"] = Report.TimeoutNs;

  // Timestamps are %globaltimer nanoseconds; time_origin_ns is the earliest wait start, so a
  // reader can lay the waits on one timeline.
  uint64_t Origin = UINT64_MAX;
  for (const StuckWait &W : Report.Waits)
    Origin = std::min(Origin, W.SinceNs);
  Doc["time_origin_ns"] = Report.Waits.empty() ? 0 : Origin;

  json Stuck = json::array();
  for (const StuckWait &W : Report.Waits)
    Stuck.push_back({{"role", W.Role},
                     {"cta", {W.Cta[0], W.Cta[1], W.Cta[2]}},
                     {"cluster_rank", W.ClusterRank},
                     {"warp", W.Warp},
                     {"sm", W.Sm},
                     {"wait", waitJson(W)},
                     {"iteration", W.Iteration},
                     {"since_ns", W.SinceNs},
                     {"captured_ns", W.CapturedNs},
                     {"reporter", W.Reporter}});
  Doc["stuck"] = Stuck;

  json Summary = json::array();
  for (const WaitGroup &G : Report.groups())
    Summary.push_back({{"role", G.First.Role},
                       {"wait", waitJson(G.First)},
                       {"ctas", G.Ctas},
                       {"warps", G.Warps},
                       {"iterations", {G.MinIteration, G.MaxIteration}}});
  Doc["summary"] = Summary;
  Doc["silent_roles"] = Report.silentRoles();
  Doc["dropped"] = Report.Dropped;
  return Doc.dump(2) + "\n";
}

} // namespace runner
} // namespace wsv
