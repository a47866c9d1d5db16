// The decoder against ptxas: each line below, wrapped in the same kernel the other SyncOp
// tests use, is given to ptxas (CUDA 13.0, PTX ISA 9.0) and to decodeSyncOp. A form the
// decoder decodes must be one ptxas accepts, and a form ptxas rejects must come back
// unrecognized. Where the two differ on purpose the line says why, and the test checks that
// they still differ, so the table cannot silently go stale.
#include "SyncOpTestSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <string>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

struct Form {
  const char *Target;
  const char *Text;
  /// Why ptxas and the decoder disagree on this line; nullptr when they must agree.
  const char *Divergence = nullptr;
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Form &C, std::ostream *OS) { *OS << C.Text; }

/// The PTX ISA's syntax blocks are stricter than ptxas in a few places (they write
/// `.sync.aligned` where ptxas also takes `.sync`), and values and register types are for the
/// checks and the parser's name resolution, not for the decoder.
const char *const IsaStricter = "the ISA's syntax requires what ptxas 13.0 lets pass";
const char *const ValueCheck = "a value or register type, which checks judge, not the form";

const Form Forms[] = {
    // mbarrier
    {"sm_90a", "mbarrier.init.shared::cta.b64 [%r1], 1;"},
    {"sm_90a", "mbarrier.init.b64 [%rd2], 3;"},
    {"sm_90a", "mbarrier.init.shared::cluster.b64 [%r1], 1;"},
    {"sm_90a", "mbarrier.init.release.shared::cta.b64 [%r1], 1;"},
    {"sm_90a", "mbarrier.inval.b64 [%rd2];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.b64 _, [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.b64 %rd1, [%rd2];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.b64 %rd1, [%r1], %r3;"},
    {"sm_90a", "mbarrier.arrive.shared::cta.release.cta.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.relaxed.cta.shared::cta.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.acquire.cta.shared::cta.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.release.gpu.shared::cta.b64 _, [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.shared::cta.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.b32 _, [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared::cta _, [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.b64 [%r1];"},
    {"sm_90a", "mbarrier.arrive.shared::cta.b64 _, [%r1], 1, 2;"},
    {"sm_90a", "mbarrier.arrive.shared::cluster.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1], 2;"},
    {"sm_90a", "mbarrier.arrive.release.cluster.b64 _, [%rd2];"},
    {"sm_90a", "mbarrier.arrive.noComplete.shared::cta.b64 %rd1, [%r1], 1;"},
    {"sm_90a", "mbarrier.arrive.noComplete.shared::cta.b64 %rd1, [%r1];"},
    {"sm_90a", "mbarrier.arrive.noComplete.relaxed.cta.shared::cta.b64 %rd1, [%r1], 1;"},
    {"sm_90a", "mbarrier.arrive.noComplete.release.cluster.shared::cta.b64 %rd1, [%r1], 1;"},
    {"sm_90a", "mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r1], 16;"},
    {"sm_90a", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16, 1;"},
    {"sm_90a", "mbarrier.arrive.expect_tx.release.cluster.b64 _, [%rd2], 16;"},
    {"sm_90a", "mbarrier.arrive_drop.expect_tx.shared::cta.relaxed.cta.b64 _, [%r1], 16;"},
    {"sm_90a", "mbarrier.arrive_drop.noComplete.shared::cta.b64 %rd1, [%r1], 1;"},
    {"sm_90a", "mbarrier.expect_tx.shared::cta.b64 [%r1], 16;"},
    {"sm_90a", "mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%r1], 16;"},
    {"sm_90a", "mbarrier.expect_tx.release.cta.shared::cta.b64 [%r1], 16;"},
    {"sm_90a", "mbarrier.complete_tx.shared::cluster.b64 [%r1], 3;"},
    {"sm_90a", "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r3, %r3;"},
    {"sm_90a", "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [%r1], %r3;"},
    {"sm_90a", "mbarrier.try_wait.parity.release.cta.shared::cta.b64 %p1, [%r1], %r3;"},
    {"sm_90a", "mbarrier.try_wait.parity.b64 %p1, [%rd2], %r3;"},
    {"sm_90a", "mbarrier.try_wait.shared::cluster.b64 %p1, [%r1], %rd1;"},
    {"sm_90a", "mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], %r3, %r3;"},
    {"sm_90a", "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %rd1;", ValueCheck},
    {"sm_90a", "mbarrier.pending_count.b64 %r3, %rd1;"},
    {"sm_90a", "mbarrier.pending_count.shared::cta.b64 %r3, %rd1;"},
    {"sm_90a", "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r1];"},
    // Bulk copies
    {"sm_100a", "cp.async.bulk.tensor.3d.shared::cluster.global.im2col."
                "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3,%r3,%r3}], [%r1], {%rs1};"},
    {"sm_100a", "cp.async.bulk.tensor.3d.shared::cluster.global.im2col."
                "mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3,%r3,%r3}], [%r1];"},
    {"sm_100a", "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes."
                "cta_group::2 [%r2], [%rd1, {%r3,%r3}], [%r1];"},
    {"sm_100a", "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes."
                "multicast::cluster [%r2], [%rd1, {%r3,%r3}], [%r1], %rs1;"},
    {"sm_100a", "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes."
                "multicast::cluster.L2::cache_hint [%r2], [%rd1, {%r3,%r3}], [%r1], %rs1, %rd2;"},
    {"sm_100a", "cp.async.bulk.tensor.2d.shared::cluster.global.L2::cache_hint "
                "[%r2], [%rd1, {%r3,%r3}], [%r1], %rd2;"},
    {"sm_100a", "cp.async.bulk.tensor.2d.global.shared::cluster.bulk_group "
                "[%rd1, {%r3,%r3}], [%r2];"},
    {"sm_100a", "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint "
                "[%rd1, {%r3,%r3}], [%r2], %rd2;"},
    {"sm_100a", "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group "
                "[%rd1, {%r3,%r3,%r3,%r3,%r3}], [%r2];"},
    {"sm_100a", "cp.async.bulk.tensor.2d.global.shared::cta.mbarrier::complete_tx::bytes "
                "[%rd1, {%r3,%r3}], [%r2];"},
    {"sm_100a", "cp.async.bulk.tensor.2d.shared::cluster.global.bulk_group "
                "[%r2], [%rd1, {%r3,%r3}], [%r1];"},
    {"sm_100a", "cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes "
                "[%r2], [%rd1, {%r3,%r3}], [%r1];"},
    {"sm_100a", "cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r3,%r3}];"},
    {"sm_100a", "cp.async.bulk.prefetch.L2.global [%rd2], 16;"},
    {"sm_100a", "cp.reduce.async.bulk.tensor.2d.global.shared::cta.bulk_group.add "
                "[%rd1, {%r3,%r3}], [%r2];"},
    {"sm_100a", "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
                ".add.u32 [%r2], [%r2], 16, [%r1];"},
    {"sm_100a", "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd2], [%r2], 16;"},
    {"sm_100a", "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes "
                "[%r2], [%rd2], 16, [%r1];"},
    {"sm_100a", "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes."
                "multicast::cluster [%r2], [%rd2], 16, [%r1], %rs1;"},
    {"sm_100a", "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
                "[%r2], [%r2], 16, [%r1];"},
    {"sm_100a", "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd2], [%r2], 16, %rs1;"},
    {"sm_100a", "cp.async.bulk.wait_group.read 0;"},
    {"sm_100a", "cp.async.bulk.wait_group %r3;"},
    {"sm_100a", "cp.async.bulk.commit_group.read;"},
    {"sm_90a", "cp.async.cg.shared.global [%r2], [%rd2], 16, %r3;"},
    {"sm_90a", "cp.async.ca.shared.global [%r2], [%rd2], 8;"},
    {"sm_90a", "cp.async.wait_all;"},
    // tcgen05
    {"sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.b32 [%r2], 32;"},
    {"sm_100a", "tcgen05.alloc.sync.aligned.shared::cta.b32 [%r2], 32;"},
    {"sm_100a", "tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [%r2], 32;"},
    {"sm_100a", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;"},
    {"sm_100a", "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;"},
    {"sm_100a", "tcgen05.relinquish_alloc_permit.sync.aligned;"},
    {"sm_100a", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd2];"},
    {"sm_100a", "tcgen05.commit.mbarrier::arrive::one.shared::cluster.b64 [%r1];"},
    {"sm_100a", "tcgen05.commit.cta_group::1.shared::cluster.b64 [%r1];"},
    {"sm_100a", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster."
                "multicast::cluster.b64 [%r1];"},
    {"sm_100a", "tcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster.b64 "
                "[%rd2], %rs1;"},
    {"sm_100a", "tcgen05.wait::ld.sync.aligned;"},
    {"sm_100a", "tcgen05.wait::ld.aligned;"},
    {"sm_100a", "tcgen05.fence::before_thread_sync.sync;"},
    {"sm_100a", "tcgen05.shift.cta_group::1.down [%r3];"},
    {"sm_100a", "tcgen05.shift.cta_group::1 [%r3];"},
    {"sm_100a", "tcgen05.ld.sync.aligned.32x32b.x2.pack::16b.b32 {%r4, %r5}, [%r3];"},
    {"sm_100a", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r4, %r5}, [%r3], 2;"},
    {"sm_100a", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r4, %r5}, [%r3];"},
    {"sm_100a", "tcgen05.ld.sync.aligned.32x32b.x3.b32 {%r4, %r5, %r6}, [%r3];"},
    {"sm_100a", "tcgen05.ld.sync.32x32b.x2.b32 {%r4, %r5}, [%r3];", IsaStricter},
    {"sm_100a", "tcgen05.st.sync.aligned.32x32b.x2.unpack::16b.b32 [%r3], {%r4, %r5};"},
    {"sm_100a", "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r3], %rd1;"},
    {"sm_100a", "tcgen05.cp.cta_group::1.64x128b [%r3], %rd1;"},
    {"sm_100a", "tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r3], %rd1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd1, %rd2, %r4, %p1, 2;"},
    {"sm_100a", "tcgen05.mma.cta_group::2.kind::f16 [%r3], %rd1, %rd2, %r4, "
                "{%r1,%r2,%r3,%r4,%r1,%r2,%r3,%r4}, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16 [%r3], [%r4], %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd1, %rd2, %r4, %p1, %r3;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f8f6f4 [%r3], %rd1, %rd2, %r4, %p1, 1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::i8 [%r3], %rd1, %rd2, %r4, %p1, 3;",
     "the ISA's integer syntax has no scale-input-d; ptxas 13.0 takes one"},
    {"sm_100a", "tcgen05.mma.ws.cta_group::1.kind::f16 [%r3], %rd1, %rd2, %r4, %p1, %rd2;"},
    {"sm_100a", "tcgen05.mma.ws.cta_group::2.kind::f16 [%r3], %rd1, %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.kind::f16 [%r3], %rd1, %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X "
                "[%r3], %rd1, %rd2, %r4, [%r5], [%r6], %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::mxf8f6f4 [%r3], %rd1, %rd2, %r4, "
                "[%r5], [%r6], %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16.block_scale [%r3], %rd1, %rd2, %r4, "
                "[%r5], [%r6], %p1;"},
    {"sm_100a", "tcgen05.mma.ws.sp.cta_group::1.kind::f16 [%r3], %rd1, %rd2, [%r5], %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.sp.ws.cta_group::1.kind::f16 [%r3], %rd1, %rd2, [%r5], %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16.ashift [%r3], [%r4], %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16.ashift [%r3], %rd1, %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.kind::f16.collector::a::fill "
                "[%r3], [%r4], %rd2, %r4, %p1;"},
    // wgmma
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, {%r1,%r2,%r3,%r4}, %rd2, %p1, 1, 1, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n17k16.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k32.satfinite.s32.s8.u8 "
               "{%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r0}, %rd1, %rd2, %p1;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc "
               "{%r1,%r2,%r3,%r4}, %rd1, %rd2, %p1;"},
    {"sm_90a", "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %r3, 0, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.m64n16k16.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
     IsaStricter},
    {"sm_90a", "wgmma.fence.sync.aligned;"},
    {"sm_90a", "wgmma.fence.sync;", IsaStricter},
    {"sm_90a", "wgmma.fence;"},
    {"sm_90a", "wgmma.wait_group.sync.aligned 1;"},
    {"sm_90a", "wgmma.wait_group.sync.aligned %r3;"},
    {"sm_90a", "wgmma.wait_group.sync.aligned;"},
    // Barriers, elect, fences, setmaxnreg, mapa
    {"sm_90a", "bar.sync %r3, 128;"},
    {"sm_90a", "bar.cta.sync 1, 64;"},
    {"sm_90a", "bar.arrive 1;"},
    {"sm_90a", "bar.red.and.pred %p2, 1, 64, !%p1;"},
    {"sm_90a", "bar.sync.aligned 0;"},
    {"sm_90a", "barrier.red.popc.aligned.u32 %r4, 1, %p1;"},
    {"sm_90a", "barrier.cta.arrive.aligned 1, 64;"},
    {"sm_90a", "barrier.sync;"},
    {"sm_90a", "bar.sync 0, 128, 3;"},
    {"sm_90a", "bar.gpu.sync 0;"},
    {"sm_90a", "bar.warp.sync %r3;"},
    {"sm_90a", "bar.warp.sync.aligned -1;"},
    {"sm_90a", "barrier.cluster.arrive.relaxed.aligned;"},
    {"sm_90a", "barrier.cluster.arrive.acquire;"},
    {"sm_90a", "barrier.cluster.wait;"},
    {"sm_90a", "barrier.cluster.wait.release;"},
    {"sm_90a", "elect.sync _|%p1, %r3;"},
    {"sm_90a", "elect.sync %r3, -1;"},
    {"sm_90a", "elect.sync.aligned %r3|%p1, -1;"},
    {"sm_90a", "fence.sc.gpu;"},
    {"sm_90a", "fence.sc;"},
    {"sm_90a", "fence.relaxed.cta;"},
    {"sm_90a", "fence.proxy.async.global;"},
    {"sm_90a", "fence.proxy.async.shared;"},
    {"sm_90a", "fence.proxy.async.cta;"},
    {"sm_90a", "fence.mbarrier_init.release.cta;"},
    {"sm_90a", "fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;"},
    {"sm_90a", "fence.proxy.tensormap::generic.acquire.gpu;"},
    {"sm_90a", "fence.release.sync_restrict::shared::cta.cluster;"},
    {"sm_90a", "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;"},
    {"sm_90a", "membar.gl;"},
    {"sm_90a", "membar.gpu;"},
    {"sm_90a", "membar.proxy.alias;"},
    {"sm_90a", "setmaxnreg.dec.sync.aligned.u32 %r3;"},
    {"sm_90a", "setmaxnreg.inc.sync.u32 232;"},
    {"sm_90a", "setmaxnreg.inc.sync.aligned.u32 23;", ValueCheck},
    {"sm_90a", "setmaxnreg.inc.sync.aligned.b32 232;"},
    {"sm_90a", "mapa.u64 %rd3, %rd2, 1;"},
    {"sm_90a", "mapa.shared::cluster.u32 %r4, bars, 1;"},
    {"sm_90a", "mapa.shared::cta.u32 %r4, %r1, 1;"},
    {"sm_90a", "mapa.shared::cluster.b32 %r4, %r1, 1;"},
    {"sm_100a", "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes."
                "b128 [%r2], [%r1];"},
    // Word order. After the words that name the instruction, ptxas takes the others in any
    // order, and so does the decoder; the name, wgmma's dtype.atype.btype, the two-word
    // qualifiers and the destination-then-source state spaces keep theirs.
    {"sm_100a", "tcgen05.alloc.sync.aligned.cta_group::1.shared::cta.b32 [%r2], 32;"},
    {"sm_100a", "tcgen05.ld.32x32b.x2.sync.aligned.b32 {%r4, %r5}, [%r3];"},
    {"sm_100a", "tcgen05.st.sync.aligned.32x32b.x2.b32.unpack::16b [%r3], {%r4, %r5};"},
    {"sm_100a", "tcgen05.ld.sync.aligned.red.32x32b.x2.min.u32 {%r4, %r5}, %r6, [%r3];"},
    {"sm_100a", "tcgen05.mma.kind::f16.cta_group::1 [%r3], %rd1, %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.mma.cta_group::1.ws.kind::f16 [%r3], %rd1, %rd2, %r4, %p1;"},
    {"sm_100a", "tcgen05.commit.mbarrier::arrive::one.cta_group::1.b64 [%rd2];"},
    {"sm_100a", "tcgen05.wait::ld.aligned.sync;"},
    {"sm_100a", "tcgen05.cp.cta_group::1.warpx4.32x128b [%r3], %rd1;"},
    {"sm_100a", "tcgen05.cp.cta_group::1.128x256b.b6x16_p32.b8x16 [%r3], %rd1;"},
    {"sm_100a", "tcgen05.shift.down.cta_group::1 [%r3];"},
    {"sm_100a", "clusterlaunchcontrol.try_cancel.async.mbarrier::complete_tx::bytes.shared::cta."
                "b128 [%r2], [%r1];"},
    {"sm_90a", "wgmma.mma_async.m64n16k16.sync.aligned.f32.f16.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k32.f32.f16.f16.sp "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %r3, 0, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n16k16.f16.f32.f16 "
               "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd1, %rd2, %p1, 1, 1, 0, 0;"},
    {"sm_90a", "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.popc.and "
               "{%r1,%r2,%r3,%r4}, %rd1, %rd2, %p1;"},
    {"sm_90a", "wgmma.wait_group.aligned.sync 1;"},
    {"sm_90a", "setmaxnreg.inc.u32.sync.aligned 232;"},
    {"sm_90a", "setmaxnreg.sync.aligned.inc.u32 232;"},
    {"sm_90a", "barrier.aligned.sync 0;"},
    {"sm_90a", "bar.red.u32.popc %r4, 1, %p1;"},
    {"sm_90a", "bar.red.cta.popc.u32 %r4, 1, %p1;"},
    {"sm_90a", "barrier.cluster.aligned.arrive;"},
    {"sm_90a", "elect.sync.sync %r3|%p1, -1;",
     "a word written twice: the ISA's syntax writes each once, ptxas 13.0 lets it pass"},
    {"sm_90a", "mapa.u32.shared::cluster %r4, %r1, 1;"},
    {"sm_90a", "ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%r1,%r2,%r3,%r4}, [%r2];"},
    {"sm_90a", "cp.async.shared.global.cg [%r2], [%rd2], 16;"},
    {"sm_90a", "cp.async.cg.global.shared [%r2], [%rd2], 16;"},
    {"sm_90a", "fence.cluster.acq_rel;"},
    {"sm_90a", "fence.release.cluster.mbarrier_init;"},
    {"sm_90a", "fence.proxy.shared::cta.async;"},
};

/// Whether ptxas assembles the line's kernel for Target.
bool ptxasAccepts(const std::string &Ptx, llvm::StringRef Target) {
  llvm::SmallString<128> In, Out;
  int FD;
  if (llvm::sys::fs::createTemporaryFile("syncop", "ptx", FD, In))
    return false;
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Ptx;
  }
  llvm::sys::fs::createTemporaryFile("syncop", "cubin", Out);
  // std::system rather than llvm::sys::ExecuteAndWait: the latter copies its arguments with a
  // StringSaver, and under WSV_SANITIZE the prebuilt LLVM's allocator and the instrumented
  // headers disagree about poisoned memory. ptxas' messages are discarded: the exit status is
  // the answer. Temporary paths hold no characters the shell would interpret.
  std::string Command = std::string("'") + WSV_PTXAS + "' -arch=" + Target.str() + " '" +
                        In.str().str() + "' -o '" + Out.str().str() + "' >/dev/null 2>&1";
  int Status = std::system(Command.c_str());
  llvm::sys::fs::remove(In);
  llvm::sys::fs::remove(Out);
  return Status == 0;
}

