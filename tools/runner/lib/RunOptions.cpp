#include "wsv/runner/RunOptions.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace wsv {
namespace runner {

const char RunUsage[] =
    "usage: wsv run <kernel|all> [options]\n"
    "\n"
    "Loads the kernel's PTX (the file wsv analyzes) through the CUDA driver, runs it on random\n"
    "inputs and compares every output element with cuBLAS (bf16/fp16 in, fp32 accumulate).\n"
    "\n"
    "options:\n"
    "  --bug <check>         run the variant built with -DWSV_BUG=<check>\n"
    "  --m M --n N --k K     one problem size (all three)\n"
    "  --shape MxNxK         a problem size; repeatable (default: the kernel's check sizes)\n"
    "  --dtype bf16|fp16|both  input/output type (default: both; bf16 with --bench)\n"
    "  --check               instrumented waits: a hang is captured per role and written as a\n"
    "                        wsv-trace/1 JSON file\n"
    "  --clang               run the clang-19 build (<kernel>.clang.ptx)\n"
    "  --timeout-ms T        a checked wait gives up after T ms (default 2000)\n"
    "  --watchdog-ms T       the host ends a run after T ms (default: from the work)\n"
    "  --trace-dir DIR       where hang traces are written (default .)\n"
    "  --repeat R            check each size R times, each with a fresh draw\n"
    "  --seed S              first random seed (default: from the clock)\n"
    "  --bench               time against cuBLAS at 4096^3 and 8192^3 (median of CUDA-event\n"
    "                        timings after warm-up, inputs rotated past L2); with --check also\n"
    "                        times the plain build and reports the instrumented build's cost\n"
    "  --sizes S1,S2,...     cube sizes for --bench\n"
    "  --sweep               --bench over 1024, 2048, 3072, 4096, 6144, 8192\n"
    "  --iters N             timed launches per measurement\n"
    "  --no-verify           with --bench, skip the correctness check\n"
    "  --ptx FILE            run FILE with the kernel's launch description (tuning builds)\n"
    "  --ptx-dir DIR         where kernels.json and the PTX are (default: <bin>/../ptx)\n"
    "  --format text|json    output format (default text)\n"
    "  --no-isolate          run in this process instead of a watched child process\n"
    "\n"
    "exit codes: 0 every run passed, 1 a wrong result, hang or failed launch, 2 bad usage or a\n"
    "shape or GPU the kernel cannot run on\n";

namespace {

bool parseUnsigned(const char *S, uint64_t Max, uint64_t &Out) {
  if (!S || !*S || *S == '-')
    return false;
  errno = 0;
  char *End = nullptr;
  const unsigned long long V = std::strtoull(S, &End, 10);
  if (errno || *End || V > Max)
    return false;
  Out = V;
  return true;
}

Status badValue(const char *Flag, const char *Value, const char *Expect) {
  return Status::error(std::string("invalid value '") + (Value ? Value : "") + "' for " + Flag +
                       ": expected " + Expect);
}

} // namespace

Expected<Problem> parseShape(const std::string &S) {
  Problem P;
  uint32_t *Dims[3] = {&P.M, &P.N, &P.K};
  size_t Pos = 0;
  for (int D = 0; D < 3; ++D) {
    const size_t End = D < 2 ? S.find('x', Pos) : S.size();
    if (End == std::string::npos || End == Pos)
      return Status::error("invalid shape '" + S + "': expected MxNxK");
    uint64_t V;
    if (!parseUnsigned(S.substr(Pos, End - Pos).c_str(), UINT32_MAX, V) || V == 0)
      return Status::error("invalid shape '" + S + "': expected positive MxNxK");
    *Dims[D] = static_cast<uint32_t>(V);
    Pos = End + 1;
  }
  return P;
}

Expected<RunOptions> parseRunOptions(int Argc, char **Argv) {
  RunOptions O;
  uint64_t Dims[3] = {0, 0, 0};
  bool HaveDim[3] = {false, false, false};
  bool BothDtypes = false;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Value = [&](const char *Flag) -> const char * {
      if (I + 1 >= Argc)
        return nullptr;
      (void)Flag;
      return Argv[++I];
    };
    auto Missing = [&](const char *Flag) {
      return Status::error(std::string("option ") + Flag + " needs a value");
    };
    uint64_t V;
    if (A == "--bug") {
      const char *S = Value("--bug");
      if (!S)
        return Missing("--bug");
      O.Bug = S;
    } else if (A == "--m" || A == "--n" || A == "--k") {
      const int D = A == "--m" ? 0 : (A == "--n" ? 1 : 2);
      const char *S = Value(A.c_str());
      if (!S)
        return Missing(A.c_str());
      if (!parseUnsigned(S, UINT32_MAX, V) || V == 0)
        return badValue(A.c_str(), S, "a positive integer");
      Dims[D] = V;
      HaveDim[D] = true;
    } else if (A == "--shape") {
      const char *S = Value("--shape");
      if (!S)
        return Missing("--shape");
      Expected<Problem> P = parseShape(S);
      if (!P)
        return P.takeError();
      O.Problems.push_back(*P);
    } else if (A == "--dtype") {
      const char *S = Value("--dtype");
      if (!S)
        return Missing("--dtype");
      if (std::string(S) == "both") {
        BothDtypes = true;
      } else if (std::optional<Dtype> T = parseDtype(S)) {
        O.Dtypes.push_back(*T);
      } else {
        return badValue("--dtype", S, "bf16, fp16 or both");
      }
    } else if (A == "--check") {
      O.Check = true;
    } else if (A == "--clang") {
      O.Clang = true;
    } else if (A == "--bench") {
      O.Bench = true;
    } else if (A == "--sweep") {
      O.Bench = true;
      O.BenchSizes = {1024, 2048, 3072, 4096, 6144, 8192};
    } else if (A == "--sizes") {
      const char *S = Value("--sizes");
      if (!S)
        return Missing("--sizes");
      O.BenchSizes.clear();
      std::string List = S;
      size_t Pos = 0;
      while (Pos <= List.size()) {
        const size_t End = std::min(List.find(',', Pos), List.size());
        if (!parseUnsigned(List.substr(Pos, End - Pos).c_str(), 65536, V) || V == 0)
          return badValue("--sizes", S, "a comma-separated list of sizes");
        O.BenchSizes.push_back(static_cast<uint32_t>(V));
        Pos = End + 1;
      }
    } else if (A == "--iters" || A == "--repeat" || A == "--timeout-ms" || A == "--watchdog-ms") {
      const char *S = Value(A.c_str());
      if (!S)
        return Missing(A.c_str());
      if (!parseUnsigned(S, 100000000, V) || V == 0)
        return badValue(A.c_str(), S, "a positive integer");
      (A == "--iters" ? O.BenchIters
                      : A == "--repeat" ? O.Repeats
                                        : A == "--timeout-ms" ? O.TimeoutMs : O.WatchdogMs) =
          static_cast<uint32_t>(V);
    } else if (A == "--seed") {
      const char *S = Value("--seed");
      if (!S)
        return Missing("--seed");
      if (!parseUnsigned(S, UINT64_MAX, V))
        return badValue("--seed", S, "an unsigned integer");
      O.Seed = V;
    } else if (A == "--no-verify") {
      O.Verify = false;
    } else if (A == "--no-isolate") {
      O.Isolate = false;
    } else if (A == "--ptx" || A == "--ptx-dir" || A == "--trace-dir") {
      const char *S = Value(A.c_str());
      if (!S)
        return Missing(A.c_str());
      (A == "--ptx" ? O.PtxFile : A == "--ptx-dir" ? O.PtxDir : O.TraceDir) = S;
    } else if (A == "--format") {
      const char *S = Value("--format");
      if (!S)
        return Missing("--format");
      if (std::string(S) == "json")
        O.Format = OutputFormat::Json;
      else if (std::string(S) == "text")
        O.Format = OutputFormat::Text;
      else
        return badValue("--format", S, "text or json");
    } else if (!A.empty() && A[0] == '-') {
      return Status::error("unknown option '" + A + "'");
    } else {
      O.Kernels.push_back(A);
    }
  }

