// tcgen05 (Blackwell tensor core) wrappers for the sm_100a reference kernels: TMEM allocation,
// UMMA (tcgen05.mma kind::f16) with its instruction and shared-memory descriptors, tcgen05.commit
// onto mbarriers, TMEM loads, the tcgen05 thread-sync fences, and the two cluster forms the 2-CTA
// kernels need (mapa, and TMA loads with .cta_group::2).
//
// Each wrapper names the PTX ISA section (by title) whose semantics it relies on. A kernel must use
// one CtaGroup for every tcgen05 instruction it contains: ptxas rejects a function that mixes
// .cta_group::1 and ::2 ("uses single CTA and CTA pair granularity ... not allowed").
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "ptx_sync.cuh"

namespace wsv {

// ---- TMEM allocation (PTX ISA: tcgen05.alloc, tcgen05.dealloc, relinquish_alloc_permit) ---------
//
// All three are .sync.aligned: every lane of one warp executes them together, never under a
// lane guard. Column counts are powers of two in [32, 512]. With CtaGroup 2, one warp with the
// same warp index in each CTA of the pair issues the instruction, and both pass the same slot.

// Allocates `ncols` columns and writes the TMEM address (lane 0, first column) to `slot`
// (a shared::cta address). Blocks until the columns are free.
template <int CtaGroup>
__device__ __forceinline__ void tmem_alloc(uint32_t slot, uint32_t ncols) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot),
                 "r"(ncols)
                 : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot),
                 "r"(ncols)
                 : "memory");
}

template <int CtaGroup>
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t ncols) {
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols)
                 : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols)
                 : "memory");
}

// This CTA will not allocate again, so blocked allocations of other CTAs on the SM may proceed.
template <int CtaGroup>
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  else
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

// TMEM addresses are (lane << 16) | column (PTX ISA: Tensor Memory addressing). A warp reaches
// only the 32 lanes of its quarter, 32 * (warp % 4): the epilogue row of a thread is its lane in
// that quarter.
__device__ __forceinline__ uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t column) {
  return base + (lane << 16) + column;
}

// ---- tcgen05 fences (PTX ISA: tcgen05.fence) ----------------------------------------------------

// Orders this thread's earlier tcgen05 operations before a following thread sync (bar.sync,
// mbarrier arrive) ...
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

// ... and orders later tcgen05 operations after a preceding thread sync or mbarrier wait.
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

// ---- UMMA descriptors (PTX ISA: Shared memory descriptor; Instruction descriptor) ---------------

enum class UmmaInput : uint32_t { F16 = 0, BF16 = 1 };

// The A/B format field of the instruction descriptor for an element type.
template <typename T>
__host__ __device__ constexpr UmmaInput umma_input() {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16");
  return std::is_same_v<T, __half> ? UmmaInput::F16 : UmmaInput::BF16;
}

// Instruction descriptor for tcgen05.mma .kind::f16, dense, fp32 accumulator, both operands
// K-major, no negation:
//   bits 4-5 D format (1 = F32), 7-9 A format, 10-12 B format (0 = F16, 1 = BF16),
//   15 / 16 A / B major (0 = K), 17-22 N >> 3, 24-28 M >> 4.
__host__ __device__ constexpr uint32_t umma_idesc_f16(UmmaInput A, UmmaInput B, uint32_t M,
                                                      uint32_t N) {
  return (1u << 4) | (static_cast<uint32_t>(A) << 7) | (static_cast<uint32_t>(B) << 10) |
         ((N >> 3) << 17) | ((M >> 4) << 24);
}

// Shared-memory descriptor of a K-major operand tile that TMA wrote with the 128 B swizzle
// (CU_TENSOR_MAP_SWIZZLE_128B): rows of 64 16-bit elements (128 B), eight rows per 1024 B swizzle
// atom, atoms packed one after another along M/N. The tile must start 1024 B aligned (base
// offset 0).
//   bits 0-13 start >> 4, 16-29 leading byte offset >> 4 (unused for swizzled K-major, 16 B),
//   32-45 stride byte offset >> 4 (1024 B between 8-row groups), 46-48 version 0b001,
//   61-63 swizzle mode (2 = 128 B).
__device__ __forceinline__ uint64_t umma_sdesc_sw128(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 46) |
         (static_cast<uint64_t>(2) << 61);
}

