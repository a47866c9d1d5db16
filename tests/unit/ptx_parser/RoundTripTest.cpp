// parse(print(parse(x))) == parse(x), and printing is idempotent, on every PTX file in the
// corpus (Triton, nvcc, clang and hand-written edge cases) and every file the build generated.
// Whether ptxas turns the printed text into the same machine code is checked by
// tools/scripts/ptx-roundtrip.py.
#include "TestSupport.h"

#include "wsv/ptx_parser/Equality.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

std::vector<std::string> ptxFilesUnder(llvm::StringRef Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".ptx")
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

void checkRoundTrip(const std::string &Path) {
  SCOPED_TRACE(Path);
  std::vector<Diagnostic> Diags;
  llvm::Expected<ParseResult> Original =
      parseFile(Path, [&](const Diagnostic &D) { Diags.push_back(D); });
  ASSERT_TRUE(static_cast<bool>(Original)) << llvm::toString(Original.takeError());
  ASSERT_TRUE(Original->ok()) << (Diags.empty() ? "" : Diags[0].Message) << " at line "
                              << (Diags.empty() ? 0 : Diags[0].Line);
  std::string Printed = print(*Original->M);
  Parsed Reparsed = parse(Printed);
  ASSERT_TRUE(Reparsed.ok()) << Reparsed.messages();
  std::string Why;
  EXPECT_TRUE(structurallyEqual(*Original->M, Reparsed.module(), &Why)) << Why;
  EXPECT_EQ(print(Reparsed.module()), Printed) << "printing is not idempotent";
}

TEST(RoundTrip, Corpus) {
  std::vector<std::string> Files = ptxFilesUnder(WSV_CORPUS_DIR);
  ASSERT_FALSE(Files.empty()) << "no .ptx under " << WSV_CORPUS_DIR;
  for (const std::string &F : Files)
    checkRoundTrip(F);
}

TEST(RoundTrip, GeneratedPtx) {
  std::vector<std::string> Files = ptxFilesUnder(WSV_PTX_DIR);
  if (Files.empty())
    GTEST_SKIP() << "the build generated no PTX (WSV_KERNELS=OFF)";
  for (const std::string &F : Files)
    checkRoundTrip(F);
}

} // namespace
