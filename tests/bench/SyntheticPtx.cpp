//===- SyntheticPtx.cpp - renamed copies of a kernel's entries ---------------------===//
#include "SyntheticPtx.h"

#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using llvm::StringRef;

namespace {

/// An entry's text, from the start of its first line up to the line of the next top-level
/// statement, and where its name sits in that text.
struct EntryText {
  StringRef Text;
  size_t NameEnd; ///< offset just past the entry's name
};

const char *lineStart(StringRef Source, const char *P) {
  while (P != Source.begin() && P[-1] != '\n')
    --P;
  return P;
}

} // namespace

llvm::Expected<bench::SyntheticPtx>
bench::writeSyntheticPtx(StringRef TemplatePath, StringRef OutPath, uint64_t MinBytes) {
  std::string Errors;
  llvm::raw_string_ostream ErrorStream(Errors);
  llvm::Expected<ptx::ParseResult> Parsed = ptx::parseFile(
      TemplatePath, [&](const ptx::Diagnostic &D) { ErrorStream << D.Message << '\n'; });
  if (!Parsed)
    return Parsed.takeError();
  if (!Parsed->ok())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "template '%s' does not parse: %s",
                                   TemplatePath.str().c_str(), Errors.c_str());
  const ptx::Module &M = *Parsed->M;
  StringRef Source = M.source();

  llvm::SmallVector<EntryText, 8> Entries;
  llvm::ArrayRef<const ptx::Statement *> Items = M.items();
  for (size_t I = 0; I < Items.size(); ++I) {
    const auto *F = llvm::dyn_cast<ptx::Function>(Items[I]);
    if (!F || !F->isEntry() || !F->isDefinition())
      continue;
    // Linkage (`.visible`) shares the line with `.entry`; whole lines keep it with its entry.
    const char *Begin = lineStart(Source, F->ptr());
    const char *End =
        I + 1 < Items.size() ? lineStart(Source, Items[I + 1]->ptr()) : Source.end();
    StringRef Text(Begin, End - Begin);
    size_t NameEnd = F->name().end() - Begin;
    Entries.push_back({Text, NameEnd});
  }
  if (Entries.empty())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "template '%s' defines no .entry function",
                                   TemplatePath.str().c_str());

  std::error_code EC;
  llvm::raw_fd_ostream Out(OutPath, EC);
  if (EC)
    return llvm::createStringError(EC, "cannot write '%s'", OutPath.str().c_str());
  SyntheticPtx Result;
  Out << Source;
  if (!Source.ends_with("\n"))
    Out << '\n';
  Result.Entries = Entries.size();
  for (unsigned Copy = 1; Out.tell() < MinBytes; ++Copy) {
    for (const EntryText &E : Entries) {
      Out << E.Text.take_front(E.NameEnd) << "_s" << Copy << E.Text.drop_front(E.NameEnd);
      ++Result.Entries;
    }
  }
  Result.Bytes = Out.tell();
  Out.close();
  if (Out.has_error())
    return llvm::createStringError(Out.error(), "cannot write '%s'", OutPath.str().c_str());
  return Result;
}
