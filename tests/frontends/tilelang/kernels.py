"""TileLang kernels written the way TileLang's own examples are (GPU-style: ``T.Kernel(threads=)``,
shared and fragment buffers, tile operations, ``T.Parallel`` and ``T.Pipelined`` loops).

Each factory returns the ``@T.prim_func`` for its sizes, as TileLang's examples do (no postponed
annotations: TileLang evaluates its ``T.Tensor`` annotations in the factory's scope); the tests
compile it with ``out_idx`` and compare against float64 references.
"""

import tilelang.language as T


def vector_add(N, block_N=256, dtype="float32"):
    """``C = A + B`` element by element; the last block is partial (TileLang guards its accesses)."""

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            for i in T.Parallel(block_N):
                C[bx * block_N + i] = A[bx * block_N + i] + B[bx * block_N + i]

    return main


def matmul(M, N, K, block_M=64, block_N=64, block_K=32, num_stages=2, dtype="float16", accum_dtype="float"):
    """``C = relu(A @ B)``: shared-memory tiles, a fragment accumulator, a pipelined K loop."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def softmax(M, N, block_M=4, dtype="float32", accum_dtype="float"):
    """Row softmax of whole rows held in fragments (``T.reduce_max``, ``T.reduce_sum``)."""
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2(x[i, j] * scale - row_max[i] * scale)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


def layer_norm(M, N, block_M=2, eps=1e-5, dtype="bfloat16", accum_dtype="float"):
    """Layer norm of bf16 rows with float32 statistics, saving the mean and 1/std per row."""

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        W: T.Tensor((N,), dtype),
        Bias: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
        Mean: T.Tensor((M,), accum_dtype),
        Rstd: T.Tensor((M,), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            x_shared = T.alloc_shared((block_M, N), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            xx = T.alloc_fragment((block_M, N), accum_dtype)
            total = T.alloc_fragment((block_M,), accum_dtype)
            squares = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], x_shared)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.Cast(accum_dtype, x_shared[i, j])
                xx[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x, total, dim=1)
            T.reduce_sum(xx, squares, dim=1)
            for i in T.Parallel(block_M):
                total[i] = total[i] / N
                squares[i] = T.rsqrt(squares[i] / N - total[i] * total[i] + eps)
                Mean[bx * block_M + i] = total[i]
                Rstd[bx * block_M + i] = squares[i]
            for i, j in T.Parallel(block_M, N):
                x_shared[i, j] = T.Cast(
                    dtype,
                    (x[i, j] - total[i]) * squares[i] * T.Cast(accum_dtype, W[j])
                    + T.Cast(accum_dtype, Bias[j]),
                )
            T.copy(x_shared, Y[bx * block_M, 0])

    return main


def flash_attention(batch, heads, seq_len, dim, is_causal, block_M=32, block_N=32, dtype="float16"):
    """Flash attention forward (online softmax over key blocks), with TileLang macros, as in TileLang's
    flash-attention examples; a causal kernel stops each query block's loop at the diagonal."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    shape = [batch, seq_len, heads, dim]
    accum_dtype = "float"

    @T.macro
    def online_softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):
        T.copy(scores_max, scores_max_prev)
        T.fill(scores_max, -T.infinity(accum_dtype))
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        T.copy(acc_s, acc_s_cast)

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):  # fmt: skip
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(seq_len, block_N)
            )
            for k in T.Pipelined(loop_range, num_stages=1):
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(
                            bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum_dtype)
                        )
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                online_softmax(
                    acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum
                )
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main


def column_sums(M, N, block_M=32, block_N=64, dtype="float32"):
    """Column sums of an ``(M, N)`` matrix, row blocks accumulated with ``T.atomic_add`` into the output
    (zeroed by the caller), as TileLang's split reductions do."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Out: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), dtype)
            partial = T.alloc_fragment((block_N,), dtype)
            T.copy(X[by * block_M, bx * block_N], tile)
            T.reduce_sum(tile, partial, dim=0)
            for j in T.Parallel(block_N):
                T.atomic_add(Out[bx * block_N + j], partial[j])

    return main


def transpose(M, N, block=32, dtype="float32"):
    """``Y = X.T`` through a shared tile, read back transposed inside ``T.Parallel``."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            tile = T.alloc_shared((block, block), dtype)
            out = T.alloc_fragment((block, block), dtype)
            T.copy(X[by * block, bx * block], tile)
            for i, j in T.Parallel(block, block):
                out[i, j] = tile[j, i]
            T.copy(out, Y[bx * block, by * block])

    return main


def scale_rows_dynamic(block_M=32, dtype="float32"):
    """``Y = X * s`` per row with a symbolic row count (``T.dynamic``): one compiled kernel serves every
    ``M``; the grid and the guard of the last block follow the tensors passed."""
    M = T.dynamic("M")
    N = 64

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), S: T.Tensor((M,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_shared((block_M, N), dtype)
            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * S[bx * block_M + i]
            T.copy(x, Y[bx * block_M, 0])

    return main
