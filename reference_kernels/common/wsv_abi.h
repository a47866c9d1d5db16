// What a reference kernel and the runner (`wsv run`) agree on, in one place: the description each
// PTX module publishes about its kernels, and the layout of a hang capture. Plain C++ (no CUDA
// headers), included by the kernels and by tools/runner.
//
// A module publishes one `wsv_kernel_info` global (KernelInfo). The runner reads it with
// cuModuleGetGlobal, so a PTX file built with other tile or stage constants still launches with
// the right grid, shared memory and tensor-map boxes: what describes the launch is in the file
// that runs.
#pragma once
#include <stdint.h>

namespace wsv {
namespace abi {

constexpr uint32_t KernelInfoVersion = 1;

// Element types the GEMMs take (A, B and the output D share one).
enum ElementType : uint32_t { ElementBf16 = 0, ElementF16 = 1 };

// How a kernel reads its tensor maps: as __grid_constant__ parameters (nvcc), or through pointers
// to copies in global memory (clang 19 has no __grid_constant__ and would copy a by-value map to
// local memory, where TMA cannot read it).
enum TensorMapPassing : uint32_t { TensorMapsAsParams = 0, TensorMapsInGlobal = 1 };

// Every reference GEMM computes D[M x N] = A[M x K] * B[N x K]^T (A and B row-major, K
// contiguous), and its entry points `<name>_bf16` and `<name>_f16` take, in this order:
//   tensor map A, tensor map B, tensor map D (unused by kernels that store D with plain stores),
//   D (device pointer), M, N, K (uint32_t).
struct KernelInfo {
  uint32_t Version;      // KernelInfoVersion
  uint32_t TileM;        // output rows per CTA
  uint32_t TileN;        // output columns per CTA
  uint32_t TileK;        // K per pipeline stage
  uint32_t Stages;       // shared-memory ring depth
  uint32_t Threads;      // threads per CTA
  uint32_t ClusterM;     // CTAs per cluster, along M (1: no cluster)
  uint32_t SmemBytes;    // dynamic shared memory per CTA, bytes
  uint32_t Persistent;   // 1: one CTA per SM (a multiple of ClusterM), tiles scheduled in the kernel
  uint32_t BoxARows;     // TMA box for A: BoxARows x TileK elements, 128-byte swizzled
  uint32_t BoxBRows;     // TMA box for B: BoxBRows x TileK elements, 128-byte swizzled
  uint32_t BoxDRows;     // TMA store box for D: BoxDRows x BoxDCols, 128-byte swizzled when a box
  uint32_t BoxDCols;     // row is 128 bytes; BoxDRows 0 when D is stored with plain stores
  uint32_t TensorMaps;   // TensorMapPassing
  uint32_t MinKTiles;    // fewest K tiles the protocol handles (K >= MinKTiles * TileK)
  char Roles[64];        // role names by role id, comma separated ("producer,consumer")
  char Barriers[64];     // barrier names by barrier id ("full,empty")
};

// ---- hang capture (checked builds, -DWSV_CHECKED=1) ------------------------------------------
//
// The runner allocates a HangCapture in host-mapped memory and stores its device address in the
// module global `wsv_hang_capture`, and the wait timeout in `wsv_hang_timeout_ns`. A wait that
// times out copies the state of every warp of its CTA into Records (one per warp that is inside a
// wait), then traps; host memory survives the trap, so the runner reads it after the launch fails.

enum SyncOp : uint8_t {
  OpNone = 0,         // not inside a wait
  OpMbarrierWait = 1, // spinning on mbarrier.try_wait.parity: Index = barrier slot, Parity
  OpNamedBarrier = 2, // inside bar.sync: Index = barrier id, Parity = thread count
};

constexpr uint32_t HangRecordValid = 0x57535631u; // "WSV1", written last
constexpr uint32_t HangCaptureMagic = 0x57534843u; // "WSHC"

struct HangRecord {
  uint32_t Valid;        // HangRecordValid once the record is complete
  uint8_t Op;            // SyncOp
  uint8_t Role;          // index into KernelInfo::Roles
  uint8_t Barrier;       // index into KernelInfo::Barriers (OpMbarrierWait)
  uint8_t Reporter;      // 1 for the wait whose timeout triggered the capture
  uint32_t Index;        // barrier slot (stage), or named barrier id
  uint32_t Parity;       // parity waited for, or named barrier thread count
  uint32_t Iteration;    // the role's loop counter when it started waiting
  uint32_t Cta[3];       // blockIdx
  uint32_t ClusterRank;  // %cluster_ctarank
  uint32_t Warp;         // warp index in the CTA
  uint32_t Sm;           // %smid
  uint32_t Pad;
  uint64_t SinceNs;      // %globaltimer when the wait began
  uint64_t CapturedNs;   // %globaltimer when the record was written
};

struct HangCapture {
  uint32_t Magic;        // HangCaptureMagic, set by the runner
  uint32_t Capacity;     // number of Records
  uint32_t Dropped;      // records that did not fit
  uint32_t Pad;
  HangRecord Records[1]; // Capacity entries
};

} // namespace abi
} // namespace wsv