class SyncOpPtxas : public ::testing::TestWithParam<Form> {};

TEST_P(SyncOpPtxas, DecoderAndPtxasAgreeOnTheForm) {
  if (!llvm::sys::fs::can_execute(WSV_PTXAS))
    GTEST_SKIP() << "no ptxas at " << WSV_PTXAS;
  const Form &F = GetParam();
  Line L(F.Text, F.Target);
  ASSERT_TRUE(L.parsed()) << F.Text;
  ASSERT_TRUE(L.result().isSyncRelevant()) << F.Text << ": " << L.describe();
  bool Accepted = ptxasAccepts(wrapInKernel(F.Text, F.Target), F.Target);
  bool Decoded = L.result().isDecoded();
  if (F.Divergence)
    EXPECT_NE(Accepted, Decoded) << F.Text << "\n  expected to differ: " << F.Divergence
                                 << "\n  ptxas " << (Accepted ? "accepts" : "rejects")
                                 << ", decoder: " << L.describe();
  else
    EXPECT_EQ(Accepted, Decoded) << F.Text << "\n  ptxas " << (Accepted ? "accepts" : "rejects")
                                 << ", decoder: " << L.describe();
}

INSTANTIATE_TEST_SUITE_P(SyncOp, SyncOpPtxas, ::testing::ValuesIn(Forms));

} // namespace
