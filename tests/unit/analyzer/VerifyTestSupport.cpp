#include "VerifyTestSupport.h"

#include "wsv/analyzer/ProtocolBuilder.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

namespace wsv {
namespace analyzer {
namespace test {

const Verdict &Verified::of(Property Prop) const {
  for (const Verdict &V : Verdicts)
    if (V.Prop == Prop)
      return V;
  ADD_FAILURE() << "no verdict for " << toString(Prop);
  return Verdicts.front();
}

std::unique_ptr<Verified> verifyText(const std::string &Text, const VerifyOptions &Options) {
  auto R = std::make_unique<Verified>();
  R->Parsed = ptx::parseString(Text, "test.ptx", [](const ptx::Diagnostic &D) {
    ADD_FAILURE() << D.Message;
  });
  const ptx::Function *F = nullptr;
  for (const ptx::Function *G : R->Parsed.M->functions())
    if (G->isDefinition() && G->isEntry())
      F = G;
  if (!F) {
    ADD_FAILURE() << "no entry";
    return R;
  }
  R->P = buildProtocol(*R->Parsed.M, *F);
  R->Verdicts = verifyProtocol(*R->P, Options);
  return R;
}

std::string verifyInput(const std::string &Name) {
  std::string Path = std::string(WSV_VERIFY_INPUTS) + "/" + Name;
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer) {
    ADD_FAILURE() << "cannot read " << Path;
    return {};
  }
  return (*Buffer)->getBuffer().str();
}

std::string describe(const Verdict &V) {
  std::string S = std::string(toString(V.K)) + " by " + V.Engine + " (bound " +
                  std::to_string(V.BoundReached) + "): " + V.Reason;
  for (const VerifyStep &Step : V.Schedule)
    S += "\n  " + std::to_string(Step.Step + 1) + ". " + Step.Agent + ": " + Step.What;
  return S;
}

} // namespace test
} // namespace analyzer
} // namespace wsv
