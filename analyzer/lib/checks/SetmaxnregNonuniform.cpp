//===- SetmaxnregNonuniform.cpp - setmaxnreg by part of a warpgroup, or a bad count -===//
//
// setmaxnreg.inc/.dec is `.sync.aligned` over the warpgroup: all four warps execute the same
// instruction, with a register count that is a multiple of 8 in [24, 256] (PTX ISA,
// "setmaxnreg"). When a warp of the warpgroup skips a .dec, its registers never return to
// the pool, and the .inc of the consumer warpgroups waits for registers that never come.
// Where the warpgroup's other warps run a setmaxnreg of the same action and count from
// instructions of their own (Triton's single-warp partitions), nothing hangs, but the ISA
// asks for one instruction: a warning.
//
//===----------------------------------------------------------------------------------===//
#include "SyncSupport.h"

#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

namespace wsv {
namespace analyzer {
namespace checks {

void SetmaxnregNonuniform(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  std::set<std::vector<unsigned>> Reported; // partner lines of the warnings given
  for (const EventSite &S : eventSites(P)) {
    const Event &E = *S.E;
    if (E.Kind != EventKind::Setmaxnreg || Seen[S.Index])
      continue;
    Seen[S.Index] = true;
    std::string Op = E.Increase ? "setmaxnreg.inc" : "setmaxnreg.dec";

    if (std::optional<uint64_t> N = E.RegCount.constant()) {
      if (*N < 24 || *N > 256 || *N % 8 != 0) {
        Ctx.report(Severity::Error,
                   Op + " " + std::to_string(*N) +
                       ": the register count must be a multiple of 8 in [24, 256], so the "
                       "instruction is invalid",
                   E);
        continue;
      }
    } else {
      Ctx.report(
          Severity::Remark,
          Op + " takes a register count wsv could not resolve" +
              (E.RegCount.Unknown.empty() ? std::string() : " (" + E.RegCount.Unknown + ")") +
              ", so its range was not checked",
          E);
    }

    Coverage C = coverage(E.Threads, 4 * WarpSize);
    if (!C.Unknown.empty()) {
      Ctx.report(Severity::Remark,
                 Op +
                     " must be executed by whole warpgroups, but the threads that execute it "
                     "are unknown (" +
                     C.Unknown + "), so this was not checked",
                 E);
      continue;
    }
    if (C.Partial.empty())
      continue;
    if (std::vector<unsigned> Partners = setmaxnregPartners(P, E); !Partners.empty()) {
      // Every warp of the warpgroup changes its registers the same way, each from its own
      // instruction: the pool sees what one instruction would give it, but the ISA's words
      // are "the same setmaxnreg instruction".
      // One finding for the group, at its first instruction (a warp that runs two such
      // instructions, before and after a barrier, has the same partners for both).
      if (Partners.front() < E.Where.PtxLine || !Reported.insert(Partners).second)
        continue;
      std::string Lines;
      for (unsigned L : Partners)
        Lines += (Lines.empty() ? "" : ", ") + std::to_string(L);
      Ctx.report(Severity::Warning,
                 Op + " " + std::to_string(*E.RegCount.constant()) + " runs in only " +
                     C.Partial + " here, and in the warpgroup's other warps at ptx line(s) " +
                     Lines + ": the PTX ISA asks every warp of a warpgroup to execute the same "
                     "setmaxnreg instruction; one instruction per warp with one count, as "
                     "compilers that specialize single warps emit, is outside its letter",
                 E);
      continue;
    }
    std::string Consequence =
        E.Increase ? "so the warpgroup's register count is undefined and the warps that do "
                     "execute it may wait for registers forever"
                   : "so the warps that skip it keep their registers, the pool never holds "
                     "what the other warpgroups' setmaxnreg.inc asks for, and they hang";
    Finding &F = Ctx.report(Severity::Error,
                            Op + " is warpgroup-wide (.sync.aligned) but only " + C.Partial +
                                " execute it, " + Consequence,
                            E);
    if (std::optional<SourceRef> Guard = threadGuard(P, E))
      note(F, "the guard that splits the warpgroup is here", *Guard);
  }
}

} // namespace checks
} // namespace analyzer
} // namespace wsv
