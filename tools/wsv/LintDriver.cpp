//===- LintDriver.cpp - lint many inputs in parallel, in command-line order ---------===//
#include "LintDriver.h"

#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/Solver.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <cstdlib>
#include <memory>

using namespace wsv;
using namespace wsv::lint;
using report::InputStatus;
using report::LintInput;
using llvm::StringRef;

const char *wsv::report::toString(InputStatus S) {
  switch (S) {
  case InputStatus::Checked:
    return "checked";
  case InputStatus::NoKernel:
    return "no-kernel";
  case InputStatus::ParseError:
    return "parse-error";
  case InputStatus::Unreadable:
    return "unreadable";
  }
  return "unreadable";
}

report::LintTotals wsv::report::countFindings(const std::vector<LintInput> &Inputs) {
  LintTotals T;
  for (const LintInput &In : Inputs) {
    ++T.Files;
    if (In.Status == InputStatus::ParseError || In.Status == InputStatus::Unreadable)
      ++T.BadInputs;
    for (const analyzer::Finding &F : In.Findings) {
      switch (F.Level) {
      case analyzer::Severity::Error:
        ++T.Errors;
        break;
      case analyzer::Severity::Warning:
        ++T.Warnings;
        break;
      case analyzer::Severity::Remark:
        ++T.Remarks;
        break;
      }
    }
  }
  return T;
}

bool wsv::lint::isCudaBinary(StringRef Bytes) {
  // ELF (objects, executables, shared libraries) and a bare fatbinary (0xBA55ED50, stored
  // little-endian).
  return Bytes.starts_with("\x7f" "ELF") || Bytes.starts_with("\x50\xed\x55\xba");
}

std::vector<std::pair<std::string, std::string>>
wsv::lint::splitCuobjdumpPtx(StringRef Output) {
  // Each section: "Fatbin ptx code:", a rule of '=', "key = value" header lines (arch, code
  // version, host, compile_size, ...), then the PTX text up to the next "Fatbin " header.
  std::vector<std::pair<std::string, std::string>> Sections;
  bool InPtx = false, InHeader = false;
  std::string Arch, Text;
  auto Flush = [&] {
    if (InPtx && !Text.empty())
      Sections.emplace_back(Arch.empty() ? "ptx" : Arch, std::move(Text));
    Text.clear();
    Arch.clear();
  };
  while (!Output.empty()) {
    auto [Line, Rest] = Output.split('\n');
    Output = Rest;
    StringRef Trimmed = Line.trim();
    if (Line.starts_with("Fatbin ")) {
      Flush();
      InPtx = Line.starts_with("Fatbin ptx code");
      InHeader = InPtx;
      continue;
    }
    if (!InPtx)
      continue;
    if (InHeader) {
      if (Trimmed.starts_with("=") || Trimmed.empty())
        continue;
      auto [Key, Value] = Trimmed.split('=');
      if (Trimmed.contains('=') && !Trimmed.starts_with(".") && !Trimmed.starts_with("//")) {
        if (Key.trim() == "arch")
          Arch = Value.trim().str();
        continue;
      }
      // A header line without '=' ("compressed") or the PTX itself.
      if (!Trimmed.starts_with(".") && !Trimmed.starts_with("//"))
        continue;
      InHeader = false;
    }
    Text += Line.str();
    Text += '\n';
  }
  Flush();
  return Sections;
}

