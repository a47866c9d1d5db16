//===- Module.h - a parsed PTX file -----------------------------------------------===//
//
// A Module owns the source buffer (inside an llvm::SourceMgr, which diagnostics use) and the
// allocator every node lives in. Its statements point into the buffer, so they live as long
// as the Module does.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace ptx {

/// A position in the PTX file.
struct SourceLocation {
  llvm::StringRef File; ///< the buffer's name: the path given, or "<stdin>"
  unsigned Line = 0;    ///< 1-based
  unsigned Column = 0;  ///< 1-based, in bytes
};

/// Where a `.loc` directive points in the CUDA (or other high-level) source.
struct CudaLocation {
  llvm::StringRef File; ///< from the `.file` directive with the `.loc`'s index; empty if none
  unsigned FileIndex = 0;
  unsigned Line = 0;
  unsigned Column = 0;
  const LocDirective *Directive = nullptr; ///< inlinedAt() leads to the call site
  /// For a location inside an inlined function: that function's (mangled) name, read from
  /// the debug string its `function_name` label points at; empty otherwise.
  std::string InlinedFunction;
};

/// Counts that `wsv parse --stats` reports.
struct ModuleStats {
  uint64_t Bytes = 0;
  uint64_t Lines = 0;
  unsigned Entries = 0;
  unsigned Functions = 0; ///< `.func`, definitions and declarations
  uint64_t Instructions = 0;
};

class Module {
public:
  /// An empty module over Buffer; the parser fills it.
  explicit Module(std::unique_ptr<llvm::MemoryBuffer> Buffer);
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  llvm::StringRef bufferName() const;
  llvm::StringRef source() const { return Source; }
  const llvm::SourceMgr &sourceMgr() const { return SrcMgr; }
  unsigned bufferId() const { return 1; }

  /// Top-level statements in order: Version, Target, AddressSize, File, VariableDecl,
  /// Function, Section and Directive.
  llvm::ArrayRef<const Statement *> items() const { return Items; }
  /// The functions among items(), definitions and declarations.
  llvm::ArrayRef<const Function *> functions() const { return Functions; }
  /// The first definition (or, failing that, declaration) with this name.
  const Function *function(llvm::StringRef Name) const;
  /// A module-level variable by name.
  const VariableDecl *globalVariable(llvm::StringRef Name) const;

  const VersionDirective *version() const { return Version; }
  const TargetDirective *target() const { return Target; }
  const AddressSizeDirective *addressSize() const { return AddressSize; }

  /// File, line and column of a pointer into source(): a statement's or an operand's ptr().
  /// Lines come from SourceMgr's line table, built once on first use (so the first call is
  /// not thread-safe); the column costs a scan back to the start of the line.
  SourceLocation location(const char *Ptr) const;
  SourceLocation location(const Statement &S) const { return location(S.ptr()); }
  SourceLocation location(const Operand &Op) const { return location(Op.ptr()); }

  /// The path of `.file Index`, or an empty string.
  llvm::StringRef filePath(unsigned Index) const;
  /// The CUDA source position of an instruction, from the `.loc` that governs it.
  std::optional<CudaLocation> cudaLocation(const Instruction &I) const;
  /// The same for a `.loc` directive (used to walk inlinedAt() chains).
  CudaLocation cudaLocation(const LocDirective &L) const;
  /// The whole inlining chain of an instruction: its own location first, then each call
  /// site outwards. Empty when no `.loc` governs it.
  std::vector<CudaLocation> cudaLocationChain(const Instruction &I) const;
  /// The NUL-terminated string that starts Offset bytes after a debug-section label:
  /// `.loc ..., function_name $L__info_string3` names the inlined function through such a
  /// label. Empty when the label is not in a section or the bytes there are not plain data.
  std::string debugString(llvm::StringRef Label, uint64_t Offset = 0) const;

  ModuleStats stats() const;

  /// The allocator all nodes of this module live in.
  llvm::BumpPtrAllocator &allocator() { return Alloc; }
  /// Bytes allocated for nodes (the AST's size, without the source buffer).
  size_t astBytes() const { return Alloc.getBytesAllocated(); }

private:
  friend class Parser;
  llvm::SourceMgr SrcMgr;
  llvm::StringRef Source;
  llvm::BumpPtrAllocator Alloc;
  llvm::ArrayRef<const Statement *> Items;
  llvm::ArrayRef<const Function *> Functions;
  llvm::ArrayRef<const FileDirective *> Files;
  const VersionDirective *Version = nullptr;
  const TargetDirective *Target = nullptr;
  const AddressSizeDirective *AddressSize = nullptr;
};

} // namespace ptx
} // namespace wsv
