// One job on the GPU: open the device, load the job's PTX, and for every problem draw fresh
// inputs, poison the output, launch under a watchdog, and compare every element with cuBLAS; a
// checked build's hang is read back from its capture and written as a trace.
#include "Bench.h"
#include "Cublas.h"
#include "GemmModule.h"
#include "Memory.h"

#include "wsv/runner/Runner.h"
#include "wsv/runner/Trace.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace wsv {
namespace runner {

namespace {

/// Milliseconds the host waits for one launch before it calls the run a hang.
uint32_t watchdogMs(const RunOptions &O, const Problem &P, bool Checked) {
  if (O.WatchdogMs)
    return O.WatchdogMs;
  // Far above any legitimate run (50 TFLOP/s is 15x below these kernels), and past the device
  // timeout plus its grace period so a checked hang is captured before the host gives up.
  const uint32_t Work = static_cast<uint32_t>(P.flops() / 50e12 * 1e3) + 5000;
  return Checked ? Work + 2 * O.TimeoutMs : Work;
}

enum class Finish { Done, Failed, TimedOut };

/// Waits for Event, giving up after LimitMs; Err gets the failure of a failed launch.
Finish waitFor(cudaEvent_t Event, uint32_t LimitMs, cudaError_t &Err) {
  const auto Start = std::chrono::steady_clock::now();
  while (true) {
    Err = cudaEventQuery(Event);
    if (Err == cudaSuccess)
      return Finish::Done;
    if (Err != cudaErrorNotReady)
      return Finish::Failed;
    const auto Ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
    if (Ms >= LimitMs)
      return Finish::TimedOut;
    std::this_thread::sleep_for(std::chrono::microseconds(Ms < 20 ? 50 : 1000));
  }
}

std::string traceFileName(const Job &J, const Problem &P) {
  std::string Name = J.Kernel;
  if (!J.Variant.empty())
    Name += ".bug-" + J.Variant;
  Name += std::string(".") + dtypeName(P.Type) + "." + std::to_string(P.M) + "x" +
          std::to_string(P.N) + "x" + std::to_string(P.K) + ".trace.json";
  return Name;
}

struct GpuState {
  const DriverApi *Driver = nullptr;
  cudaStream_t Stream = nullptr;
  std::unique_ptr<Cublas> Blas;
  std::unique_ptr<GemmModule> Module;
  std::unique_ptr<HangCaptureBuffer> Capture;
  cudaEvent_t Start = nullptr, Stop = nullptr;
  uint64_t Seed = 0;
  unsigned HostThreads = 1;
};

/// Reads the capture into C (summary, trace file) and tells whether it held any record.
bool collectHang(GpuState &S, const Job &J, const RunOptions &O, const LaunchGeometry &G,
                 const Problem &P, CaseResult &C) {
  if (!S.Capture)
    return false;
  HangReport H = readHangCapture(S.Capture->host(), S.Module->info(),
                                 static_cast<uint64_t>(O.TimeoutMs) * 1000000ull);
  if (H.empty())
    return false;
  C.Hang = H.summary();
  TraceLaunch L;
  L.Kernel = J.Kernel;
  L.Entry = S.Module->entryName(J.Kernel, P.Type);
  L.Variant = J.Variant;
  L.PtxFile = J.Ptx;
  std::copy(G.Grid, G.Grid + 3, L.Grid);
  std::copy(G.Block, G.Block + 3, L.Block);
  std::copy(G.Cluster, G.Cluster + 3, L.Cluster);
  L.SmemBytes = G.SmemBytes;
  L.P = P;
  const std::string Path = O.TraceDir + "/" + traceFileName(J, P);
  std::ofstream Out(Path);
  Out << hangTraceJson(H, L);
  C.TraceFile = Out ? Path : "";
  if (!Out)
    C.Message += " (could not write the trace to " + Path + ")";
  return true;
}

/// One check. Returns false when the CUDA context is lost (later cases cannot run).
bool runCase(GpuState &S, const Job &J, const RunOptions &O, const Problem &P, CaseResult &C,
             JobResult &R, const EmitFn &Emit) {
  const abi::KernelInfo &Info = S.Module->info();
  if (std::optional<std::string> Why = shapeRefusal(Info, P)) {
    C.Result = Outcome::Refused;
    C.Message = "refused: " + *Why;
    return true;
  }
  auto Fail = [&](Outcome Res, const std::string &Why) {
    C.Result = Res;
    C.Message = Why;
    return true;
  };
  if (Status St = S.Module->prepare(J.Kernel, P.Type))
    return Fail(Outcome::LaunchError, St.message());
  LaunchGeometry G = J.Spec->Geometry(Info, P, 0);
  if (Info.Persistent) {
    Expected<uint32_t> Resident = S.Module->residentCtas(P.Type, G);
    if (!Resident)
      return Fail(Outcome::LaunchError, Resident.status().message());
    G = J.Spec->Geometry(Info, P, *Resident);
  }

  const uint64_t ASize = uint64_t(P.M) * P.K, BSize = uint64_t(P.N) * P.K,
                 DSize = uint64_t(P.M) * P.N;
  Expected<DeviceBuffer> A = DeviceBuffer::allocate(ASize * 2, "A");
  Expected<DeviceBuffer> B = DeviceBuffer::allocate(BSize * 2, "B");
  Expected<DeviceBuffer> D = DeviceBuffer::allocate(DSize * 2, "D");
  Expected<DeviceBuffer> Ref = DeviceBuffer::allocate(DSize * 4, "the fp32 reference");
  for (const Expected<DeviceBuffer> *Buf : {&A, &B, &D, &Ref})
    if (!*Buf)
      return Fail(Outcome::LaunchError, Buf->status().message());
  // A fresh draw for every check: a kernel must compute the function, not one input.
  if (Status St = uploadRandom(*A, ASize, P.Type, S.Seed++))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = uploadRandom(*B, BSize, P.Type, S.Seed++))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = poison(*D, S.Stream))
    return Fail(Outcome::LaunchError, St.message());
  if (S.Capture) {
    S.Capture->reset();
    if (Status St = S.Module->armCapture(*S.Capture, uint64_t(O.TimeoutMs) * 1000000ull))
      return Fail(Outcome::LaunchError, St.message());
  }
  if (Status St = cudaCheck(cudaStreamSynchronize(S.Stream), "preparing the inputs"))
    return Fail(Outcome::LaunchError, St.message());

