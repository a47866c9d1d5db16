// Waits that can tell where they hang. Kernels name every wait with a sync_site (role, barrier,
// slot, loop counter); the plain build compiles that away to the bare spin loop of ptx_sync.cuh,
// and the checked build (-DWSV_CHECKED=1, what `wsv run --check` loads) adds, on the slow path
// only, a timeout read from %globaltimer and a capture of every warp's wait in the CTA into
// host-mapped memory before it traps (the record layout is wsv_abi.h's HangRecord).
//
// Why a per-warp table in shared memory: a warp blocked in bar.sync cannot time out, but a warp
// of the same CTA stuck on an mbarrier can, and it then reports the bar.sync too. The fast path
// (the first try_wait succeeds) costs one predicate test, so the checked build runs at the plain
// build's speed (PERF.md measures it).
#pragma once
#include <stdint.h>

#include "ptx_sync.cuh"
#include "wsv_abi.h"

namespace wsv {

struct sync_site {
  uint32_t role;       // index into the kernel's KernelInfo::Roles
  uint32_t barrier;    // index into KernelInfo::Barriers
  uint32_t index;      // barrier slot (stage)
  uint32_t iteration;  // the role's loop counter
};

#if defined(WSV_CHECKED) && WSV_CHECKED

constexpr uint32_t check_max_warps = 16;  // our kernels have at most 12 warps

}  // namespace wsv

// Set by the runner through cuModuleGetGlobal before each launch (C names, so it finds them).
extern "C" {
__device__ wsv::abi::HangCapture* wsv_hang_capture = nullptr;
__device__ unsigned long long wsv_hang_timeout_ns = 2000000000ull;
__device__ unsigned int wsv_hang_next = 0;  // next free capture slot
}

namespace wsv {

struct warp_state {
  uint32_t op;         // abi::SyncOp
  uint32_t role_barrier;  // role << 8 | barrier
  uint32_t index;
  uint32_t parity;
  uint32_t iteration;
  uint32_t pad;
  uint64_t since_ns;
};

__shared__ warp_state check_warp_state[check_max_warps];
__shared__ uint32_t check_cta_captured;

__device__ __forceinline__ uint32_t check_warp_id() { return threadIdx.x / 32; }

__device__ __forceinline__ bool check_is_warp_leader() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane == static_cast<uint32_t>(__ffs(__activemask()) - 1);
}

__device__ __forceinline__ uint32_t check_smid() {
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}

// Call once at kernel start, before the barrier that publishes the mbarrier inits.
__device__ __forceinline__ void check_init() {
  if (threadIdx.x < check_max_warps) check_warp_state[threadIdx.x].op = abi::OpNone;
  if (threadIdx.x == 0) check_cta_captured = 0;
}

__device__ __forceinline__ void check_enter(uint32_t op, const sync_site& s, uint32_t index,
                                            uint32_t parity) {
  if (check_warp_id() < check_max_warps && check_is_warp_leader()) {
    warp_state& w = check_warp_state[check_warp_id()];
    w.role_barrier = s.role << 8 | s.barrier;
    w.index = index;
    w.parity = parity;
    w.iteration = s.iteration;
    w.since_ns = globaltimer_ns();
    __threadfence_block();
    w.op = op;
  }
}

__device__ __forceinline__ void check_leave() {
  if (check_warp_id() < check_max_warps && check_is_warp_leader()) check_warp_state[check_warp_id()].op = abi::OpNone;
}

// Copies every warp of this CTA that is inside a wait into the capture, then traps after a grace
// period in which stuck CTAs elsewhere time out and report too. Never returns. Every thread that
// times out lands here, often all lanes of a warp at once; only the first of the CTA captures,
// and the others sleep (so a diverged capturing lane of their warp keeps running) until the trap,
// trapping themselves later should the capturing thread never get there.
__device__ __noinline__ void check_report_hang() {
  abi::HangCapture* cap = wsv_hang_capture;
  const uint64_t grace = wsv_hang_timeout_ns / 4;
  if (cap != nullptr && atomicCAS(&check_cta_captured, 0u, 1u) == 0u) {
    const uint32_t me = check_warp_id();
    const uint32_t warps = (blockDim.x + 31) / 32;
    const uint64_t now = globaltimer_ns();
    for (uint32_t w = 0; w < warps && w < check_max_warps; ++w) {
      volatile warp_state& st = check_warp_state[w];
      if (st.op == abi::OpNone) continue;
      const uint32_t slot = atomicAdd(&wsv_hang_next, 1u);
      if (slot >= cap->Capacity) {
        cap->Dropped = slot + 1 - cap->Capacity;
        continue;
      }
      volatile abi::HangRecord& r = cap->Records[slot];
      r.Op = static_cast<uint8_t>(st.op);
      r.Role = static_cast<uint8_t>(st.role_barrier >> 8);
      r.Barrier = static_cast<uint8_t>(st.role_barrier & 0xff);
      r.Reporter = w == me ? 1 : 0;
      r.Index = st.index;
      r.Parity = st.parity;
      r.Iteration = st.iteration;
      r.Cta[0] = blockIdx.x;
      r.Cta[1] = blockIdx.y;
      r.Cta[2] = blockIdx.z;
      r.ClusterRank = cluster_ctarank();
      r.Warp = w;
      r.Sm = check_smid();
      r.SinceNs = st.since_ns;
      r.CapturedNs = now;
      __threadfence_system();
      r.Valid = abi::HangRecordValid;
    }
    __threadfence_system();
    // Grace: a deadlock stalls every CTA within microseconds of each other, so their timeouts
    // fire close together; a quarter of the timeout lets them all write before the trap.
    const uint64_t until = globaltimer_ns() + grace;
    while (globaltimer_ns() < until) __nanosleep(10000);
    asm volatile("trap;");
  }
  const uint64_t until = globaltimer_ns() + 2 * grace;
  while (globaltimer_ns() < until) __nanosleep(10000);
  asm volatile("trap;");
  while (true) __nanosleep(1000000);
}

__device__ __forceinline__ void mbarrier_wait_at(uint32_t bar, uint32_t parity, const sync_site& s) {
  if (mbarrier_try_wait_parity(bar, parity)) return;
  check_enter(abi::OpMbarrierWait, s, s.index, parity);
  // Read once: a global load inside the loop would delay the reaction to the phase completing.
  const uint64_t timeout = wsv_hang_timeout_ns;
  const uint64_t start = globaltimer_ns();
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (globaltimer_ns() - start > timeout) check_report_hang();
  }
  check_leave();
}

__device__ __forceinline__ void named_barrier_sync_at(uint32_t id, uint32_t threads,
                                                      const sync_site& s) {
  check_enter(abi::OpNamedBarrier, s, id, threads);
  named_barrier_sync(id, threads);
  check_leave();
}

#else  // plain build: the sites vanish

__device__ __forceinline__ void check_init() {}

__device__ __forceinline__ void mbarrier_wait_at(uint32_t bar, uint32_t parity, const sync_site&) {
  mbarrier_wait(bar, parity);
}

__device__ __forceinline__ void named_barrier_sync_at(uint32_t id, uint32_t threads,
                                                      const sync_site&) {
  named_barrier_sync(id, threads);
}

#endif

}  // namespace wsv
