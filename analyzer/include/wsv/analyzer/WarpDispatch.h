//===- WarpDispatch.h - warp roles chosen through shared memory, made explicit --------===//
//
// Triton lowers `warp_specialize` so that the worker warps do not branch on their warp id
// but on a byte in shared memory: the default warps store one state byte per worker warp,
// pass a CTA-wide `barrier.sync 1`, and each worker warp, spinning in a loop whose header
// passes the same barrier, loads its byte and branches (compare chain or brx.idx) to its
// partition; after the partition it comes back to the header, where it reads the exit state
// the default warps stored later. What a worker reads is fixed by which pass of the barrier
// separates it from each store, so it can be computed from the PTX:
//
//   default:  st.shared.v2.b32 [smem+106648], {0, 0x01010101}   (pass 0)
//             barrier.sync 1  ... barrier.sync 1  ... barrier.sync 1 (passes 1-3)
//             st.shared.v2.b32 [smem+106648], {0x02020202, ...}   (pass 3)
//             barrier.sync 1                                      (pass 4)
//   worker:   H: barrier.sync 1; ld.shared.b8 %rs1, [smem + warp + 106644]; switch
//             (the load at pass 1 reads the first store; at pass 4, after a partition that
//             passes the barrier twice, the second)
//
// resolveWarpDispatch rewrites such a function's text so that the load becomes the value it
// reads in the first round, computed from %tid.x, and the branches back to the header go to
// a copy of the header's prefix that continues where the exit state leads. Every line keeps
// its number (the edits stay on their lines), so findings on the rewritten module point at
// the same PTX lines. What it resolved is a note (an assumption of every verdict); a dispatch
// it found but could not resolve is a note that says why.
//
// Two more things Triton's persistent Blackwell kernels do. Where K < 64 the default warps
// skip the partitions: they store the exit state before the first pass, on a path that passes
// the barrier fewer times, so what a worker reads depends on a branch on the launch. Such
// branches (outside loops, their condition a value of the launch) are decided one at a time
// where the passes differ by path, each scenario is resolved on its own, and the rewritten
// read chooses among the scenarios' states by the branches' conditions, computed again in PTX
// (ExprPtx.h). And a partition reads its loop's trip count from a fixed place of shared
// memory, where the default warps stored a value of the launch before the barrier pass that
// precedes the read: that read becomes the value, computed again.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Module.h"
#include "wsv/ptx_parser/Parser.h"

#include <map>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// Per kernel (entry name): what the dispatch resolution did or why it did not.
using KernelNotes = std::map<std::string, std::vector<std::string>>;

struct WarpDispatchResult {
  /// The rewritten module's text; empty when no entry was rewritten.
  std::string Text;
  KernelNotes Notes;
};

/// Finds the entries of M whose worker warps take their role from shared memory and
/// resolves them (see above).
WarpDispatchResult resolveWarpDispatch(const ptx::Module &M);

/// resolveWarpDispatch on a parsed module: where it rewrote an entry, Parsed's module is
/// replaced by the rewritten one (same buffer name, same lines). Notes gains its notes.
/// Returns whether the module was replaced.
bool applyWarpDispatch(ptx::ParseResult &Parsed, KernelNotes &Notes);

} // namespace analyzer
} // namespace wsv