namespace {

/// cuobjdump from PATH, else from the CUDA toolkit (CUDA_HOME, CUDA_PATH, /usr/local/cuda).
llvm::ErrorOr<std::string> findCuobjdump() {
  if (auto P = llvm::sys::findProgramByName("cuobjdump"))
    return P;
  llvm::SmallVector<StringRef, 3> Dirs;
  std::string Home, Path;
  if (const char *H = std::getenv("CUDA_HOME"))
    Home = std::string(H) + "/bin";
  if (const char *H = std::getenv("CUDA_PATH"))
    Path = std::string(H) + "/bin";
  if (!Home.empty())
    Dirs.push_back(Home);
  if (!Path.empty())
    Dirs.push_back(Path);
  Dirs.push_back("/usr/local/cuda/bin");
  return llvm::sys::findProgramByName("cuobjdump", Dirs);
}

/// The PTX sections of a CUDA object or executable, through `cuobjdump -ptx`.
llvm::Expected<std::vector<std::pair<std::string, std::string>>>
extractPtx(StringRef Path) {
  llvm::ErrorOr<std::string> Tool = findCuobjdump();
  if (!Tool)
    return llvm::createStringError(
        "'" + Path.str() +
        "' is a CUDA object or executable; reading its PTX needs cuobjdump, which is not on "
        "PATH or in CUDA_HOME/bin");
  llvm::SmallString<128> OutFile, ErrFile;
  if (std::error_code EC = llvm::sys::fs::createTemporaryFile("wsv-cuobjdump", "txt", OutFile))
    return llvm::createStringError(EC, "cannot create a temporary file: " + EC.message());
  llvm::FileRemover RemoveOut(OutFile);
  if (std::error_code EC = llvm::sys::fs::createTemporaryFile("wsv-cuobjdump", "err", ErrFile))
    return llvm::createStringError(EC, "cannot create a temporary file: " + EC.message());
  llvm::FileRemover RemoveErr(ErrFile);
  StringRef Args[] = {*Tool, "-ptx", Path};
  std::optional<StringRef> Redirects[] = {StringRef(), StringRef(OutFile), StringRef(ErrFile)};
  std::string Message;
  int Rc = llvm::sys::ExecuteAndWait(*Tool, Args, std::nullopt, Redirects,
                                     /*SecondsToWait=*/300, /*MemoryLimit=*/0, &Message);
  auto Out = llvm::MemoryBuffer::getFile(OutFile);
  if (Rc != 0 || !Out) {
    std::string Why = Message;
    if (auto Err = llvm::MemoryBuffer::getFile(ErrFile))
      Why = (*Err)->getBuffer().trim().split('\n').first.str();
    return llvm::createStringError("cuobjdump -ptx '" + Path.str() + "' failed" +
                                   (Why.empty() ? "" : ": " + Why));
  }
  auto Sections = splitCuobjdumpPtx((*Out)->getBuffer());
  if (Sections.empty())
    return llvm::createStringError("'" + Path.str() +
                                   "' holds no PTX (only machine code): build it with "
                                   "-gencode ...,code=compute_XX to embed PTX");
  return Sections;
}

/// Parses one PTX text and runs the checks on each selected entry.
void lintText(std::unique_ptr<llvm::MemoryBuffer> Buffer, LintInput &In,
              const LintOptions &Options, analyzer::Solver &S) {
  ptx::ParseResult Parsed = ptx::parseBuffer(
      std::move(Buffer), [&In](const ptx::Diagnostic &D) { In.ParseDiagnostics.push_back(D); });
  if (!Parsed.ok()) {
    In.Module = std::move(Parsed.M);
    In.Status = InputStatus::ParseError;
    return;
  }
  analyzer::KernelNotes Notes;
  analyzer::applyWarpDispatch(Parsed, Notes);
  In.Module = std::move(Parsed.M);
  const ptx::Module &M = *In.Module;
  analyzer::ProtocolOptions PO;
  PO.SharedSolver = &S;
  PO.Notes = &Notes;
  PO.ClusterSize = Options.ClusterSize;
  PO.ClusterFrom = "--cluster-size";
  for (const ptx::Function *F : M.functions()) {
    if (!F->isDefinition() || !F->isEntry())
      continue;
    if (!Options.Kernel.empty() && F->name() != Options.Kernel)
      continue;
    if (std::optional<std::string> Why =
            Options.ClusterSize ? analyzer::clusterSizeConflict(*F, *Options.ClusterSize)
                                : std::nullopt) {
      // Checked for a launch the kernel cannot have, every finding would mislead.
      In.Findings.clear();
      In.Kernels.clear();
      In.Status = InputStatus::Unreadable;
      In.Error = *Why + " (--cluster-size " + std::to_string(*Options.ClusterSize) + ")";
      In.Module.reset();
      return;
    }
    std::unique_ptr<analyzer::Protocol> P = analyzer::buildProtocol(M, *F, PO);
    std::vector<analyzer::Finding> Fs =
        Options.Run ? Options.Run(*P, S) : analyzer::runChecks(*P, Options.Checks, &S);
    for (analyzer::Finding &Fi : Fs) {
      Fi.File = In.Name;
      In.Findings.push_back(std::move(Fi));
    }
    In.Kernels.push_back(F->name().str());
  }
  std::stable_sort(In.Findings.begin(), In.Findings.end());
  In.Status = In.Kernels.empty() ? InputStatus::NoKernel : InputStatus::Checked;
}

std::vector<LintInput> lintPath(const std::string &Path, const LintOptions &Options,
                                analyzer::Solver &S) {
  std::vector<LintInput> Out;
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Buffer = ptx::readSourceFile(Path);
  if (!Buffer) {
    LintInput &In = Out.emplace_back();
    In.Name = Path == "-" ? "<stdin>" : Path;
    In.Error = llvm::toString(Buffer.takeError());
    return Out;
  }
  if (!isCudaBinary((*Buffer)->getBuffer())) {
    LintInput &In = Out.emplace_back();
    In.Name = (*Buffer)->getBufferIdentifier().str();
    lintText(std::move(*Buffer), In, Options, S);
    return Out;
  }
  if (Path == "-") {
    LintInput &In = Out.emplace_back();
    In.Name = "<stdin>";
    In.Error = "a CUDA object on standard input; name its file instead, cuobjdump reads files";
    return Out;
  }
  auto Sections = extractPtx(Path);
  if (!Sections) {
    LintInput &In = Out.emplace_back();
    In.Name = Path;
    In.Error = llvm::toString(Sections.takeError());
    return Out;
  }
  // Named like archive members, `app.o(2.sm_90a.ptx)`, so each section's lines are its own.
  unsigned Index = 0;
  for (auto &[Arch, Text] : *Sections) {
    LintInput &In = Out.emplace_back();
    In.Name = Path + "(" + std::to_string(++Index) + "." + Arch + ".ptx)";
    lintText(llvm::MemoryBuffer::getMemBufferCopy(Text, In.Name), In, Options, S);
  }
  return Out;
}

} // namespace

std::vector<std::vector<LintInput>> wsv::lint::lintPaths(llvm::ArrayRef<std::string> Paths,
                                                         const LintOptions &Options) {
  std::vector<std::vector<LintInput>> Results(Paths.size());
  unsigned Jobs = Options.Jobs ? Options.Jobs : llvm::hardware_concurrency().compute_thread_count();
  Jobs = std::max(1u, std::min<unsigned>(Jobs, Paths.size()));
  // Workers take the next path from a shared counter and write its slot; the slots keep the
  // command line's order. One solver per worker, created on the worker's own thread.
  std::atomic<size_t> Next{0};
  auto Work = [&] {
    std::unique_ptr<analyzer::Solver> S = analyzer::Solver::createZ3();
    for (size_t I = Next++; I < Paths.size(); I = Next++)
      Results[I] = lintPath(Paths[I], Options, *S);
  };
  if (Jobs == 1) {
    Work();
    return Results;
  }
  llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(Jobs));
  for (unsigned J = 0; J < Jobs; ++J)
    Pool.async(Work);
  Pool.wait();
  return Results;
}
