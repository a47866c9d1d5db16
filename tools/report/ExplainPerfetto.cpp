//===- ExplainPerfetto.cpp - `wsv explain --format perfetto` -------------------------===//
//
// Chrome trace-event JSON, which ui.perfetto.dev (and chrome://tracing) open: one process per
// CTA, one track (thread) per warp, named by its role. Hardware captures become one slice per
// stuck warp, from when its wait began to when the capture was taken (real %globaltimer
// time, relative to the trace's time origin). Solver schedules have no clock: step i runs at
// time i (shown as microseconds), arrivals are instant events, and the waits still blocked at
// the end are slices to the end; a schedule that ends in a race or a barrier misuse gets a
// marker `race: <check>` where its last step ends. Flow arrows go from each stuck wait to the
// stuck waits of the roles it waits on, in the same CTA: the wait-for edges.
//
//===----------------------------------------------------------------------------------===//
#include "Explain.h"

#include <map>

namespace wsv {
namespace report {

namespace {

using nlohmann::json;

struct Track {
  unsigned Pid = 0, Tid = 0;
};

unsigned ctaId(const Trace &T, const Dim3 &C) {
  return C[0] + T.Launch.Grid[0] * (C[1] + T.Launch.Grid[1] * C[2]);
}

std::string ctaName(const Dim3 &C) {
  return "CTA (" + std::to_string(C[0]) + ", " + std::to_string(C[1]) + ", " +
         std::to_string(C[2]) + ")";
}

/// The group of E.Snap.Stuck a stuck record belongs to.
int groupOf(const Explanation &E, const TraceStuck &R) {
  for (unsigned G = 0; G < E.Snap.Stuck.size(); ++G) {
    const analyzer::StuckWait &W = E.Snap.Stuck[G];
    bool Same = W.Role == R.Role && W.Named == !R.Wait.isMbarrier() &&
                (W.Named ? W.NamedId == R.Wait.Id && W.NamedThreads == R.Wait.Threads
                         : W.Barrier == R.Wait.Barrier && W.Slot == R.Wait.Index &&
                               W.Parity == R.Wait.Parity);
    if (Same)
      return static_cast<int>(G);
  }
  return -1;
}

} // namespace

json explanationToPerfetto(const Explanation &E) {
  const Trace &T = *E.T;
  json Events = json::array();
  std::map<std::pair<unsigned, unsigned>, std::string> Threads; // (pid, tid) -> name
  std::map<unsigned, std::string> Processes;
  auto Name = [&](unsigned Pid, const Dim3 &Cta, unsigned Tid, const std::string &N) {
    Processes.emplace(Pid, ctaName(Cta));
    Threads.emplace(std::make_pair(Pid, Tid), N);
  };
  // Where each stuck wait group sits, per CTA: (group, pid) -> track and time.
  std::map<std::pair<int, unsigned>, std::pair<Track, double>> StuckAt;
  const bool Hw = !T.fromSolver();
  const double End = static_cast<double>(T.Steps.size());

  if (!Hw) {
    for (size_t I = 0; I < T.Steps.size(); ++I) {
      const TraceStep &S = T.Steps[I];
      unsigned Pid = ctaId(T, S.Cta), Tid = S.Warp.value_or(0);
      Name(Pid, S.Cta, Tid, S.Role + (S.Warp ? " warp " + std::to_string(*S.Warp) : ""));
      json Args = {{"ptx_line", S.PtxLine}, {"step", I}};
      if (!S.Source.empty())
        Args["source"] = S.Source;
      std::string Label = S.Op;
      if (S.Barrier)
        Label += " " + *S.Barrier + "[" + std::to_string(S.Index.value_or(0)) + "]";
      if (I < E.Effects.size() && !E.Effects[I].Note.empty())
        Args["effect"] = E.Effects[I].Note;
      bool Arrival = I < E.Effects.size() && E.Effects[I].Arrival;
      if (Arrival)
        Events.push_back({{"name", Label}, {"cat", "arrival"}, {"ph", "i"}, {"s", "t"},
                          {"ts", static_cast<double>(I)}, {"pid", Pid}, {"tid", Tid},
                          {"args", Args}});
      else
        Events.push_back({{"name", Label}, {"cat", "step"}, {"ph", "X"},
                          {"ts", static_cast<double>(I)}, {"dur", 1.0}, {"pid", Pid},
                          {"tid", Tid}, {"args", Args}});
    }
  }

  // A race or barrier misuse happens at the schedule's last step: a marker on its track,
  // with what went wrong and the check it shows.
  if (T.isRace() && !T.Steps.empty()) {
    const TraceStep &Last = T.Steps.back();
    json Args = {{"reason", T.Reason}, {"property", T.Property}};
    if (!T.Check.empty())
      Args["check"] = T.Check;
    Events.push_back({{"name", T.Check.empty() ? std::string("race") : "race: " + T.Check},
                      {"cat", "race"}, {"ph", "i"}, {"s", "p"}, {"ts", End},
                      {"pid", ctaId(T, Last.Cta)}, {"tid", Last.Warp.value_or(0)},
                      {"args", Args}});
  }

  for (const TraceStuck &R : T.Stuck) {
    unsigned Pid = ctaId(T, R.Cta), Tid = R.Warp;
    Name(Pid, R.Cta, Tid, R.Role + " warp " + std::to_string(R.Warp));
    double Ts = Hw ? (R.SinceNs - T.TimeOriginNs) / 1000.0 : End;
    double Dur = Hw ? (R.CapturedNs - R.SinceNs) / 1000.0 : 1.0;
    int G = groupOf(E, R);
    json Args = {{"role", R.Role}, {"iteration", R.Iteration}, {"reporter", R.Reporter}};
    if (G >= 0 && E.P)
      for (const analyzer::EventSite &S : E.WaitFor.Matches[G].Waits) {
        Args["ptx"] = eventWhere(*E.P, S.Event);
        break;
      }
    Events.push_back({{"name", "wait " + R.Wait.str()}, {"cat", "stuck"}, {"ph", "X"},
                      {"ts", Ts}, {"dur", Dur}, {"pid", Pid}, {"tid", Tid}, {"args", Args}});
    if (G >= 0 && !StuckAt.count({G, Pid}))
      StuckAt[{G, Pid}] = {Track{Pid, Tid}, Ts};
  }

  // Wait-for edges as flow arrows, CTA by CTA.
  unsigned FlowId = 0;
  for (const analyzer::WaitEdge &Ed : E.WaitFor.Edges) {
    if (Ed.State != analyzer::PeerState::Stuck)
      continue;
    for (unsigned H : Ed.To)
      for (const auto &[Key, From] : StuckAt) {
        if (Key.first != static_cast<int>(Ed.From))
          continue;
        auto To = StuckAt.find({static_cast<int>(H), Key.second});
        if (To == StuckAt.end())
          continue;
        ++FlowId;
        std::string Label = "waits on " + E.Snap.Stuck[H].Role;
        // Arrows start inside the waiter's slice and end inside the peer's.
        Events.push_back({{"name", Label}, {"cat", "wait-for"}, {"ph", "s"}, {"id", FlowId},
                          {"ts", From.second}, {"pid", From.first.Pid},
                          {"tid", From.first.Tid}});
        Events.push_back({{"name", Label}, {"cat", "wait-for"}, {"ph", "f"}, {"bp", "e"},
                          {"id", FlowId}, {"ts", To->second.second},
                          {"pid", To->second.first.Pid}, {"tid", To->second.first.Tid}});
      }
  }

  for (const auto &[Pid, N] : Processes)
    Events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", Pid},
                      {"args", {{"name", N}}}});
  for (const auto &[Key, N] : Threads)
    Events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", Key.first},
                      {"tid", Key.second}, {"args", {{"name", N}}}});
  return {{"traceEvents", Events},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"schema", T.fromSolver() ? "wsv-trace/1 solver" : "wsv-trace/1 hardware"},
            {"kernel", T.Kernel},
            {"variant", T.Variant},
            {"race", T.isRace() ? json(T.Reason) : json(nullptr)}}}};
}

} // namespace report
} // namespace wsv
