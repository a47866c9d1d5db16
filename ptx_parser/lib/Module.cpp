//===- Module.cpp - locations, .file/.loc mapping, statistics ---------------------===//
#include "wsv/ptx_parser/Module.h"

#include <algorithm>

using namespace wsv::ptx;
using llvm::StringRef;

Module::Module(std::unique_ptr<llvm::MemoryBuffer> Buffer) {
  Source = Buffer->getBuffer();
  SrcMgr.AddNewSourceBuffer(std::move(Buffer), llvm::SMLoc());
}

StringRef Module::bufferName() const {
  return SrcMgr.getMemoryBuffer(bufferId())->getBufferIdentifier();
}

SourceLocation Module::location(const char *Ptr) const {
  auto LineCol = SrcMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(Ptr), bufferId());
  return {bufferName(), LineCol.first, LineCol.second};
}

const Function *Module::function(StringRef Name) const {
  const Function *Declaration = nullptr;
  for (const Function *F : Functions)
    if (F->name() == Name) {
      if (F->isDefinition())
        return F;
      if (!Declaration)
        Declaration = F;
    }
  return Declaration;
}

const VariableDecl *Module::globalVariable(StringRef Name) const {
  for (const Statement *S : Items)
    if (const auto *V = llvm::dyn_cast<VariableDecl>(S))
      if (V->name() == Name)
        return V;
  return nullptr;
}

StringRef Module::filePath(unsigned Index) const {
  for (const FileDirective *F : Files)
    if (F->index() == Index)
      return F->path();
  return {};
}

CudaLocation Module::cudaLocation(const LocDirective &L) const {
  CudaLocation C;
  C.FileIndex = L.fileIndex();
  C.File = filePath(L.fileIndex());
  C.Line = L.sourceLine();
  C.Column = L.sourceColumn();
  C.Directive = &L;
  if (L.hasInlineInfo() && L.functionNameOffset() >= 0)
    C.InlinedFunction =
        debugString(L.functionNameLabel(), static_cast<uint64_t>(L.functionNameOffset()));
  return C;
}

std::vector<CudaLocation> Module::cudaLocationChain(const Instruction &I) const {
  std::vector<CudaLocation> Chain;
  // Each inlinedAt() is an earlier directive, so the walk ends.
  for (const LocDirective *L = I.debugLoc(); L; L = L->inlinedAt())
    Chain.push_back(cudaLocation(*L));
  return Chain;
}

std::optional<CudaLocation> Module::cudaLocation(const Instruction &I) const {
  if (!I.debugLoc())
    return std::nullopt;
  return cudaLocation(*I.debugLoc());
}

std::string Module::debugString(StringRef Label, uint64_t Offset) const {
  for (const Statement *S : Items) {
    const auto *Sec = llvm::dyn_cast<Section>(S);
    if (!Sec)
      continue;
    llvm::ArrayRef<const Statement *> SecItems = Sec->items();
    for (size_t I = 0; I < SecItems.size(); ++I) {
      const auto *L = llvm::dyn_cast<class Label>(SecItems[I]);
      if (!L || L->name() != Label)
        continue;
      // The string runs over the byte data after the label, up to its NUL.
      std::string Result;
      for (size_t J = I + 1; J < SecItems.size(); ++J) {
        const auto *D = llvm::dyn_cast<SectionData>(SecItems[J]);
        if (!D || !D->isPacked() || D->width() != 1)
          return Result;
        for (uint64_t K = 0; K < D->size(); ++K) {
          if (Offset) {
            --Offset;
            continue;
          }
          if (D->value(K) == 0)
            return Result;
          Result.push_back(static_cast<char>(D->value(K)));
        }
      }
      return Result;
    }
  }
  return {};
}

ModuleStats Module::stats() const {
  ModuleStats St;
  St.Bytes = Source.size();
  St.Lines = static_cast<uint64_t>(std::count(Source.begin(), Source.end(), '\n'));
  if (!Source.empty() && Source.back() != '\n')
    ++St.Lines;
  for (const Function *F : Functions) {
    if (F->isEntry())
      ++St.Entries;
    else
      ++St.Functions;
    if (const Scope *Body = F->body())
      forEachStatement(*Body, [&](const Statement &S, const Scope &) {
        St.Instructions += llvm::isa<Instruction>(S);
      });
  }
  return St;
}
