/* A float32 sum in the order of a reduction tree, row by row:
 *
 *   for each level j: cur[h * s + l] = cur[h * 2s + l] + cur[h * 2s + s + l],  s = 1 << bits[j]
 *
 * each level folds one bit of the (current) element index, halving the row, until one element is
 * left: the halves-wise adds tilescope's NumPy path (engine/layout.py, ordered_sum) makes with one
 * fresh array per level, here with a row in cache and no temporaries. Every add is a plain IEEE
 * float add in the order given (-ffp-contract=off, no reassociation), so every sum that is not a NaN
 * has NumPy's bits (which NaN two NaNs give depends on the loop: the caller redoes those in NumPy).
 * Loaded through ctypes (no Python API); tilescope checks it against its NumPy path before use.
 */
#include <stddef.h>

/* -DCLONES= builds one plain function (the default clone alone, to test it) */
#if !defined(CLONES) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef CLONES
#define CLONES
#endif

/* One level: dst (m / 2) from src (m), folding the index bit of weight s. */
static inline __attribute__((always_inline)) void fold(const float *restrict src, float *restrict dst,
                                                       ptrdiff_t m, ptrdiff_t s) {
    if (s == 1) {
        for (ptrdiff_t h = 0; h < m / 2; h++) dst[h] = src[2 * h] + src[2 * h + 1];
        return;
    }
    for (ptrdiff_t h = 0; h < m / (2 * s); h++) {
        const float *restrict lo = src + h * 2 * s;
        float *restrict d = dst + h * s;
        for (ptrdiff_t l = 0; l < s; l++) d[l] = lo[l] + lo[s + l];
    }
}

/* out[r] = the tree sum of row r of x (rows x n, contiguous; n a power of two, 1 << nbits);
 * scratch holds n floats. */
CLONES void tilescope_tree_sum_f32(const float *restrict x, ptrdiff_t rows, ptrdiff_t n, const int *bits,
                                   int nbits, float *restrict out, float *restrict scratch) {
    float *restrict even = scratch;       /* levels 0, 2, 4, ...: n / 2 */
    float *restrict odd = scratch + n / 2; /* levels 1, 3, 5, ...: n / 4 */
    for (ptrdiff_t r = 0; r < rows; r++) {
        ptrdiff_t m = n;
        if (nbits == 0) {
            out[r] = x[r * n];
            continue;
        }
        fold(x + r * n, even, m, (ptrdiff_t)1 << bits[0]);
        m /= 2;
        for (int j = 1; j < nbits; j++, m /= 2) {
            const ptrdiff_t s = (ptrdiff_t)1 << bits[j];
            if (j % 2) fold(even, odd, m, s);
            else fold(odd, even, m, s);
        }
        out[r] = (nbits % 2) ? even[0] : odd[0];
    }
}