  // Tell the watching parent what is about to run, so a kill names it.
  C.Result = Outcome::NotRun;
  C.Message = "running";
  R.Cases.push_back(C);
  Emit(toJson(R));
  R.Cases.pop_back();
  C.Message.clear();

  if (Status St = cudaCheck(cudaEventRecord(S.Start, S.Stream), "recording an event"))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = S.Module->launch(P.Type, G, {A->get(), B->get(), D->get()}, P, S.Stream))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = cudaCheck(cudaEventRecord(S.Stop, S.Stream), "recording an event"))
    return Fail(Outcome::LaunchError, St.message());
  const uint32_t Limit = watchdogMs(O, P, S.Capture != nullptr);
  cudaError_t Err = cudaSuccess;
  const Finish F = waitFor(S.Stop, Limit, Err);
  if (F == Finish::TimedOut) {
    C.Result = Outcome::Hang;
    C.Message = "did not finish within " + std::to_string(Limit) + " ms: ended by the host watchdog";
    if (!collectHang(S, J, O, G, P, C))
      C.Message += S.Capture ? " (no warp was inside an instrumented wait)"
                             : " (rerun with --check to capture where each role waits)";
    R.Cases.push_back(C);
    Emit(toJson(R));
    // The kernel still runs and every CUDA call would wait for it; process exit ends it.
    _exit(1);
  }
  if (F == Finish::Failed) {
    const std::string What = std::string(cudaGetErrorName(Err)) + " (" + cudaGetErrorString(Err) + ")";
    if (collectHang(S, J, O, G, P, C)) {
      C.Result = Outcome::Hang;
      C.Message = "hang captured after " + std::to_string(O.TimeoutMs) +
                  " ms in a wait; the kernel trapped: " + What;
    } else {
      C.Result = Outcome::LaunchError;
      C.Message = "the kernel failed: " + What;
    }
    return false;
  }
  float Ms = 0;
  if (Status St = cudaCheck(cudaEventElapsedTime(&Ms, S.Start, S.Stop), "reading the launch time"))
    return Fail(Outcome::LaunchError, St.message());
  C.KernelMs = Ms;

  if (Status St = S.Blas->gemm(P, A->get(), B->get(), Ref->get(), /*Fp32Out=*/true))
    return Fail(Outcome::LaunchError, St.message());
  std::vector<uint16_t> Out(DSize);
  std::vector<float> RefHost(DSize);
  if (Status St = cudaCheck(cudaMemcpyAsync(Out.data(), D->get(), DSize * 2,
                                            cudaMemcpyDeviceToHost, S.Stream),
                            "reading the output"))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = cudaCheck(cudaMemcpyAsync(RefHost.data(), Ref->get(), DSize * 4,
                                            cudaMemcpyDeviceToHost, S.Stream),
                            "reading the reference"))
    return Fail(Outcome::LaunchError, St.message());
  if (Status St = cudaCheck(cudaStreamSynchronize(S.Stream), "reading the results"))
    return Fail(Outcome::LaunchError, St.message());
  C.Cmp = compareWithReference(P.Type, Out.data(), RefHost.data(), DSize, S.HostThreads);
  C.Result = C.Cmp.Pass ? Outcome::Pass : Outcome::Wrong;
  if (!C.Cmp.Pass) {
    const uint64_t Row = C.Cmp.FirstBad == UINT64_MAX ? 0 : C.Cmp.FirstBad / P.N;
    const uint64_t Col = C.Cmp.FirstBad == UINT64_MAX ? 0 : C.Cmp.FirstBad % P.N;
    C.Message = std::to_string(C.Cmp.Unwritten) + " unwritten, " +
                std::to_string(C.Cmp.OutOfTolerance + C.Cmp.NonFinite) +
                " out of tolerance of " + std::to_string(C.Cmp.Elements) + "; first at (" +
                std::to_string(Row) + ", " + std::to_string(Col) + ")";
  }
  return true;
}

