//===- ExprPtx.h - PTX statements that compute an expression -----------------------===//
//
// Rewrites of a kernel's text sometimes need a value on a path that never computes it: a
// worker warp of Triton's warp_specialize reads its loop's trip count from shared memory,
// where the default warps stored a value of the launch that only their path computes. When
// the value is an expression of the launch alone (parameters, special registers, constants,
// symbol addresses), emitPtx writes statements that compute it again into a fresh register.
// The statements use only fresh registers (declared in Decls, to be placed in a `{ }` scope)
// and read no register of the kernel, so they can stand anywhere in the kernel's body.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace wsv {
namespace analyzer {

struct PtxValue {
  /// `.reg` declarations of the fresh registers.
  std::string Decls;
  /// The statements, on one line, each ending in `;`.
  std::string Code;
  /// The register that holds the value (a `.pred` for width 1).
  std::string Reg;
};

/// PTX that computes E into a fresh register named from Prefix (`%<Prefix>_<n>`). Fails,
/// with the reason in Why, for leaves that mean nothing outside the thread and place that
/// produced them (a phi, a load, an elected lane, an iteration number, an opaque value),
/// for %tid-like special registers that differ between the threads, and for widths PTX
/// has no arithmetic register for (8 bits).
std::optional<PtxValue> emitPtx(const Expr *E, llvm::StringRef Prefix, std::string &Why);

/// Whether E reads only what every thread of the CTA sees alike: parameters, constants,
/// symbol addresses and CTA-uniform special registers (what emitPtx accepts).
bool isLaunchValue(const Expr *E);

} // namespace analyzer
} // namespace wsv
