#include "Bench.h"

#include "Memory.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <unistd.h>

namespace wsv {
namespace runner {

Percentiles percentiles(std::vector<float> &Samples) {
  Percentiles P;
  if (Samples.empty())
    return P;
  std::sort(Samples.begin(), Samples.end());
  auto At = [&](double Q) {
    const double Pos = Q * (Samples.size() - 1);
    const size_t Lo = static_cast<size_t>(Pos);
    const size_t Hi = std::min(Lo + 1, Samples.size() - 1);
    return Samples[Lo] + (Pos - Lo) * (Samples[Hi] - Samples[Lo]);
  };
  P.P10 = At(0.1);
  P.Median = At(0.5);
  P.P90 = At(0.9);
  return P;
}

namespace {

struct InputSet {
  DeviceBuffer A, B, D;
};

/// A contender: something that enqueues one GEMM on the stream for input set I.
struct Contender {
  std::function<Status(const InputSet &)> Launch;
  std::vector<float> Ms;
};

/// Waits for the stream with a host-side limit; a timeout ends the process (see runJob).
Status syncOrDie(cudaStream_t Stream, uint32_t LimitMs, JobResult &R, const EmitFn &Emit,
                 const std::string &What) {
  const auto Start = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t E = cudaStreamQuery(Stream);
    if (E == cudaSuccess)
      return Status::ok();
    if (E != cudaErrorNotReady)
      return cudaCheck(E, What);
    if (std::chrono::steady_clock::now() - Start > std::chrono::milliseconds(LimitMs)) {
      R.Error = What + ": no progress within " + std::to_string(LimitMs) +
                " ms; ended by the host watchdog";
      Emit(toJson(R));
      _exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

Status benchOne(GemmModule &Module, GemmModule *Plain, Cublas &Blas, cudaStream_t Stream,
                const Job &J, const RunOptions &O, const cudaDeviceProp &Prop, const Problem &P,
                BenchRow &Row, JobResult &R, const EmitFn &Emit) {
  const abi::KernelInfo &Info = Module.info();
  GemmModule *Timed = Plain ? Plain : &Module; // the build whose speed is the kernel's
  for (GemmModule *M : {&Module, Plain})
    if (M)
      if (Status S = M->prepare(J.Kernel, P.Type))
        return S;
  LaunchGeometry G = J.Spec->Geometry(Info, P, 0);
  if (Info.Persistent) {
    Expected<uint32_t> Resident = Module.residentCtas(P.Type, G);
    if (!Resident)
      return Resident.takeError();
    G = J.Spec->Geometry(Info, P, *Resident);
  }
  Row.GridCtas = G.Grid[0] * G.Grid[1] * G.Grid[2];

  const uint64_t ABytes = uint64_t(P.M) * P.K * 2, BBytes = uint64_t(P.N) * P.K * 2,
                 DBytes = uint64_t(P.M) * P.N * 2;
  const uint64_t SetBytes = ABytes + BBytes + DBytes;
  const uint64_t Want = 3ull * static_cast<uint64_t>(Prop.l2CacheSize);
  uint32_t Sets = static_cast<uint32_t>(std::min<uint64_t>(8, std::max<uint64_t>(2, (Want + SetBytes - 1) / SetBytes)));
  size_t Free = 0, Total = 0;
  if (Status S = cudaCheck(cudaMemGetInfo(&Free, &Total), "reading free GPU memory"))
    return S;
  while (Sets > 1 && Sets * SetBytes + (DBytes * 2) > Free * 0.8)
    --Sets;
  std::vector<InputSet> Inputs;
  for (uint32_t I = 0; I < Sets; ++I) {
    InputSet In;
    Expected<DeviceBuffer> A = DeviceBuffer::allocate(ABytes, "bench A");
    Expected<DeviceBuffer> B = DeviceBuffer::allocate(BBytes, "bench B");
    Expected<DeviceBuffer> D = DeviceBuffer::allocate(DBytes, "bench D");
    for (Expected<DeviceBuffer> *Buf : {&A, &B, &D})
      if (!*Buf)
        return Buf->takeError();
    In.A = std::move(*A);
    In.B = std::move(*B);
    In.D = std::move(*D);
    const uint64_t Seed = (O.Seed ? O.Seed : static_cast<uint64_t>(getpid())) * 1000 + I * 2 + 17;
    if (Status S = uploadRandom(In.A, ABytes / 2, P.Type, Seed))
      return S;
    if (Status S = uploadRandom(In.B, BBytes / 2, P.Type, Seed + 1))
      return S;
    Inputs.push_back(std::move(In));
  }
  Row.InputSets = Sets;

  const uint32_t Limit = 60000;
  // Correctness of the timed build at this size, on set 0.
  if (O.Verify) {
    Expected<DeviceBuffer> Ref = DeviceBuffer::allocate(uint64_t(P.M) * P.N * 4, "bench reference");
    if (!Ref)
      return Ref.takeError();
    Row.Verified = true;
    Row.VerifiedPass = true;
    // The timed build, and with --check the instrumented one as well.
    for (GemmModule *M : {Timed, Timed == &Module ? nullptr : &Module}) {
      if (!M)
        continue;
      if (Status S = poison(Inputs[0].D, Stream))
        return S;
      if (Status S = M->launch(P.Type, G, {Inputs[0].A.get(), Inputs[0].B.get(), Inputs[0].D.get()},
                               P, Stream))
        return S;
      if (Status S = syncOrDie(Stream, Limit, R, Emit, "verifying " + J.Kernel + " at " + P.str()))
        return S;
      if (Status S = Blas.gemm(P, Inputs[0].A.get(), Inputs[0].B.get(), Ref->get(), true))
        return S;
      const uint64_t Count = uint64_t(P.M) * P.N;
      std::vector<uint16_t> Out(Count);
      std::vector<float> RefHost(Count);
      if (Status S = cudaCheck(cudaMemcpyAsync(Out.data(), Inputs[0].D.get(), Count * 2,
                                               cudaMemcpyDeviceToHost, Stream),
                               "reading the bench output"))
        return S;
      if (Status S = cudaCheck(cudaMemcpyAsync(RefHost.data(), Ref->get(), Count * 4,
                                               cudaMemcpyDeviceToHost, Stream),
                               "reading the bench reference"))
        return S;
      if (Status S = syncOrDie(Stream, Limit, R, Emit, "reading the bench output"))
        return S;
      const Comparison C = compareWithReference(P.Type, Out.data(), RefHost.data(), Count,
                                                std::max(1u, std::thread::hardware_concurrency()));
      Row.VerifiedPass = Row.VerifiedPass && C.Pass;
    }
  }

  std::vector<Contender> Contenders;
  Contenders.push_back({[&](const InputSet &In) {
                          return Timed->launch(P.Type, G, {In.A.get(), In.B.get(), In.D.get()}, P,
                                               Stream);
                        },
                        {}});
  Contenders.push_back({[&](const InputSet &In) {
                          return Blas.gemm(P, In.A.get(), In.B.get(), In.D.get(), false);
                        },
                        {}});
  if (Plain)
    Contenders.push_back({[&](const InputSet &In) {
                            return Module.launch(P.Type, G, {In.A.get(), In.B.get(), In.D.get()},
                                                 P, Stream);
                          },
                          {}});

  // Enough launches that the median is stable: about 3e13 flop per contender, 30 at least. The
  // contenders alternate launch by launch, so clock and temperature drift hit all alike.
  const uint32_t Iters =
      O.BenchIters ? O.BenchIters
                   : static_cast<uint32_t>(std::clamp(3e13 / P.flops(), 30.0, 300.0));
  Row.Iterations = Iters;
  const size_t N = Contenders.size();
  std::vector<cudaEvent_t> Events(2 * N * Iters);
  for (cudaEvent_t &E : Events)
    if (Status S = cudaCheck(cudaEventCreate(&E), "creating timing events"))
      return S;

  uint32_t Next = 0;
  for (int W = 0; W < 10; ++W)
    for (Contender &C : Contenders)
      if (Status S = C.Launch(Inputs[Next++ % Sets]))
        return S;
  if (Status S = syncOrDie(Stream, Limit, R, Emit, "warming up at " + P.str()))
    return S;
  for (uint32_t I = 0; I < Iters; ++I)
    for (size_t C = 0; C < N; ++C) {
      cudaEvent_t *E = &Events[2 * (I * N + C)];
      if (Status S = cudaCheck(cudaEventRecord(E[0], Stream), "recording a timing event"))
        return S;
      if (Status S = Contenders[C].Launch(Inputs[Next++ % Sets]))
        return S;
      if (Status S = cudaCheck(cudaEventRecord(E[1], Stream), "recording a timing event"))
        return S;
    }
  if (Status S = syncOrDie(Stream, Limit, R, Emit, "timing at " + P.str()))
    return S;
  for (uint32_t I = 0; I < Iters; ++I)
    for (size_t C = 0; C < N; ++C) {
      float Ms = 0;
      if (Status S = cudaCheck(cudaEventElapsedTime(&Ms, Events[2 * (I * N + C)],
                                                    Events[2 * (I * N + C) + 1]),
                               "reading timing events"))
        return S;
      Contenders[C].Ms.push_back(Ms);
    }
  for (cudaEvent_t E : Events)
    if (Status S = cudaCheck(cudaEventDestroy(E), "destroying a timing event"))
      return S;

  const Percentiles K = percentiles(Contenders[0].Ms);
  Row.KernelMs = K.Median;
  Row.SpreadPct = K.Median > 0 ? 100.0 * (K.P90 - K.P10) / K.Median : 0;
  const Percentiles B = percentiles(Contenders[1].Ms);
  Row.CublasMs = B.Median;
  Row.CublasSpreadPct = B.Median > 0 ? 100.0 * (B.P90 - B.P10) / B.Median : 0;
  if (Plain)
    Row.CheckedMs = percentiles(Contenders[2].Ms).Median;
  return Status::ok();
}

} // namespace

void runBench(const DriverApi &Driver, GemmModule &Module, Cublas &Blas, cudaStream_t Stream,
              const Job &J, const RunOptions &O, const cudaDeviceProp &Prop, JobResult &R,
              const EmitFn &Emit) {
  std::unique_ptr<GemmModule> Plain;
  if (!J.PlainPtx.empty()) {
    Expected<std::unique_ptr<GemmModule>> M = GemmModule::load(Driver, J.PlainPtx);
    if (!M) {
      R.Error = M.status().message();
      return;
    }
    Plain = std::move(*M);
  }
  for (Dtype T : O.Dtypes)
    for (uint32_t Size : O.BenchSizes) {
      Problem P;
      P.M = P.N = P.K = Size;
      P.Type = T;
      BenchRow Row;
      Row.Kernel = J.Kernel;
      Row.Type = T;
      Row.Size = Size;
      if (std::optional<std::string> Why = shapeRefusal(Module.info(), P)) {
        CaseResult C;
        C.Kernel = J.Kernel;
        C.Flavor = flavorName(J.Flavor);
        C.P = P;
        C.Result = Outcome::Refused;
        C.Message = "bench refused: " + *Why;
        R.Cases.push_back(C);
        continue;
      }
      if (Status S = benchOne(Module, Plain.get(), Blas, Stream, J, O, Prop, P, Row, R, Emit)) {
        R.Error = "bench " + P.str() + ": " + S.message();
        Emit(toJson(R));
        return;
      }
      R.Bench.push_back(Row);
      Emit(toJson(R));
    }
}

} // namespace runner
} // namespace wsv