DeviceSummary describeDevice(const cudaDeviceProp &Prop, int DriverVersion) {
  DeviceSummary D;
  D.Name = Prop.name;
  D.Major = Prop.major;
  D.Minor = Prop.minor;
  D.Sms = Prop.multiProcessorCount;
  D.L2Bytes = static_cast<uint64_t>(Prop.l2CacheSize);
  D.Driver = std::to_string(DriverVersion / 1000) + "." + std::to_string(DriverVersion % 1000 / 10);
  return D;
}

} // namespace

JobResult runJob(const Job &J, const RunOptions &O, const EmitFn &Emit) {
  JobResult R;
  int Count = 0;
  if (cudaGetDeviceCount(&Count) != cudaSuccess || Count == 0) {
    R.Error = "no CUDA GPU is visible (cudaGetDeviceCount found none)";
    R.Refused = true;
    return R;
  }
  cudaDeviceProp Prop{};
  if (Status S = cudaCheck(cudaGetDeviceProperties(&Prop, 0), "reading the GPU's properties")) {
    R.Error = S.message();
    return R;
  }
  int DriverVersion = 0;
  if (Status S = cudaCheck(cudaDriverGetVersion(&DriverVersion), "reading the driver version")) {
    R.Error = S.message();
    return R;
  }
  R.Device = describeDevice(Prop, DriverVersion);
  if (std::optional<std::string> Why =
          deviceRefusal(*J.Spec, Prop.major, Prop.minor, R.Device.Name)) {
    R.Error = *Why;
    R.Refused = true;
    R.Skipped = J.FromAll;
    return R;
  }

  GpuState S;
  S.HostThreads = std::max(1u, std::thread::hardware_concurrency());
  S.Seed = O.Seed ? O.Seed
                  : static_cast<uint64_t>(
                        std::chrono::steady_clock::now().time_since_epoch().count()) ^
                        (static_cast<uint64_t>(getpid()) << 32);
  auto Setup = [&]() -> Status {
    if (Status St = cudaCheck(cudaSetDevice(0), "selecting GPU 0"))
      return St;
    if (Status St = cudaCheck(cudaFree(nullptr), "creating the CUDA context"))
      return St;
    Expected<const DriverApi *> D = driverApi();
    if (!D)
      return D.takeError();
    S.Driver = *D;
    if (Status St = cudaCheck(cudaStreamCreateWithFlags(&S.Stream, cudaStreamNonBlocking),
                              "creating a stream"))
      return St;
    if (Status St = cudaCheck(cudaEventCreate(&S.Start), "creating an event"))
      return St;
    if (Status St = cudaCheck(cudaEventCreate(&S.Stop), "creating an event"))
      return St;
    Expected<std::unique_ptr<Cublas>> B = Cublas::create(S.Stream);
    if (!B)
      return B.takeError();
    S.Blas = std::move(*B);
    Expected<std::unique_ptr<GemmModule>> M = GemmModule::load(*S.Driver, J.Ptx);
    if (!M)
      return M.takeError();
    S.Module = std::move(*M);
    for (const std::string &W : S.Module->jitWarnings())
      R.Notes.push_back("ptxas (JIT of " + J.Ptx + "): " + W);
    if (J.Flavor == PtxFlavor::Checked) {
      if (!S.Module->checked())
        return Status::error(J.Ptx + " is not a checked build");
      Expected<std::unique_ptr<HangCaptureBuffer>> Cap = HangCaptureBuffer::create(4096);
      if (!Cap)
        return Cap.takeError();
      S.Capture = std::move(*Cap);
    }
    return Status::ok();
  };
  if (Status St = Setup()) {
    R.Error = St.message();
    return R;
  }
  Emit(toJson(R));

  const abi::KernelInfo &Info = S.Module->info();
  bool ContextLost = false;
  const bool RunChecks = !O.Bench || !O.Problems.empty();
  if (RunChecks)
    for (Dtype T : O.Dtypes) {
      std::vector<Problem> Problems = O.Problems;
      if (Problems.empty()) {
        Problems = defaultCheckProblems(Info, T);
        // A seeded bug's first failure ends the job (a hang or trap loses the context), so the
        // largest problem goes first: several tiles per CTA and a wrapping ring give every role
        // a wait to be caught in.
        if (!J.Variant.empty())
          std::reverse(Problems.begin(), Problems.end());
      }
      for (Problem P : Problems) {
        P.Type = T;
        for (uint32_t Rep = 0; Rep < O.Repeats; ++Rep) {
          CaseResult C;
          C.Kernel = J.Kernel;
          C.Variant = J.Variant;
          C.Flavor = flavorName(J.Flavor);
          C.PtxFile = J.Ptx;
          C.P = P;
          if (ContextLost) {
            C.Result = Outcome::NotRun;
            C.Message = "not run: the CUDA context was lost to an earlier failure";
          } else if (!runCase(S, J, O, P, C, R, Emit)) {
            ContextLost = true;
          }
          R.Cases.push_back(C);
          Emit(toJson(R));
        }
      }
    }

  if (O.Bench && !ContextLost)
    runBench(*S.Driver, *S.Module, *S.Blas, S.Stream, J, O, Prop, R, Emit);
  return R;
}

} // namespace runner
} // namespace wsv
