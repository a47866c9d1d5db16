//===- WarpDispatchResolver.h - the resolver behind WarpDispatch.h (private) -------===//
//
// WarpDispatch.cpp finds the dispatch and resolves it; WarpDispatchScenarios.cpp decides, per
// scenario (a side of some branches on the launch), what each worker reads;
// WarpDispatchRewrite.cpp writes the rewritten text and the note.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/ThreadSet.h"
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Module.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace dispatch {

/// Pass counts: not reached on any path, and different on different paths.
constexpr int64_t Conflict = -1, Unset = -2;

/// A text edit of the module's source: Length bytes at Offset become Text.
struct Edit {
  size_t Offset, Length;
  std::string Text;
};

/// The bytes of a type modifier (`b8` 1, `u32` 4, `v2` is not one).
inline std::optional<unsigned> typeBytes(llvm::StringRef Mod) {
  if (Mod.size() < 2 || !llvm::StringRef("bsuf").contains(Mod[0]))
    return std::nullopt;
  unsigned Bits = 0;
  if (Mod.drop_front().getAsInteger(10, Bits) || Bits % 8 || Bits == 0 || Bits > 64)
    return std::nullopt;
  return Bits / 8;
}

/// Shape of a load or store: bytes per element and elements (`.v2`, `.v4`).
struct Access {
  unsigned Bytes = 0, Elements = 1;
  bool Shared = false;
};

inline Access accessOf(const ptx::Instruction &I) {
  Access A;
  for (llvm::StringRef M : I.modifiers()) {
    if (M == "shared" || M.starts_with("shared::"))
      A.Shared = true;
    else if (M == "v2" || M == "v4" || M == "v8")
      A.Elements = M.back() == '2' ? 2 : M.back() == '4' ? 4 : 8;
    else if (auto B = typeBytes(M))
      A.Bytes = *B;
  }
  return A;
}

/// bar.sync, bar.arrive or bar.red: a pass of a named barrier.
bool isBarrierOp(const models::SyncOp &Op);

class Resolver {
public:
  Resolver(const ptx::Module &M, const ptx::Function &F, std::vector<Edit> &Edits,
           std::vector<std::string> &Notes, unsigned Serial)
      : M(M), F(F), Edits(Edits), Notes(Notes), Serial(Serial) {}

  /// Looks for the dispatch in F; rewrites it (into Edits) where it can.
  void run();

private:
  const ptx::Module &M;
  const ptx::Function &F;
  std::vector<Edit> &Edits;
  std::vector<std::string> &Notes;
  unsigned Serial;
  std::unique_ptr<FunctionAnalysis> FA;
  LaunchShape Shape;

  unsigned line(InstId I) const { return FA->cfg().location(I).Line; }
  bool fail(InstId Ld, const std::string &Why) {
    Notes.push_back("warp roles chosen by a shared-memory byte (ld.shared at ptx line " +
                    std::to_string(line(Ld)) + ") not resolved: " + Why +
                    "; what those warps do stays undecided");
    return false;
  }
  /// The sides of some branches on the launch: where the default warps pass the barrier a
  /// different number of times on different paths (Triton's lowering skips the partitions
  /// when there is no work), what a worker reads depends on them, and the rewrite chooses by
  /// them in PTX.
  struct Scenario {
    std::vector<std::pair<BlockId, unsigned>> Sides; ///< branch block, successor taken
    bool decides(BlockId B) const {
      return llvm::any_of(Sides, [&](const auto &P) { return P.first == B; });
    }
  };
  /// A store of state bytes (constants) or of a value a partition reads (Capture).
  struct Store {
    InstId I;
    int64_t Offset, Size;
    bool Capture;
    std::vector<uint8_t> Bytes;
    const Expr *Value;
    bool sameAs(const Store &O, int64_t At) const {
      return Capture ? Value == O.Value && Offset == O.Offset && Size == O.Size
                     : Bytes[At - Offset] == O.Bytes[At - O.Offset];
    }
  };
  /// A partition's load from a fixed place of the variable.
  struct Capture {
    InstId I;
    int64_t Offset, Size;
    bool Stored = false; ///< some st outside the partitions writes it
    std::string Why;     ///< why it cannot be resolved, when it cannot
  };
  struct Dispatch {
    InstId Ld;
    LoopId L;
    unsigned Id = NoIndex, Before = 0;
    const Expr *Symbol = nullptr, *LoadLeaf = nullptr;
    std::vector<int64_t> Offset; ///< per warp: the byte it reads, -1 when it never does
    int64_t Lo = INT64_MAX, Hi = INT64_MIN; ///< the state bytes: [Lo, Hi)
    std::vector<Store> Stores;
    std::vector<Capture> Captures;
  };
  /// What the workers read in one scenario.
  struct Reading {
    std::vector<int64_t> State;            ///< per warp, first round; -1: does not read
    std::vector<const Expr *> Captured;    ///< per capture; nullptr: not read here
    std::vector<std::string> CaptureWhy;   ///< per capture: why it is not resolved here
    BlockId Exit = NoIndex;                ///< where the exit state leads; NoIndex: no reader
  };
  enum class Verdict { Ok, Split, Fail };
  static constexpr size_t MaxSides = 3;
  std::vector<BlockId> Branches; ///< conditional branches on the launch, outside loops

  bool resolve(InstId Ld, LoopId L);
  Verdict analyze(const Scenario &S, const Dispatch &D, Reading &Out, BlockId &Split,
                  std::string &Why) const;
  bool rewrite(const Dispatch &D, const std::vector<Scenario> &Leaves,
               const std::vector<Reading> &Readings, BlockId Exit);
  /// When branch B takes successor Side (nullptr when the analysis has no condition).
  const Expr *literal(BlockId B, unsigned Side) const;
  bool cut(const Scenario &S, BlockId From, BlockId To) const;
  /// A branch on the launch, not yet decided by S, from which At is reached.
  BlockId splitFor(const Scenario &S, const std::vector<int64_t> &In, BlockId At) const;
  /// Whether block B runs in some thread whenever S holds; Split: the branch to decide first.
  Verdict runsWhenever(const Scenario &S, BlockId B, BlockId &Split) const;
  /// A predicate register that holds when S does (statements appended to Code).
  std::optional<std::string> scenarioPredicate(const Scenario &S, const std::string &Name,
                                               std::string &Decls, std::string &Code,
                                               std::string &Why) const;
  /// The one shared (or generic) variable E's address is in, when it names only one.
  static const Expr *sharedSymbol(const Expr *E);
  /// E's offset from Symbol, when it is a constant.
  static std::optional<uint64_t> constantOffset(const Expr *E, const Expr *Symbol);
  /// Passes of barrier Id before each block (Unset: not reached, Conflict: differs by path),
  /// without the back edges of loop L and the sides S does not take; false when Id occurs in
  /// another loop.
  bool passCounts(unsigned Id, LoopId L, const Scenario &S, std::vector<int64_t> &In,
                  std::vector<int64_t> &Count, std::string &Why) const;
  /// Where a worker of warp W with state V goes from the load: the first block that does
  /// more than compute and branch, or the first block outside L. NoIndex: undecided.
  BlockId follow(InstId Ld, const Expr *LoadLeaf, LoopId L, unsigned W, uint64_t V,
                 bool &Left) const;
  std::optional<uint64_t> leafAt(const Expr *E, unsigned Tid) const;
  std::string registerType(InstId I, llvm::StringRef Name) const;
  /// 1 when instruction I passes barrier Id, else 0.
  int64_t passes(InstId I, unsigned Id) const;
  /// Whether block B reaches To by falling through, or by its branch.
  bool fallsInto(BlockId B, BlockId To) const {
    const BasicBlock &BB = FA->cfg().block(B);
    return BB.Terminator == TerminatorKind::FallThrough ||
           (BB.Terminator == TerminatorKind::CondBranch && BB.Succs.size() > 1 &&
            BB.Succs[1] == To);
  }
  bool jumpsTo(BlockId B, BlockId To) const {
    const BasicBlock &BB = FA->cfg().block(B);
    return (BB.Terminator == TerminatorKind::Branch ||
            BB.Terminator == TerminatorKind::CondBranch) &&
           BB.Succs[0] == To;
  }
};

} // namespace dispatch
} // namespace analyzer
} // namespace wsv
