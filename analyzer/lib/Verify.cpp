//===- Verify.cpp - each property of a protocol: lower, then ask Z3 ---------------===//

#include "wsv/analyzer/Verify.h"

#include "TransitionSystem.h"
#include "TransitionSystemZ3.h"

#include <chrono>

namespace wsv {
namespace analyzer {

const char *toString(Property P) {
  switch (P) {
  case Property::DeadlockFreedom:
    return "deadlock-freedom";
  case Property::StageSafety:
    return "stage-safety";
  case Property::BarrierHygiene:
    return "barrier-hygiene";
  }
  return "?";
}

const char *toString(Verdict::Kind K) {
  switch (K) {
  case Verdict::Kind::Proved:
    return "proved";
  case Verdict::Kind::Counterexample:
    return "counterexample";
  case Verdict::Kind::Unknown:
    return "unknown";
  }
  return "?";
}

std::vector<Verdict> verifyProtocol(const Protocol &P, const VerifyOptions &Options) {
  ts::TransitionSystem TS = ts::lower(P);
  std::vector<Verdict> Out;
  for (Property Prop : Options.Properties) {
    auto Start = std::chrono::steady_clock::now();
    Verdict V;
    V.Prop = Prop;
    std::vector<std::string> Missing = TS.Unknowns;
    if (Prop == Property::StageSafety)
      Missing.insert(Missing.end(), TS.StageUnknowns.begin(), TS.StageUnknowns.end());
    if (!Missing.empty()) {
      // A part of the protocol the model lacks could hide a bug or fake one: neither a
      // proof nor a counterexample would mean anything.
      V.Reason = "the model of the protocol is incomplete: " + Missing.front();
      if (Missing.size() > 1)
        V.Reason += " (and " + std::to_string(Missing.size() - 1) + " more)";
    } else {
      V = ts::checkProperty(P, TS, Prop, Options);
    }
    V.Assumptions.insert(V.Assumptions.begin(), TS.Assumptions.begin(), TS.Assumptions.end());
    V.Milliseconds = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - Start)
                         .count();
    Out.push_back(std::move(V));
  }
  return Out;
}

} // namespace analyzer
} // namespace wsv
