// What the analyzer tests share: parse a PTX snippet, analyze one of its functions, and
// find instructions by what their source line says.
#pragma once

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {
namespace test {

/// `.version`, `.target sm_100a`, `.address_size 64`: tests put their functions after it.
extern const char ModuleHeader[];

/// A parsed module and the analysis of one function of it.
class Analyzed {
public:
  /// Parses ModuleHeader + Text and analyzes Function (the first definition when empty).
  /// Parse errors fail the current test.
  explicit Analyzed(llvm::StringRef Text, llvm::StringRef Function = {},
                    const AnalysisOptions &Options = {});

  const ptx::Module &module() const { return *Result.M; }
  FunctionAnalysis &fa() { return *FA; }
  const Cfg &cfg() { return FA->cfg(); }
  const LoopInfo &loops() { return FA->loops(); }
  const ValueAnalysis &values() { return FA->values(); }
  ExprContext &ctx() { return FA->context(); }
  GuardAnalysis &guards() { return FA->guards(); }

  /// The first instruction occurrence (frame 0 unless Frame says otherwise) whose source line
  /// contains Needle, after the header. Fails the test when there is none.
  InstId inst(llvm::StringRef Needle, unsigned Occurrence = 0);
  /// The block of that instruction.
  BlockId blockOf(llvm::StringRef Needle) { return cfg().inst(inst(Needle)).Block; }
  /// The innermost loop containing that instruction (NoIndex when none).
  LoopId loopOf(llvm::StringRef Needle) { return loops().loopFor(blockOf(Needle)); }
  /// The value of register Name just before the instruction on Needle's line, closed form.
  const Expr *before(llvm::StringRef Needle, llvm::StringRef Name);
  /// A leaf for a kernel parameter of the analyzed function, by name.
  const Expr *param(llvm::StringRef Name, unsigned Width = 32);
  const Expr *tid() { return ctx().specialRegister(SpecialRegister::TidX); }
  /// The threads of a CTA of the function's .maxntid / .reqntid that execute the instruction.
  ThreadSet threads(llvm::StringRef Needle);

private:
  std::string Source;
  ptx::ParseResult Result;
  std::unique_ptr<FunctionAnalysis> FA;
};

/// A whole PTX module (its entry `k`) turned into a protocol, role programs, the instance
/// with default parameters, and that instance explored.
struct Explored {
  ptx::ParseResult Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
  ConcreteSystem S;
  ExploreResult R;
};
/// Parse errors fail the current test.
std::unique_ptr<Explored> exploreEntry(const std::string &Text);

/// The printed form of an expression (and "null").
std::string str(const Expr *E);

/// A reference kernel's PTX from the build (WSV_PTX_DIR), its first entry as role programs,
/// and the options exploreAllTrips takes for it (its k-tile from wsv_kernel_info).
struct ReferenceKernel {
  std::unique_ptr<ptx::ParseResult> Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
  ParametricOptions Options;
};
/// Nothing when the file is not built or does not parse (the test then skips).
std::optional<ReferenceKernel> loadReferenceKernel(const std::string &File);

/// H6's consumer arrivals that no launch of one cluster with K up to 576 runs: the releases
/// at the end of its stream-K pieces, which only larger grids run.
std::vector<std::pair<unsigned, unsigned>> streamKArrivals(const ReferenceKernel &K);

} // namespace test

// GoogleTest prints expressions in failure messages through these.
void PrintTo(const Expr *E, std::ostream *OS);
std::ostream &operator<<(std::ostream &OS, const Expr &E);
} // namespace analyzer
} // namespace wsv
