//===- ReplayMain.cpp - run saved inputs through the fuzz checks, without fuzzing --===//
//
//   wsv-fuzz-replay [--expect-clean] PATH...
//
// Each PATH is a file, or a folder whose *.ptx files (at any depth) are taken. Every input goes
// through the same checks as the fuzzer; the first broken promise aborts with a message. With
// --expect-clean the inputs are PTX that ptxas accepts, and any parse error is a failure.
// Built in every configuration, so the regression inputs and the corpus are checked by
// ctest in the plain and sanitizer builds, not only where clang's libFuzzer is available.
//
//===----------------------------------------------------------------------------------===//
#include "PtxInputCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using llvm::StringRef;

namespace {

const char Usage[] = "usage: wsv-fuzz-replay [--expect-clean] PATH...\n";

/// Adds Path, or the *.ptx files under it when it is a folder, in a stable order.
bool collectInputs(StringRef Path, std::vector<std::string> &Inputs) {
  if (!llvm::sys::fs::is_directory(Path)) {
    if (!llvm::sys::fs::exists(Path)) {
      llvm::errs() << "wsv-fuzz-replay: error: '" << Path << "' does not exist\n";
      return false;
    }
    Inputs.push_back(Path.str());
    return true;
  }
  std::vector<std::string> Found;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Path, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".ptx" &&
        !llvm::sys::fs::is_directory(It->path()))
      Found.push_back(It->path());
  if (EC) {
    llvm::errs() << "wsv-fuzz-replay: error: cannot list '" << Path << "': " << EC.message()
                 << '\n';
    return false;
  }
  // A folder that should hold inputs but holds none would make the test pass vacuously.
  if (Found.empty()) {
    llvm::errs() << "wsv-fuzz-replay: error: no .ptx files under '" << Path << "'\n";
    return false;
  }
  llvm::sort(Found);
  llvm::append_range(Inputs, Found);
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  wsv::fuzz::CheckOptions Options;
  std::vector<std::string> Inputs;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    if (Arg == "--expect-clean") {
      Options.ExpectClean = true;
    } else if (Arg.starts_with("-")) {
      llvm::errs() << "wsv-fuzz-replay: error: unknown option '" << Arg << "'\n" << Usage;
      return 2;
    } else if (!collectInputs(Arg, Inputs)) {
      return 2;
    }
  }
  if (Inputs.empty()) {
    llvm::errs() << "wsv-fuzz-replay: error: no inputs\n" << Usage;
    return 2;
  }
  uint64_t Bytes = 0;
  for (const std::string &Path : Inputs) {
    auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!Buffer) {
      llvm::errs() << "wsv-fuzz-replay: error: cannot read '" << Path
                   << "': " << Buffer.getError().message() << '\n';
      return 2;
    }
    // Named in case the check fails: its message then says which input broke.
    llvm::errs() << "replaying " << Path << '\n';
    Options.Name = Path;
    wsv::fuzz::checkPtxInput((*Buffer)->getBuffer(), Options);
    Bytes += (*Buffer)->getBufferSize();
  }
  llvm::outs() << "wsv-fuzz-replay: " << Inputs.size() << " inputs, " << Bytes
               << " bytes, every check held\n";
  return 0;
}
