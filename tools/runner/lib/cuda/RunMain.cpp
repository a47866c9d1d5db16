// `wsv run`: the parent never touches CUDA. It plans the jobs, forks a watched child for each
// (the child runs runJob and streams its cumulative result as JSON lines), turns a killed or
// crashed child into a result, and prints the tables or the JSON report.
#include "wsv/runner/Runner.h"

#include <cstdio>
#include <csignal>
#include <cstring>

namespace wsv {
namespace runner {

namespace {

/// The parent's limit on silence: the child's own watchdog plus time to JIT-compile the module,
/// draw inputs and compare a large output.
uint32_t silenceLimitMs(const RunOptions &O) {
  const uint32_t Watchdog = O.WatchdogMs ? O.WatchdogMs : 60000;
  return Watchdog + (O.Check ? 2 * O.TimeoutMs : 0) + 120000;
}

JobResult runIsolated(const Job &J, const RunOptions &O) {
  ChildOutcome C = runWatchedChild(
      [&](const EmitFn &Emit) {
        JobResult R = runJob(J, O, Emit);
        Emit(toJson(R));
        return R.exitCode();
      },
      silenceLimitMs(O));
  JobResult R;
  if (!C.Error.empty()) {
    R.Error = "could not start the watched child: " + C.Error;
    return R;
  }
  if (C.LastLine.empty() || !fromJson(C.LastLine, R)) {
    R = JobResult();
    R.Error = "the child running " + J.Kernel + " ended without a result (" +
              (C.Killed ? std::string("killed by the host watchdog")
               : C.Signal ? std::string("signal ") + strsignal(C.Signal)
                          : "exit code " + std::to_string(C.ExitCode)) +
              ")";
    return R;
  }
  // A case announced as running but never finished: the child died or was killed under it.
  if (!R.Cases.empty() && R.Cases.back().Result == Outcome::NotRun &&
      R.Cases.back().Message == "running") {
    CaseResult &Last = R.Cases.back();
    Last.Result = Outcome::Hang;
    Last.Message = C.Killed ? "no progress for " + std::to_string(silenceLimitMs(O)) +
                                  " ms: the host watchdog killed the run"
                            : std::string("the run ended abnormally") +
                                  (C.Signal ? std::string(" (") + strsignal(C.Signal) + ")" : "");
  } else if ((C.Killed || C.Signal) && R.Error.empty()) {
    R.Error = C.Killed ? "the host watchdog killed the run" : std::string("the run ended by ") +
                                                                  strsignal(C.Signal);
  }
  return R;
}

} // namespace

int runMain(const RunOptions &O) {
  const std::string PtxDir = O.PtxDir.empty() ? defaultPtxDir() : O.PtxDir;
  Expected<Manifest> M = readManifest(PtxDir);
  if (!M) {
    std::fprintf(stderr, "wsv run: error: %s\n", M.status().message().c_str());
    return 2;
  }
  Expected<std::vector<Job>> Jobs = planJobs(O, *M);
  if (!Jobs) {
    std::fprintf(stderr, "wsv run: error: %s\n", Jobs.status().message().c_str());
    return 2;
  }

  std::vector<JobResult> Results;
  int Code = 0;
  bool PrintedDevice = false;
  for (const Job &J : *Jobs) {
    JobResult R;
    if (O.Isolate) {
      R = runIsolated(J, O);
    } else {
      // In-process: a hang ends the process inside runJob, so print it as it is emitted.
      R = runJob(J, O, [&](const std::string &Line) {
        JobResult Partial;
        if (fromJson(Line, Partial) && !Partial.Cases.empty() &&
            Partial.Cases.back().Result == Outcome::Hang && O.Format == OutputFormat::Text) {
          std::printf("%s", formatCases({Partial}).c_str());
          std::fflush(stdout);
        }
      });
    }
    if (O.Format == OutputFormat::Text) {
      if (!PrintedDevice && !R.Device.Name.empty()) {
        std::printf("device: %s (sm_%d%d, %d SMs, %.0f MB L2, driver %s)\n", R.Device.Name.c_str(),
                    R.Device.Major, R.Device.Minor, R.Device.Sms, R.Device.L2Bytes / 1e6,
                    R.Device.Driver.c_str());
        PrintedDevice = true;
      }
      std::printf("%s", formatCases({R}).c_str());
      std::fflush(stdout);
    }
    const int C = R.exitCode();
    Code = (C == 1 || Code == 1) ? 1 : std::max(Code, C);
    Results.push_back(std::move(R));
  }
  if (O.Format == OutputFormat::Json) {
    std::printf("%s", runReportJson(Results).c_str());
  } else {
    const std::string Bench = formatBench(Results);
    if (!Bench.empty())
      std::printf("\n%s", Bench.c_str());
  }
  return Code;
}

} // namespace runner
} // namespace wsv