  if (O.Kernels.empty())
    return Status::error("no kernel named (a name from 'wsv kernels', or all)");
  const int Given = HaveDim[0] + HaveDim[1] + HaveDim[2];
  if (Given != 0 && Given != 3)
    return Status::error("--m, --n and --k go together");
  if (Given == 3) {
    Problem P;
    P.M = static_cast<uint32_t>(Dims[0]);
    P.N = static_cast<uint32_t>(Dims[1]);
    P.K = static_cast<uint32_t>(Dims[2]);
    O.Problems.push_back(P);
  }
  if (O.Check && O.Clang)
    return Status::error("--check and --clang cannot be combined: the clang build has no "
                         "instrumented variant");
  if (!O.PtxFile.empty() && O.Kernels.size() != 1)
    return Status::error("--ptx needs exactly one kernel, whose launch description it uses");
  for (const std::string &K : O.Kernels)
    if (K == "all" && O.Kernels.size() != 1)
      return Status::error("'all' cannot be combined with kernel names");
  if (O.Bench && O.BenchSizes.empty())
    O.BenchSizes = {4096, 8192};
  if (BothDtypes || O.Dtypes.empty()) {
    if (BothDtypes || !O.Bench)
      O.Dtypes = {Dtype::Bf16, Dtype::F16};
    else
      O.Dtypes = {Dtype::Bf16};
  }
  return O;
}

} // namespace runner
} // namespace wsv
