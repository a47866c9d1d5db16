#!/usr/bin/env python3
"""Regenerates the Triton PTX in this folder.

Triton compiles ahead of time here (no GPU needed): each kernel below is lowered with
triton.compile(ASTSource, GPUTarget) for sm_90a or sm_100a and its "ptx" stage is written to
<kernel>.<arch>.ptx. Triton also assembles the PTX into a cubin while compiling, so a file is only
written when ptxas accepted it.

Usage:  pip install triton==3.9.0
        python3 tests/corpus/triton/generate.py [--ptxas PATH] [--out DIR] [--only NAME...]

Triton picks the PTX ISA version from the ptxas it is given. Its bundled ptxas for sm_90+ is
CUDA 13.4's, whose PTX (.version 9.4) the CUDA 13.0 ptxas we build with rejects; so this script
points Triton at the CUDA toolkit's ptxas (default /usr/local/cuda/bin/ptxas), which makes Triton
write .version 9.0 and assemble with the same ptxas the round-trip tests use.
"""

import argparse
import os
import pathlib
import re
import sys
import tempfile

PINNED_TRITON = "3.9.0"
HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]


def configure_environment(ptxas):
    # Must happen before triton is imported: knobs read the environment once.
    os.environ["TRITON_PTXAS_PATH"] = ptxas
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = ptxas
    # Triton 3.9's default (fused multiply-add on), stated so that it does not warn.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    # A private cache keeps earlier compilations (made with another ptxas) from being reused.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-corpus-cache-")


def install_relative_source_paths(triton):
    """Makes the debug info name sources relative to the repository and to Triton's package, so
    the committed PTX does not carry the paths of the machine that generated it. The rewrite
    happens on the LLVM IR, before the NVPTX back end sizes the DWARF sections around it."""
    package_parent = pathlib.Path(triton.__file__).resolve().parent.parent

    def relative(match):
        directory = pathlib.Path(match.group(1))
        for root in (package_parent, REPO_ROOT):  # the more specific first
            if directory == root or root in directory.parents:
                return 'directory: "%s"' % directory.relative_to(root).as_posix()
        return match.group(0)

    def hook(*args):
        if not args:  # compile() asks for a cache key first
            return "corpus-relative-source-paths", "1"
        _backend, stages, _options, _language, _capability = args
        make_llir = stages["llir"]
        stages["llir"] = lambda src, metadata: re.sub(r'directory: "([^"]*)"', relative,
                                                      make_llir(src, metadata))

    triton.knobs.runtime.add_stages_inspection_hook = hook


