//===- ProtocolPrinter.h - the protocol in the words of a kernel's comment --------===//
//
// `wsv protocol` prints what the builder recovered the way a reference kernel's protocol
// comment reads: the barriers with their init counts and who uses them, the buffers, the
// prologue, each role with its threads and its loops with trip counts, per-iteration stage
// and parity expressions, bytes, and the epilogue:
//
//   role producer = warp 4 (tid 128..159), 32 threads; its work: elected lane of warp 4, 1 thread
//     loop k in [0, K/64) when 64 <= K
//       wait empty[k%4] parity ((k/4)&1)^1
//       arrive.expect_tx full[k%4] 32768 B
//       TMA load 2d A[k%4] 16384 B (tensor box) completes full[k%4]
//
// Stage and parity expressions are shown in readable forms (`(k+3)%4`, `((k/4)&1)^1`) when a
// form agrees with the closed form on every sample (Sampling.h); otherwise the closed form
// itself. The format functions are shared with the JSON writer.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace wsv {
namespace analyzer {

/// `full[(k+3)%4]`, `mma2ld`, `ld2mma in CTA rank 0`, or the address and why it is unresolved.
std::string formatBarrier(const Protocol &P, const BarrierRef &R,
                          llvm::ArrayRef<const ProtocolLoop *> Loops);
/// `A[k%4]`, `D+8192`, or the address.
std::string formatBuffer(const Protocol &P, const BufferRef &R,
                         llvm::ArrayRef<const ProtocolLoop *> Loops);
/// A wait's parity: `0`, `(k/4)&1`, `((t*(K/64)+k)/4&1)^1`, or the closed form.
std::string formatParity(const Protocol &P, const Event &E,
                         llvm::ArrayRef<const ProtocolLoop *> Loops);
/// E with its parts that depend only on kernel parameters in a shorter form that agrees with
/// them on every sample and that Z3 shows equal for every parameter below 2^30
/// (`K/64-1 < 3 ? 0 : (K/256*4-4)/4*4+4` is `K/256*4`); for display. With Assuming, equal
/// where it holds (a loop's trip count under the condition for entering it).
const Expr *simplifyInvariants(const Protocol &P, const Expr *E,
                               const Expr *Assuming = nullptr);
/// A condition, simplified for display.
std::string formatCondition(const Protocol &P, const Expr *E);
/// A value with named loop counters and parameters, or `unknown (reason)`.
std::string formatValue(const Protocol &P, const ProtocolValue &V);
/// A multicast's ctaMask: `0b11` when constant, else the value as formatValue prints it.
std::string formatCtaMask(const Protocol &P, const ProtocolValue &Mask);
/// One event without its threads, condition or location: `arrive.expect_tx full[k%4] 32768 B`.
std::string formatEvent(const Protocol &P, const Event &E,
                        llvm::ArrayRef<const ProtocolLoop *> Loops);
/// `loop k in [0, K/64)` and its trip conditions.
std::string formatLoop(const Protocol &P, const ProtocolLoop &L);
/// `role producer = warp 4 (tid 128..159), 32 threads; its work: ...`.
std::string formatRoleHeader(const Protocol &P, const Role &R);
/// `ptx 191, h2_producer_consumer.cu:65`.
std::string formatSource(const SourceRef &S);

void printProtocol(const Protocol &P, llvm::raw_ostream &OS);

} // namespace analyzer
} // namespace wsv
