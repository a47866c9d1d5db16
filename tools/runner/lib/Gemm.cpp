#include "wsv/runner/Gemm.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

namespace wsv {
namespace runner {

const char *dtypeName(Dtype T) { return T == Dtype::Bf16 ? "bf16" : "fp16"; }

std::optional<Dtype> parseDtype(const std::string &S) {
  if (S == "bf16")
    return Dtype::Bf16;
  if (S == "fp16" || S == "f16")
    return Dtype::F16;
  return std::nullopt;
}

const char *entrySuffix(Dtype T) { return T == Dtype::Bf16 ? "_bf16" : "_f16"; }

std::string Problem::str() const {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " " +
         dtypeName(Type);
}

std::optional<std::string> shapeRefusal(const abi::KernelInfo &Info, const Problem &P) {
  const uint64_t RowQuantum = static_cast<uint64_t>(Info.TileM) * Info.ClusterM;
  auto Need = [](const char *Dim, uint32_t Value, uint64_t Quantum, const char *Why) {
    return std::string(Dim) + " = " + std::to_string(Value) + " is not a positive multiple of " +
           std::to_string(Quantum) + " (" + Why + ")";
  };
  if (P.M == 0 || P.M % RowQuantum != 0)
    return Need("M", P.M, RowQuantum,
                Info.ClusterM > 1 ? "the tile height times the cluster size" : "the tile height");
  if (P.N == 0 || P.N % Info.TileN != 0)
    return Need("N", P.N, Info.TileN, "the tile width");
  if (P.K == 0 || P.K % Info.TileK != 0)
    return Need("K", P.K, Info.TileK, "the k-tile");
  const uint64_t MinK = static_cast<uint64_t>(Info.TileK) * std::max(1u, Info.MinKTiles);
  if (P.K < MinK)
    return "K = " + std::to_string(P.K) + " is below the smallest K the pipeline handles, " +
           std::to_string(MinK);
  // TMA tensor maps take 32-bit dimensions and need 16-byte aligned row strides; the kernels
  // index rows with 32-bit arithmetic.
  if (static_cast<uint64_t>(P.M) * P.K >= (1ull << 31) ||
      static_cast<uint64_t>(P.N) * P.K >= (1ull << 31) ||
      static_cast<uint64_t>(P.M) * P.N >= (1ull << 31))
    return "a matrix of this problem has 2^31 or more elements; the kernels index with 32 bits";
  if (!Info.Persistent) {
    const uint64_t GridY = P.N / Info.TileN;
    if (GridY > 65535)
      return "N / " + std::to_string(Info.TileN) + " = " + std::to_string(GridY) +
             " tiles exceeds the grid's y limit of 65535";
  }
  return std::nullopt;
}

Problem smallestProblem(const abi::KernelInfo &Info, Dtype T) {
  Problem P;
  P.M = Info.TileM * Info.ClusterM;
  P.N = Info.TileN;
  P.K = Info.TileK * std::max(1u, Info.MinKTiles);
  P.Type = T;
  return P;
}

std::vector<Problem> defaultCheckProblems(const abi::KernelInfo &Info, Dtype T) {
  const uint32_t Mq = Info.TileM * Info.ClusterM, Nq = Info.TileN, Kq = Info.TileK;
  std::vector<Problem> Out;
  Out.push_back(smallestProblem(Info, T));
  // Non-square, with 2 * Stages + 1 k-tiles: the ring wraps twice and ends mid-round, which a
  // parity or trip-count mistake cannot survive.
  Problem Odd;
  Odd.M = 3 * Mq;
  Odd.N = 5 * Nq;
  Odd.K = (2 * Info.Stages + 1) * Kq;
  Odd.Type = T;
  Out.push_back(Odd);
  // Larger than one wave of a persistent grid on a 132-SM part, not a power of two in any side.
  Problem Big;
  Big.M = 12 * Mq > 1536 ? 12 * Mq : (1536 / Mq) * Mq;
  Big.N = (2560 / Nq) * Nq;
  Big.K = (1088 / Kq) * Kq;
  Big.Type = T;
  Out.push_back(Big);
  return Out;
}

float bf16ToFloat(uint16_t Bits) {
  const uint32_t U = static_cast<uint32_t>(Bits) << 16;
  float F;
  std::memcpy(&F, &U, sizeof F);
  return F;
}

float f16ToFloat(uint16_t Bits) {
  const uint32_t Sign = static_cast<uint32_t>(Bits & 0x8000) << 16;
  const uint32_t Exp = (Bits >> 10) & 0x1f;
  const uint32_t Mant = Bits & 0x3ff;
  if (Exp == 0x1f) { // infinity or NaN
    const uint32_t U = Sign | 0x7f800000u | (Mant << 13);
    float F;
    std::memcpy(&F, &U, sizeof F);
    return F;
  }
  // Normal numbers are 1.m * 2^(e-15); subnormals m * 2^-24.
  const float Magnitude = Exp == 0 ? std::ldexp(static_cast<float>(Mant), -24)
                                   : std::ldexp(1.0f + Mant / 1024.0f, static_cast<int>(Exp) - 15);
  return Sign ? -Magnitude : Magnitude;
}

float elementToFloat(Dtype T, uint16_t Bits) {
  return T == Dtype::Bf16 ? bf16ToFloat(Bits) : f16ToFloat(Bits);
}

uint16_t gridValueBits(Dtype T, int Q) {
  assert(Q != 0 && Q >= -256 && Q <= 256 && "grid values are Q/256, Q in [-256, 256] \\ {0}");
  const float V = static_cast<float>(Q) / 256.0f;
  uint32_t U;
  std::memcpy(&U, &V, sizeof U);
  if (T == Dtype::Bf16)
    return static_cast<uint16_t>(U >> 16); // the low 16 bits are zero: at most 9 significant bits
  // |V| in [2^-8, 1]: a normal f16 with the same leading 10 mantissa bits.
  const uint32_t Sign = (U >> 16) & 0x8000;
  const int Exp = static_cast<int>((U >> 23) & 0xff) - 127 + 15;
  const uint32_t Mant = (U >> 13) & 0x3ff;
  return static_cast<uint16_t>(Sign | (static_cast<uint32_t>(Exp) << 10) | Mant);
}

static uint64_t splitMix64(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

static void fillRange(uint16_t *Out, uint64_t Begin, uint64_t End, Dtype T, uint64_t Seed) {
  // The 512 grid bit patterns, so the loop is one hash and one table read per element.
  uint16_t Table[512];
  for (int R = 0; R < 512; ++R)
    Table[R] = gridValueBits(T, R < 256 ? R - 256 : R - 255);
  const uint64_t Key = splitMix64(Seed);
  for (uint64_t I = Begin; I < End; ++I)
    Out[I] = Table[splitMix64(Key ^ (I * 0xd1b54a32d192ed03ull)) >> 55];
}

void fillRandomGrid(uint16_t *Out, uint64_t Count, Dtype T, uint64_t Seed, unsigned Threads) {
  Threads = std::max(1u, std::min(Threads, 64u));
  const uint64_t Chunk = (Count + Threads - 1) / Threads;
  std::vector<std::thread> Workers;
  for (unsigned W = 1; W < Threads; ++W) {
    const uint64_t Begin = std::min(Count, W * Chunk), End = std::min(Count, Begin + Chunk);
    Workers.emplace_back(fillRange, Out, Begin, End, T, Seed);
  }
  fillRange(Out, 0, std::min(Count, Chunk), T, Seed);
  for (std::thread &W : Workers)
    W.join();
}

Tolerance toleranceFor(Dtype T) {
  if (T == Dtype::Bf16)
    return {std::ldexp(1.0, -7), std::ldexp(1.0, -10), std::ldexp(1.0, -8)};
  return {std::ldexp(1.0, -10), std::ldexp(1.0, -12), std::ldexp(1.0, -11)};
}

namespace {

struct PartialSums {
  double ErrSq = 0, RefSq = 0, MaxAbs = 0;
  uint64_t Unwritten = 0, NonFinite = 0, Bad = 0, FirstBad = UINT64_MAX;
};

void sumRange(Dtype T, const uint16_t *Out, const float *Ref, uint64_t Begin, uint64_t End,
              double Rel, double Abs, PartialSums &S) {
  for (uint64_t I = Begin; I < End; ++I) {
    const double R = Ref[I];
    S.RefSq += R * R;
    if (Out[I] == PoisonBits) {
      ++S.Unwritten;
      if (S.FirstBad == UINT64_MAX)
        S.FirstBad = I;
      continue;
    }
    const double O = elementToFloat(T, Out[I]);
    if (!std::isfinite(O)) {
      ++S.NonFinite;
      if (S.FirstBad == UINT64_MAX)
        S.FirstBad = I;
      continue;
    }
    const double E = std::fabs(O - R);
    S.ErrSq += E * E;
    S.MaxAbs = std::max(S.MaxAbs, E);
    if (!(E <= Abs + Rel * std::fabs(R))) {
      ++S.Bad;
      if (S.FirstBad == UINT64_MAX)
        S.FirstBad = I;
    }
  }
}

} // namespace

Comparison compareWithReference(Dtype T, const uint16_t *Out, const float *Ref, uint64_t Count,
                                unsigned Threads) {
  Comparison C;
  C.Elements = Count;
  if (Count == 0)
    return C;
  // The absolute part of the bound needs the reference's RMS first.
  double RefSq = 0;
  for (uint64_t I = 0; I < Count; ++I)
    RefSq += static_cast<double>(Ref[I]) * Ref[I];
  C.RefRms = std::sqrt(RefSq / static_cast<double>(Count));
  const Tolerance Tol = toleranceFor(T);
  const double Abs = Tol.AbsOfRms * C.RefRms;

  Threads = std::max(1u, std::min<unsigned>(Threads, 64));
  std::vector<PartialSums> Parts(Threads);
  std::vector<std::thread> Workers;
  const uint64_t Chunk = (Count + Threads - 1) / Threads;
  for (unsigned W = 0; W < Threads; ++W) {
    const uint64_t Begin = std::min(Count, W * Chunk), End = std::min(Count, Begin + Chunk);
    if (W + 1 == Threads)
      sumRange(T, Out, Ref, Begin, End, Tol.Rel, Abs, Parts[W]);
    else
      Workers.emplace_back(sumRange, T, Out, Ref, Begin, End, Tol.Rel, Abs, std::ref(Parts[W]));
  }
  for (std::thread &W : Workers)
    W.join();

  double ErrSq = 0, RefSqAll = 0;
  for (const PartialSums &S : Parts) {
    ErrSq += S.ErrSq;
    RefSqAll += S.RefSq;
    C.MaxAbsError = std::max(C.MaxAbsError, S.MaxAbs);
    C.Unwritten += S.Unwritten;
    C.NonFinite += S.NonFinite;
    C.OutOfTolerance += S.Bad;
    C.FirstBad = std::min(C.FirstBad, S.FirstBad);
  }
  C.RelFrobenius = RefSqAll > 0 ? std::sqrt(ErrSq / RefSqAll) : (ErrSq > 0 ? INFINITY : 0.0);
  C.Pass = C.Unwritten == 0 && C.NonFinite == 0 && C.OutOfTolerance == 0 &&
           C.RelFrobenius <= Tol.Frobenius;
  return C;
}

} // namespace runner
} // namespace wsv