def define_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_pipelined(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                         stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        # Grouped tile order for L2 reuse, masked pointer loads: Triton's software pipeliner turns
        # the loop into cp.async stages waited on with cp.async commit/wait groups.
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        group = pid // (GROUP_M * tiles_n)
        first_m = group * GROUP_M
        rows = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows
        pid_n = (pid % (GROUP_M * tiles_n)) // rows
        offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = acc.to(tl.float16)
        cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
        tl.store(c_ptrs, c, mask=(cm[:, None] < M) & (cn[None, :] < N))

    @triton.jit
    def matmul_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
        # Host-built tensor descriptors: loads become cp.async.bulk.tensor completing on
        # mbarriers; with WARP_SPECIALIZE the loop is split into a load partition and an MMA
        # partition that talk through full/empty barrier rings.
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))

    @triton.jit
    def matmul_persistent(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr = True):
        # One program per SM walks the output tiles; flatten fuses the tile and K loops so the
        # pipeline (and its barrier phases) carries across tiles (else once per tile).
        start = tl.program_id(0)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        for tile in tl.range(start, tiles_m * tiles_n, NUM_SMS, flatten=FLATTEN,
                             warp_specialize=WARP_SPECIALIZE):
            pid_m = tile // tiles_n
            pid_n = tile % tiles_n
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(k_tiles):
                a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
                b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))

    @triton.jit
    def softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
        # Row-wise softmax over a persistent row loop: warp shuffles and a shared-memory
        # reduction, no warp specialization at all (most real kernels look like this).
        for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=2):
            cols = tl.arange(0, BLOCK)
            x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
            x = x - tl.max(x, axis=0)
            e = tl.exp(x)
            tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)

    @triton.jit
    def sum_atomic(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
        # Block reduction finished with a global float atomic.
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_add(out_ptr, tl.sum(x, axis=0))

    @triton.jit
    def attention(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
        # Flash attention's forward pass (online softmax): the query tile is loaded once before
        # the loop; K and V tiles stream through barrier rings. Warp-specialized on sm_100a,
        # the default warps load the query tile and wait for it, and the MMA warp reads it.
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        qo_off = off_hz * N_CTX + start_m * BLOCK_M
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        q = q_desc.load([qo_off, 0])
        qk_scale = sm_scale * 1.44269504
        for start_n in tl.range(0, N_CTX, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
            k = k_desc.load([off_hz * N_CTX + start_n, 0])
            qk = tl.dot(q, k.T)
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
            p = tl.math.exp2(qk)
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = v_desc.load([off_hz * N_CTX + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_ij
        acc = acc / l_i[:, None]
        o_desc.store([qo_off, 0], acc.to(tl.float16))

    @triton.jit
    def layernorm(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
        # Three passes over a row with pointer loads and reductions: no barriers but bar.sync.
        row = tl.program_id(0)
        X += row * stride
        Y += row * stride
        _mean = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        mean = tl.sum(_mean, axis=0) / N
        _var = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
            x = tl.where(cols < N, x - mean, 0.)
            _var += x * x
        rstd = 1 / tl.sqrt(tl.sum(_var, axis=0) / N + eps)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < N
            x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
            y = (x - mean) * rstd * tl.load(W + cols, mask=mask) + tl.load(B + cols, mask=mask)
            tl.store(Y + cols, y, mask=mask)

    @triton.jit
    def matmul_subtile(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       WARP_SPECIALIZE: tl.constexpr):
        # The persistent matmul whose epilogue stores the tile in two halves, each a TMA store
        # from its own staging buffer.
        start = tl.program_id(0)
        tiles_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        for tile in tl.range(start, tl.cdiv(M, BLOCK_M) * tiles_n, NUM_SMS, flatten=True,
                             warp_specialize=WARP_SPECIALIZE):
            pid_m = tile // tiles_n
            pid_n = tile % tiles_n
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(k_tiles):
                a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
                b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
            acc = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc0.to(tl.float16))
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], acc1.to(tl.float16))

    @triton.jit
    def attention_causal(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        # Causal attention: the K/V loop of query block m runs over blocks 0 .. m only, so its
        # trip count depends on the program's position in the grid.
        start_m = tl.program_id(0)
        off_hz = tl.program_id(1)
        qo_off = off_hz * N_CTX + start_m * BLOCK_M
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        q = q_desc.load([qo_off, 0])
        for start_n in tl.range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
            k = k_desc.load([off_hz * N_CTX + start_n, 0])
            qk = tl.dot(q, k.T) * sm_scale
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = v_desc.load([off_hz * N_CTX + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_ij
        o_desc.store([qo_off, 0], (acc / l_i[:, None]).to(tl.float16))

    return dict(matmul_pipelined=matmul_pipelined, matmul_tma=matmul_tma,
                matmul_persistent=matmul_persistent, attention=attention,
                layernorm=layernorm, softmax=softmax, sum_atomic=sum_atomic,
                matmul_subtile=matmul_subtile, attention_causal=attention_causal)


def desc(block, dtype="fp16"):
    return "tensordesc<%s[%d, %d]>" % ((dtype,) + tuple(block))


def divisibility_attrs(signature):
    """What Triton's launcher would specialize on for 16-byte aligned tensors with sizes and
    strides that are multiples of 16: without these hints loads stay scalar and the pipeliner
    cannot use cp.async."""
    return {(i,): [["tt.divisibility", 16]] for i, ty in enumerate(signature.values())
            if ty.startswith("*") or ty == "i32"}


def corpus_entries():
    """(output stem, kernel, signature, constexprs, arch, options) for every generated file."""
    pointer_mm_sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                      "K": "i32", "stride_am": "i32", "stride_ak": "constexpr",
                      "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
                      "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                      "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
    pointer_mm_consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128,
                         "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}

    def tma_sig(bm, bn, bk, persistent, dtype="fp16", ws=True):
        sig = {"a_desc": desc((bm, bk), dtype), "b_desc": desc((bn, bk), dtype),
               "c_desc": desc((bm, bn)), "M": "i32", "N": "i32", "K": "i32"}
        if persistent:
            sig["NUM_SMS"] = "constexpr"
        sig.update({"BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"})
        if ws:
            sig["WARP_SPECIALIZE"] = "constexpr"
        if persistent:
            sig["FLATTEN"] = "constexpr"
        return sig

    def unflattened(args):
        # matmul_subtile always flattens: it takes no FLATTEN.
        return {k: v for k, v in args.items() if k != "FLATTEN"}

    def subtiled(sig):
        # Its C descriptor is one half tile, the box of each store.
        return dict(unflattened(sig), c_desc=desc((128, 64)))

    def attention_sig(ws=True):
        sig = {"q_desc": desc((128, 64)), "k_desc": desc((64, 64)), "v_desc": desc((64, 64)),
               "o_desc": desc((128, 64)), "sm_scale": "fp32", "N_CTX": "i32",
               "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
        if ws:
            sig["WARP_SPECIALIZE"] = "constexpr"
        return sig

    def attention_consts(ws):
        consts = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
        if ws is not None:
            consts["WARP_SPECIALIZE"] = ws
        return consts

    def tma_consts(bm, bn, bk, ws, persistent):
        consts = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "WARP_SPECIALIZE": ws}
        if persistent:
            consts.update(NUM_SMS=132, FLATTEN=True)
        return consts

    return [
        ("matmul_pipelined", "matmul_pipelined", pointer_mm_sig, pointer_mm_consts, 90,
         dict(num_warps=8, num_stages=4)),
        ("matmul_tma", "matmul_tma", tma_sig(128, 128, 64, False),
         tma_consts(128, 128, 64, False, False), 90, dict(num_warps=8, num_stages=4)),
        # On sm_90 Triton 3.9 only splits the loop into partitions for one consumer warpgroup
        # (num_warps=4) and a 64-row tile; with 8 warps, and for the persistent kernel, it
        # silently keeps one partition, so the persistent warp-specialized one is sm_100a only.
        ("matmul_tma_ws", "matmul_tma", tma_sig(64, 128, 64, False),
         tma_consts(64, 128, 64, True, False), 90, dict(num_warps=4, num_stages=3)),
        ("matmul_tma_ws", "matmul_tma", tma_sig(128, 128, 64, False),
         tma_consts(128, 128, 64, True, False), 100, dict(num_warps=4, num_stages=4)),
        # The same lowering with a two-stage ring, and with a default partition of two
        # warpgroups (its worker warps are 8-11): wsv resolves which warp runs which partition
        # from the state bytes the default warps store, whatever the warp numbers.
        ("matmul_tma_ws_2stages", "matmul_tma", tma_sig(64, 64, 64, False),
         tma_consts(64, 64, 64, True, False), 90, dict(num_warps=4, num_stages=2)),
        ("matmul_tma_ws_8warps", "matmul_tma", tma_sig(128, 64, 64, False),
         tma_consts(128, 64, 64, True, False), 100, dict(num_warps=8, num_stages=5)),
        ("matmul_persistent", "matmul_persistent", tma_sig(128, 128, 64, True),
         tma_consts(128, 128, 64, False, True), 90, dict(num_warps=8, num_stages=3)),
        ("matmul_persistent_ws", "matmul_persistent", tma_sig(128, 256, 64, True),
         tma_consts(128, 256, 64, True, True), 100, dict(num_warps=4, num_stages=3)),
        # fp8 operands with a 128-wide k-tile: each iteration is one stage of twice the
        # k-tile wsv counts K in.
        ("matmul_fp8_ws", "matmul_tma", tma_sig(64, 128, 128, False, "fp8e4nv"),
         tma_consts(64, 128, 128, True, False), 90, dict(num_warps=4, num_stages=3)),
        # Not flattened: the k-loop's pipeline is set up per tile, its barriers initialized at
        # the tile's start and invalidated at its end, by one elected lane of code that every
        # thread runs.
        ("matmul_persistent_nested", "matmul_persistent", tma_sig(128, 128, 64, True),
         dict(tma_consts(128, 128, 64, False, True), FLATTEN=False), 90,
         dict(num_warps=8, num_stages=3)),
        # Attention without warp specialization on sm_90a (Triton 3.9 does not split this loop
        # there), and with it on sm_100a.
        ("attention", "attention", attention_sig(), attention_consts(False), 90,
         dict(num_warps=4, num_stages=3)),
        ("attention_ws", "attention", attention_sig(), attention_consts(True), 100,
         dict(num_warps=4, num_stages=3)),
        ("layernorm", "layernorm", {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16",
                                    "stride": "i32", "N": "i32", "eps": "fp32",
                                    "BLOCK": "constexpr"}, {"BLOCK": 1024}, 90,
         dict(num_warps=8)),
        ("matmul_subtile", "matmul_subtile", subtiled(tma_sig(128, 128, 64, True)),
         unflattened(tma_consts(128, 128, 64, False, True)), 90,
         dict(num_warps=8, num_stages=3)),
        ("matmul_subtile_ws", "matmul_subtile", subtiled(tma_sig(128, 128, 64, True)),
         unflattened(tma_consts(128, 128, 64, True, True)), 100,
         dict(num_warps=4, num_stages=3)),
        ("attention_causal", "attention_causal", attention_sig(False), attention_consts(None),
         90, dict(num_warps=4, num_stages=3)),
        ("attention_causal", "attention_causal", attention_sig(False), attention_consts(None),
         100, dict(num_warps=4, num_stages=3)),
        ("softmax", "softmax", {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
                                "out_stride": "i32", "n_rows": "i32", "n_cols": "i32",
                                "BLOCK": "constexpr"}, {"BLOCK": 1024}, 90, dict(num_warps=8)),
        ("sum_atomic", "sum_atomic", {"out_ptr": "*fp32", "in_ptr": "*fp32", "n": "i32",
                                      "BLOCK": "constexpr"}, {"BLOCK": 4096}, 100,
         dict(num_warps=4)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas",
                        help="ptxas for Triton to assemble with; it also fixes the PTX ISA version")
    parser.add_argument("--out", default=str(HERE), help="folder the .ptx files go to")
    parser.add_argument("--only", nargs="*", help="output stems to regenerate (default: all)")
    parser.add_argument("--any-version", action="store_true",
                        help="run with a Triton other than %s (the output will differ)"
                        % PINNED_TRITON)
    args = parser.parse_args()

    configure_environment(args.ptxas)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if triton.__version__ != PINNED_TRITON and not args.any_version:
        sys.exit("generate.py: the corpus was made with triton %s, this is %s "
                 "(pip install triton==%s, or pass --any-version)"
                 % (PINNED_TRITON, triton.__version__, PINNED_TRITON))

    install_relative_source_paths(triton)
    kernels = define_kernels()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for stem, kernel, signature, constexprs, arch, options in corpus_entries():
        if args.only and stem not in args.only:
            continue
        name = "%s.sm_%da.ptx" % (stem, arch)
        try:
            src = ASTSource(fn=kernels[kernel], signature=signature, constexprs=constexprs,
                            attrs=divisibility_attrs(signature))
            compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
        except Exception as err:  # Triton raises many types; report and go on with the rest
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            print("FAIL %s: %s" % (name, reason))
            failures += 1
            continue
        split = "ttg.warp_specialize(" in compiled.asm["ttgir"]
        partitions = "warp-specialized" if split else "one partition"
        if constexprs.get("WARP_SPECIALIZE") and not split:
            print("FAIL %s: Triton did not warp-specialize the loop" % name)
            failures += 1
            continue
        (out / name).write_text(compiled.asm["ptx"])
        print("wrote %s (%d bytes, %d shared bytes, %d warps, %s)"
              % (name, len(compiled.asm["ptx"]), compiled.metadata.shared,
                 compiled.metadata.num_warps, partitions))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
