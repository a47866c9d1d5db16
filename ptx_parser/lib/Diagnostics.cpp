//===- Diagnostics.cpp - reporting and printing diagnostics -----------------------===//
#include "wsv/ptx_parser/Diagnostics.h"

#include "llvm/Support/WithColor.h"

using namespace wsv::ptx;
using llvm::StringRef;

DiagnosticEngine::DiagnosticEngine(const llvm::SourceMgr &SM, DiagnosticHandler Handler,
                                   unsigned ErrorLimit)
    : SM(SM), Handler(std::move(Handler)), ErrorLimit(ErrorLimit) {
  if (!this->Handler)
    this->Handler = printingHandler(SM, llvm::errs());
}

bool DiagnosticEngine::error(llvm::SMLoc Loc, const llvm::Twine &Message) {
  report(llvm::SourceMgr::DK_Error, Loc, Message);
  return true;
}

void DiagnosticEngine::warning(llvm::SMLoc Loc, const llvm::Twine &Message) {
  report(llvm::SourceMgr::DK_Warning, Loc, Message);
}

void DiagnosticEngine::note(llvm::SMLoc Loc, const llvm::Twine &Message) {
  report(llvm::SourceMgr::DK_Note, Loc, Message);
}

void DiagnosticEngine::report(llvm::SourceMgr::DiagKind Kind, llvm::SMLoc Loc,
                              const llvm::Twine &Message) {
  if (LimitReached)
    return;
  Diagnostic D;
  D.Kind = Kind;
  unsigned Buffer = Loc.isValid() ? SM.FindBufferContainingLoc(Loc) : 0;
  if (!Buffer && SM.getNumBuffers())
    Buffer = SM.getMainFileID();
  if (Buffer)
    D.File = SM.getMemoryBuffer(Buffer)->getBufferIdentifier().str();
  if (Kind == llvm::SourceMgr::DK_Error && ErrorLimit && Errors == ErrorLimit) {
    // Past the limit the input is probably not PTX at all; one line says so and parsing stops.
    LimitReached = true;
    D.Message = "too many errors (" + std::to_string(ErrorLimit) + "), stopping";
    Handler(D);
    return;
  }
  if (Kind == llvm::SourceMgr::DK_Error)
    ++Errors;
  else if (Kind == llvm::SourceMgr::DK_Warning)
    ++Warnings;
  if (Loc.isValid() && Buffer) {
    D.Loc = Loc;
    auto LineCol = SM.getLineAndColumn(Loc, Buffer);
    D.Line = LineCol.first;
    D.Column = LineCol.second;
  }
  D.Message = Message.str();
  Handler(D);
}

void DiagnosticEngine::print(const Diagnostic &D, const llvm::SourceMgr &SM,
                             llvm::raw_ostream &OS, bool Colors) {
  if (!D.Loc.isValid()) {
    llvm::SMDiagnostic(D.File, D.Kind, D.Message).print(nullptr, OS, Colors);
    return;
  }
  // The shown line: up to LineWindow characters either side of the caret, with "..." where
  // it was cut, and control and non-ASCII bytes shown as '?' so binary input cannot garble the terminal
  // (one '?' per byte keeps the caret under its column).
  const char *Ptr = D.Loc.getPointer();
  StringRef Buffer = SM.getMemoryBuffer(SM.FindBufferContainingLoc(D.Loc))->getBuffer();
  const char *LineStart = Ptr - (D.Column - 1);
  const char *LineEnd = Ptr;
  while (LineEnd != Buffer.end() && *LineEnd != '\n' && *LineEnd != '\r' &&
         LineEnd - Ptr < static_cast<ptrdiff_t>(LineWindow) + 1)
    ++LineEnd;
  bool CutEnd = LineEnd != Buffer.end() && *LineEnd != '\n' && *LineEnd != '\r';
  const char *From = LineStart;
  bool CutStart = false;
  if (Ptr - LineStart > static_cast<ptrdiff_t>(LineWindow)) {
    From = Ptr - LineWindow;
    CutStart = true;
  }
  std::string Shown = CutStart ? "..." : "";
  for (const char *P = From; P != LineEnd; ++P) {
    unsigned char C = static_cast<unsigned char>(*P);
    Shown.push_back((C < 0x20 && C != '\t') || C >= 0x7f ? '?' : static_cast<char>(C));
  }
  if (CutEnd)
    Shown += "...";
  int Caret = static_cast<int>((CutStart ? 3 : 0) + (Ptr - From));

  {
    llvm::WithColor Bold(OS, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true, /*BG=*/false,
                         Colors ? llvm::ColorMode::Enable : llvm::ColorMode::Disable);
    OS << D.File << ':' << D.Line << ':' << D.Column << ": ";
  }
  llvm::SMDiagnostic Display(SM, D.Loc, D.File, static_cast<int>(D.Line), Caret, D.Kind,
                             D.Message, Shown, {});
  Display.print(nullptr, OS, Colors, /*ShowKindLabel=*/true, /*ShowLocation=*/false);
}

DiagnosticHandler wsv::ptx::printingHandler(const llvm::SourceMgr &SM, llvm::raw_ostream &OS) {
  return [&SM, &OS](const Diagnostic &D) { DiagnosticEngine::print(D, SM, OS, OS.has_colors()); };
}