// One UMMA consumes K = 16 elements of kind::f16, i.e. 32 B of each 128 B row. Within a swizzle
// atom the hardware applies the XOR pattern to the final address, so stepping K only moves the
// descriptor's start address by 32 B (2 in the >> 4 encoding).
constexpr uint32_t kUmmaK = 16;
__device__ __forceinline__ uint64_t umma_sdesc_advance_k(uint64_t desc, uint32_t k_step) {
  return desc + static_cast<uint64_t>(k_step * (kUmmaK * 2 / 16));
}

// ---- tcgen05.mma (PTX ISA: tcgen05.mma) ---------------------------------------------------------

// D[tmem] (+)= A[smem] * B[smem]^T, issued by one thread. With CtaGroup 2 the pair computes an
// M = 2 x 128 tile: A and B descriptors name the same offsets in both CTAs' shared memory, and D
// is written to the same TMEM address in both CTAs. `accumulate` false overwrites D.
template <int CtaGroup>
__device__ __forceinline__ void umma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                         uint32_t idesc, bool accumulate) {
  const uint32_t acc = accumulate ? 1u : 0u;
  if constexpr (CtaGroup == 1)
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(acc)
        : "memory");
  else
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %4, 0;\n\t"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(acc)
        : "memory");
}

// ---- tcgen05.commit (PTX ISA: tcgen05.commit) ---------------------------------------------------

// One arrival on `bar` (this CTA) once every earlier async tcgen05 operation of the issuing
// thread has completed. Issue from exactly one thread: each issuing thread makes its own commit
// group, and a thread with no MMA in flight arrives at once.
__device__ __forceinline__ void umma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
                   bar)
               : "memory");
}

// The 2-CTA form: one arrival on the barrier at `bar`'s offset in every CTA whose bit is set in
// the 16-bit `cta_mask` (bit i = %cluster_ctarank i).
__device__ __forceinline__ void umma_commit_multicast_2cta(uint32_t bar, uint16_t cta_mask) {
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
      " [%0], %1;" ::"r"(bar),
      "h"(cta_mask)
      : "memory");
}

// ---- TMEM -> registers (PTX ISA: tcgen05.ld, tcgen05.wait) --------------------------------------

// Shape 32x32b, 32 repetitions: thread t of the warp gets 32 consecutive 32-bit columns of TMEM
// lane (taddr.lane + t). .sync.aligned: the whole warp executes it. The registers are valid only
// after tmem_ld_wait().
__device__ __forceinline__ void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&r)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32"
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
        "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
        "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]),
        "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]),
        "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
      : "r"(taddr)
      : "memory");
}

// Waits until every tcgen05.ld of this thread has completed.
__device__ __forceinline__ void tmem_ld_wait() {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

// ---- clusters (PTX ISA: mapa) and 2-CTA TMA (PTX ISA: cp.async.bulk.tensor) ---------------------

// The shared::cluster address of the variable at shared::cta address `addr` in CTA `cta_rank`.
__device__ __forceinline__ uint32_t mapa_shared_cluster(uint32_t addr, uint32_t cta_rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta_rank));
  return r;
}

// Global -> this CTA's shared memory at `dst`; with .cta_group::2 the completing mbarrier may be
// in the peer CTA of the pair, so `bar_cluster` is a shared::cluster address (from mapa).
__device__ __forceinline__ void tma_load_2d_2cta(uint32_t dst, const void* tmap,
                                                 uint32_t bar_cluster, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"(tmap), "r"(bar_cluster), "r"(c0), "r"(c1)
      : "memory");
}

}  // namespace wsv
