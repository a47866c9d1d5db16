//===- Diagnostics.cpp - findings as clang-style text with carets -------------------===//
#include "Diagnostics.h"

#include "wsv/ptx_parser/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace wsv;
using namespace wsv::report;
using analyzer::Finding;
using analyzer::Severity;
using analyzer::SourceRef;
using llvm::SourceMgr;
using llvm::StringRef;

SourceMgr *CudaSources::get(StringRef Path) {
  auto [It, Inserted] = Files.try_emplace(Path);
  if (Inserted) {
    auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (Buffer) {
      It->second = std::make_unique<SourceMgr>();
      It->second->AddNewSourceBuffer(std::move(*Buffer), llvm::SMLoc());
    }
  }
  return It->second.get();
}

namespace {

SourceMgr::DiagKind kindOf(Severity S) {
  switch (S) {
  case Severity::Error:
    return SourceMgr::DK_Error;
  case Severity::Warning:
    return SourceMgr::DK_Warning;
  case Severity::Remark:
    return SourceMgr::DK_Remark;
  }
  return SourceMgr::DK_Error;
}

/// A diagnostic at Line:Column of the only buffer of SM, with that line and a caret; only the
/// position when the line is not in the buffer.
void printAt(SourceMgr *SM, StringRef File, unsigned Line, unsigned Column,
             SourceMgr::DiagKind Kind, const std::string &Message, llvm::raw_ostream &OS,
             bool Colors) {
  ptx::Diagnostic D;
  D.Kind = Kind;
  D.File = File.str();
  D.Line = Line;
  D.Column = Column ? Column : 1;
  D.Message = Message;
  if (SM && Line) {
    const llvm::MemoryBuffer *Buffer = SM->getMemoryBuffer(1);
    D.Loc = SM->FindLocForLineAndColumn(1, Line, D.Column);
    // A column past the end of its line would put the caret on the next line.
    if (D.Loc.isValid() && D.Loc.getPointer() < Buffer->getBufferEnd() &&
        SM->getLineAndColumn(D.Loc, 1).first == Line) {
      ptx::DiagnosticEngine::print(D, *SM, OS, Colors);
      return;
    }
  }
  // No text to show: the position alone, in the same `file:line:col: kind: message` shape.
  std::string Where = File.str();
  if (Line)
    Where += ":" + std::to_string(Line) + ":" + std::to_string(D.Column);
  llvm::SMDiagnostic(Where, Kind, Message).print(nullptr, OS, Colors);
}

std::string shortFrame(const analyzer::CudaFrame &F) {
  return llvm::sys::path::filename(F.File).str() + ":" + std::to_string(F.Line);
}

/// The CUDA note of a finding: the kernel's own source line (the outermost frame of the
/// .loc chain: the statement in the kernel body), and the helper it went through when the
/// instruction was inlined from one.
void printCudaNote(const SourceRef &Where, llvm::raw_ostream &OS, bool Colors,
                   CudaSources &Cuda) {
  const analyzer::CudaFrame *K = outerFrame(Where);
  if (!K)
    return;
  std::string Message = "from this CUDA source line";
  const analyzer::CudaFrame &Inner = Where.Cuda.front();
  if (&Inner != K && Inner.Line != 0)
    Message += ", through " +
               (Inner.Function.empty() ? std::string("an inlined function")
                                       : "'" + Inner.Function + "'") +
               " at " + shortFrame(Inner);
  printAt(Cuda.get(K->File), K->File, K->Line, K->Column, SourceMgr::DK_Note, Message, OS,
          Colors);
}

} // namespace

void wsv::report::printText(const LintInput &In, llvm::raw_ostream &OS, bool Colors,
                            CudaSources &Cuda) {
  switch (In.Status) {
  case InputStatus::Unreadable:
    llvm::SMDiagnostic(In.Name, SourceMgr::DK_Error, In.Error).print(nullptr, OS, Colors);
    return;
  case InputStatus::ParseError:
    for (const ptx::Diagnostic &D : In.ParseDiagnostics)
      ptx::DiagnosticEngine::print(D, In.Module->sourceMgr(), OS, Colors);
    return;
  case InputStatus::NoKernel:
  case InputStatus::Checked:
    break;
  }
  // Finding a line fills SourceMgr's lazily built line cache, its only mutable state; the
  // workers are done by the time findings are printed, so no other thread touches it.
  SourceMgr *Ptx = In.Module ? const_cast<SourceMgr *>(&In.Module->sourceMgr()) : nullptr;
  for (const Finding &F : In.Findings) {
    printAt(Ptx, In.Name, F.Where.PtxLine, F.Where.PtxColumn, kindOf(F.Level),
            F.Message + " [" + F.Check + "]", OS, Colors);
    for (const analyzer::FindingNote &N : F.Notes) {
      std::string Message = N.Message;
      if (const analyzer::CudaFrame *K = outerFrame(N.Where))
        Message += " (from " + shortFrame(*K) + ")";
      printAt(N.Where.PtxLine ? Ptx : nullptr, In.Name, N.Where.PtxLine, N.Where.PtxColumn,
              SourceMgr::DK_Note, Message, OS, Colors);
    }
    printCudaNote(F.Where, OS, Colors, Cuda);
  }
}

std::string wsv::report::summaryLine(const LintTotals &T) {
  auto Count = [](unsigned N, const char *What) {
    return std::to_string(N) + " " + What + (N == 1 ? "" : "s");
  };
  std::string S = Count(T.Errors, "error") + ", " + Count(T.Warnings, "warning");
  if (T.Remarks)
    S += ", " + Count(T.Remarks, "remark");
  S += " in " + Count(T.Files, "file");
  if (T.BadInputs)
    S += " (" + std::to_string(T.BadInputs) + " not checked: unreadable or not parsing)";
  if (T.Suppressed)
    S += "; " + std::to_string(T.Suppressed) + " known finding" + (T.Suppressed == 1 ? "" : "s") +
         " left out by the baseline";
  return S;
}
