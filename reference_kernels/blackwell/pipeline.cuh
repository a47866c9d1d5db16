// Pipeline bookkeeping shared by the Blackwell reference kernels: the {stage, phase} pair of a
// ring of mbarriers, and the static persistent tile scheduler of the TIRx kernels (Steps 7-9).
// Neither touches memory; they only compute the stage, parity and tile each role works on, the
// same way in every role, so that producer and consumer agree.
#pragma once
#include <cstdint>

namespace wsv {

// Which barrier of a ring a role uses next and which parity it waits for. The phase flips each
// time the stage wraps to 0, because every barrier of the ring then completes one more phase.
// Producers start at phase 1 (the first wait on an `empty` barrier passes: all slots are free),
// consumers at phase 0 (the first wait on a `full` barrier blocks until the producer fills it).
template <uint32_t Depth>
struct PipelineState {
  uint32_t stage;
  uint32_t phase;

  __device__ __forceinline__ void advance() {
    if (++stage == Depth) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// Static persistent schedule over output tiles: unit `first` takes tiles first, first + step, ...
// (a unit is a CTA, or a cluster in the 2-CTA kernels). Tiles are rasterized in groups of
// kGroupM tile rows so that units running at the same time share A and B tiles in L2.
struct TileScheduler {
  static constexpr uint32_t kGroupM = 8;
  uint32_t tile;
  uint32_t step;
  uint32_t num_m_tiles;
  uint32_t num_n_tiles;

  __device__ __forceinline__ bool valid() const { return tile < num_m_tiles * num_n_tiles; }
  __device__ __forceinline__ void next_tile() { tile += step; }

  __device__ __forceinline__ uint32_t m_idx() const {
    const uint32_t per_group = kGroupM * num_n_tiles;
    const uint32_t first_m = (tile / per_group) * kGroupM;
    const uint32_t group_m = min(num_m_tiles - first_m, kGroupM);
    return first_m + (tile % per_group) % group_m;
  }
  __device__ __forceinline__ uint32_t n_idx() const {
    const uint32_t per_group = kGroupM * num_n_tiles;
    const uint32_t first_m = (tile / per_group) * kGroupM;
    const uint32_t group_m = min(num_m_tiles - first_m, kGroupM);
    return (tile % per_group) / group_m;
  }
};

}  // namespace wsv
