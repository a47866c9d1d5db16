//===- TransitionSystemZ3.h - one property of a transition system, asked of Z3 ----===//
//
// The door between the lowering (TransitionSystem.h) and Z3 (TransitionSystemZ3.cpp): a
// verdict in, nothing of Z3 out. Exceptions from Z3 become Unknown verdicts.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "TransitionSystem.h"

#include "wsv/analyzer/Verify.h"

namespace wsv {
namespace analyzer {
namespace ts {

Verdict checkProperty(const Protocol &P, const TransitionSystem &TS, Property Prop,
                      const VerifyOptions &Options);

} // namespace ts
} // namespace analyzer
} // namespace wsv
