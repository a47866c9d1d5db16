// The problem every reference GEMM solves and how a result is judged: D[M x N] = A[M x K] *
// B[N x K]^T with bf16 or f16 inputs and output and fp32 accumulation. Pure host code, so the
// shape rules and the tolerance are unit-tested on machines without a GPU.
#pragma once

#include "wsv_abi.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace runner {

enum class Dtype { Bf16, F16 };

const char *dtypeName(Dtype T);                    ///< "bf16" / "fp16"
std::optional<Dtype> parseDtype(const std::string &S); ///< accepts bf16, fp16, f16
const char *entrySuffix(Dtype T);                  ///< "_bf16" / "_f16", as the PTX entries end

struct Problem {
  uint32_t M = 0, N = 0, K = 0;
  Dtype Type = Dtype::Bf16;

  double flops() const { return 2.0 * M * N * static_cast<double>(K); }
  std::string str() const; ///< "MxNxK dtype"
};

/// Why the kernel cannot compute this problem, or nothing when it can. Kernels refuse what their
/// tiles do not cover exactly rather than computing a wrong edge.
std::optional<std::string> shapeRefusal(const abi::KernelInfo &Info, const Problem &P);

/// The smallest problem the kernel accepts (one cluster of tiles, MinKTiles k-tiles).
Problem smallestProblem(const abi::KernelInfo &Info, Dtype T);

/// Default correctness shapes: the smallest legal problem, a non-square one with more k-tiles
/// than stages (so the ring wraps and parities flip), and a larger rectangular one.
std::vector<Problem> defaultCheckProblems(const abi::KernelInfo &Info, Dtype T);

/// 16-bit storage of the two element types.
float bf16ToFloat(uint16_t Bits);
float f16ToFloat(uint16_t Bits);
float elementToFloat(Dtype T, uint16_t Bits);

/// Exactly representable input value v = Q / 256 with Q in [-256, 256] \ {0}: random inputs are
/// drawn on this grid so the same bits mean the same number in bf16 and f16, and products are
/// exact in fp32.
uint16_t gridValueBits(Dtype T, int Q);

/// Count random grid values for seed Seed, split over Threads threads. Element I depends only on
/// (Seed, I), so the draw is the same for any thread count.
void fillRandomGrid(uint16_t *Out, uint64_t Count, Dtype T, uint64_t Seed, unsigned Threads = 1);

/// The bit pattern that poisons the output before a run: NaN in both element types, so any
/// element the kernel does not write fails the comparison.
constexpr uint16_t PoisonBits = 0xFFFF;

/// Acceptance: every element within Abs + Rel * |ref| of the reference, where the reference is
/// cuBLAS's fp32 result, and ||D - ref||_F / ||ref||_F <= Frobenius. The element bound covers
/// rounding the fp32 sum to the output type (half an ulp: 2^-9 for bf16, 2^-12 for f16) plus a
/// different fp32 summation order.
struct Tolerance {
  double Rel;       ///< relative to |ref| per element
  double AbsOfRms;  ///< absolute, as a fraction of the reference's RMS
  double Frobenius; ///< relative Frobenius norm of the error
};
Tolerance toleranceFor(Dtype T);

struct Comparison {
  uint64_t Elements = 0;
  uint64_t Unwritten = 0;  ///< still the poison pattern
  uint64_t NonFinite = 0;  ///< NaN or Inf other than the poison
  uint64_t OutOfTolerance = 0;
  double RelFrobenius = 0; ///< ||D - ref||_F / ||ref||_F
  double MaxAbsError = 0;
  double RefRms = 0;
  uint64_t FirstBad = UINT64_MAX; ///< linear index of the first failing element
  bool Pass = false;
};

/// Compares every element of Out (M*N, row-major, Dtype bits) with Ref (fp32). Threads > 1
/// splits the rows over that many threads.
Comparison compareWithReference(Dtype T, const uint16_t *Out, const float *Ref, uint64_t Count,
                                unsigned Threads = 1);

} // namespace runner
} // namespace wsv
