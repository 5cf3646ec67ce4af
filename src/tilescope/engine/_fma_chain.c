/* The exact float32 FMA chain of an fp32 "ieee" dot, batched over programs:
 *
 *   out[p, m, n] = fma(a[p, m, K-1], b[p, K-1, n], ... fma(a[p, m, 0], b[p, 0, n], out[p, m, n]))
 *
 * each step one fused multiply-add rounded once (C99 fmaf), k in order, as the H200's compiled code
 * runs it. A tile of MR x NR outputs stays in registers across the whole k loop (vectorized over n),
 * so the loop runs at the CPU's FMA throughput instead of K passes over memory. Every multiply-add
 * is an explicit fmaf and the file is compiled with -ffp-contract=off, so no other contraction can
 * change a bit: the x86-64 clones map fmaf onto the FMA instruction, the default clone calls libm.
 * Loaded through ctypes (no Python API); tilescope checks it against its NumPy path before use.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#define MR 6
#define NR 16

/* -DCLONES= builds one plain function (the default clone alone, to test it) */
#if !defined(CLONES) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#endif
#endif
#ifndef CLONES
#define CLONES
#endif

/* One MR x NR tile: c (row-major, NR wide) += the chain over k of a rows times the packed panel. */
static inline __attribute__((always_inline)) void tile(const float *const *arow, const float *panel,
                                                       ptrdiff_t k, float c[MR][NR]) {
    for (ptrdiff_t kk = 0; kk < k; kk++) {
        const float *bk = panel + kk * NR;
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            const float ai = arow[i][kk];
#pragma GCC unroll 16
            for (int j = 0; j < NR; j++) c[i][j] = fmaf(ai, bk[j], c[i][j]);
        }
    }
}

/* One program: out (m x n) updated in place from a (m x k) and b (k x n), all row-major. */
static inline __attribute__((always_inline)) void chain(const float *a, const float *b, float *out,
                                                        ptrdiff_t m, ptrdiff_t n, ptrdiff_t k,
                                                        float *panel) {
    for (ptrdiff_t n0 = 0; n0 < n; n0 += NR) {
        const ptrdiff_t nr = n - n0 < NR ? n - n0 : NR;
        for (ptrdiff_t kk = 0; kk < k; kk++) { /* a dense k x NR panel, zero-padded at the n tail */
            memcpy(panel + kk * NR, b + kk * n + n0, (size_t)nr * sizeof(float));
            for (ptrdiff_t j = nr; j < NR; j++) panel[kk * NR + j] = 0.0f;
        }
        for (ptrdiff_t m0 = 0; m0 < m; m0 += MR) {
            const ptrdiff_t mr = m - m0 < MR ? m - m0 : MR;
            const float *arow[MR];
            float c[MR][NR] = {{0}};
            for (int i = 0; i < MR; i++) { /* rows past the m tail repeat the last one, unstored */
                const ptrdiff_t row = m0 + (i < mr ? i : mr - 1);
                arow[i] = a + row * k;
                if (i < mr) memcpy(c[i], out + row * n + n0, (size_t)nr * sizeof(float));
            }
            tile(arow, panel, k, c);
            for (ptrdiff_t i = 0; i < mr; i++) memcpy(out + (m0 + i) * n + n0, c[i], (size_t)nr * sizeof(float));
        }
    }
}

/* Every program p < batch: out[p] updated in place from a[p] and b[p]; a stride of 0 broadcasts one
 * operand matrix over the programs. panel: k * NR floats of scratch. */
CLONES void tilescope_fma_chain(const float *a, const float *b, float *out, ptrdiff_t batch,
                                ptrdiff_t a_stride, ptrdiff_t b_stride, ptrdiff_t m, ptrdiff_t n,
                                ptrdiff_t k, float *panel) {
    for (ptrdiff_t p = 0; p < batch; p++)
        chain(a + p * a_stride, b + p * b_stride, out + p * m * n, m, n, k, panel);
}

/* The tile's size, so that the caller sizes the scratch panel. */
int tilescope_fma_chain_nr(void) { return NR; }
