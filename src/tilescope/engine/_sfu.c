/* The H200's special function unit (engine/sfu.py's rule, one pass an element): each instruction's
 * result is the correctly rounded value of its grid point (float64, rounded to float32) plus the
 * recorded two-bit code minus the table's offset, scaled exactly by the exponent:
 *
 *   rcp(m * 2**e)    = R[m] * 2**-e       rsqrt(m * 4**e) = S[m] * 2**-e    sqrt(m * 4**e) = Q[m] * 2**e
 *   ex2(+-(n + f))   = E+-[f] * 2**+-n    (f: the fraction of |x| truncated to 23 bits)
 *
 * the grid point's value in float64: 1 / m, 1 / sqrt(m), sqrt(m) (IEEE division and square root),
 * and for ex2 ref[hi] * (1 + t (c1 + t (c2 + t c3))) (2**(hi / 4096) times a cubic in t = lo / 2**23,
 * hi and lo the fraction's top 12 and low 11 bits: sfu.power_of_two). Every operation is an IEEE one
 * rounded once in float64 or float32, so the bits are the NumPy path's (tilescope checks that before
 * use); compiled with -ffp-contract=off so nothing is fused. Loaded through ctypes (no Python API).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* -DCLONES= builds one plain function (the default clone alone, to test it) */
#if !defined(CLONES) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef CLONES
#define CLONES
#endif

#define MANT 0x7FFFFFu
#define SIGN 0x80000000u
#define INF 0x7F800000u
#define QUIET 0x00400000u
#define NAN_BITS 0x7FC00000u
#define INLINE static inline __attribute__((always_inline))

INLINE uint32_t bits_of(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

INLINE float float_of(uint32_t b) {
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* The two-bit code of entry i (four to a byte, the first in the low bits: sixteen to a little-endian
 * 32-bit word, which vector gathers load). */
INLINE uint32_t code(const uint32_t *codes, uint32_t i) { return (codes[i >> 4] >> ((i & 15) << 1)) & 3u; }

/* a where cond, else b, without a branch (a loop of selects vectorizes). */
INLINE uint32_t pick(int cond, uint32_t a, uint32_t b) {
    const uint32_t mask = -(uint32_t)(cond != 0);
    return (a & mask) | (b & ~mask);
}

/* Normal float32 bits times 2**change: signed zero below the normal range, infinity above it. */
INLINE uint32_t scaled(uint32_t bits, int32_t change) {
    const int32_t field = (int32_t)((bits >> 23) & 0xFF) + change;
    const uint32_t sign = bits & SIGN;
    return pick(field <= 0, sign, pick(field >= 255, sign | INF, bits + ((uint32_t)change << 23)));
}

/* rcp.approx.ftz.f32 of n floats. Each loop is branch-free (selects only), so that it vectorizes. */
CLONES void tilescope_sfu_rcp(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, int offset) {
    for (ptrdiff_t i = 0; i < n; i++) {
        const uint32_t b = bits_of(x[i]), field = (b >> 23) & 0xFF, mant = b & MANT, sign = b & SIGN;
        const float exact = (float)(1.0 / (1.0 + (double)mant * 0x1p-23));
        const uint32_t table = (bits_of(exact) + code(codes, mant) - (uint32_t)offset) | sign;
        const uint32_t special = pick(field == 0, sign | INF, pick(mant, b | QUIET, sign)); /* 0 (ftz), NaN, inf */
        out[i] = float_of(pick(field - 1 >= 254, special, scaled(table, 127 - (int32_t)field)));
    }
}

/* rsqrt (rsqrt != 0) or sqrt .approx.ftz.f32 of n floats; zeros, negatives, infinities and NaN as
 * the float64 function of the flushed input gives them, rounded. */
INLINE void root(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, int offset, const int rsqrt) {
    for (ptrdiff_t i = 0; i < n; i++) {
        const uint32_t b = bits_of(x[i]), field = (b >> 23) & 0xFF, mant = b & MANT, sign = b & SIGN;
        const int32_t e = (int32_t)field - 127, odd = e & 1;
        const double m = (1.0 + (double)mant * 0x1p-23) * (double)(1 + odd);
        const float exact = (float)(rsqrt ? 1.0 / sqrt(m) : sqrt(m));
        const uint32_t table = bits_of(exact) + code(codes, mant | ((uint32_t)odd << 23)) - (uint32_t)offset;
        const int32_t half = (e - odd) / 2;
        const uint32_t zero = rsqrt ? (sign | INF) : sign, inf = rsqrt ? 0 : INF;   /* of +-0 (ftz), +inf */
        const uint32_t special = pick(field == 0, zero, pick((field == 255) & (mant != 0), b | QUIET, pick(sign, NAN_BITS, inf)));
        out[i] = float_of(pick((field - 1 >= 254) | (sign != 0), special, scaled(table, rsqrt ? -half : half)));
    }
}

CLONES void tilescope_sfu_rsqrt(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, int offset) {
    root(x, out, n, codes, offset, 1);
}

CLONES void tilescope_sfu_sqrt(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, int offset) {
    root(x, out, n, codes, offset, 0);
}

/* 2**-whole as a float64, for whole < 1023. */
INLINE double inverse_power_of_two(uint32_t whole) {
    const uint64_t b = (uint64_t)(1023 - whole) << 52;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* ex2.approx.ftz.f32 of n floats (exp == 0), or tl.exp's ex2.approx.f32 of y = x * scale (log2(e)
 * in float32) rounded to float32 (exp != 0: results below 2**-126 are kept, as the reference 2**y
 * rounded once). codes: the x >= 0 table, then the x < 0 one; ref: for each sign likewise, 4096
 * float64 powers then the cubic's three coefficients; offsets: each table's. */
INLINE void power(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, const double *ref,
                  int offset_pos, int offset_neg, float scale, const int exp) {
    const double c1 = ref[4096], c2 = ref[4097], c3 = ref[4098];
    for (ptrdiff_t i = 0; i < n; i++) {
        const float y = exp ? x[i] * scale : x[i];
        const uint32_t b = bits_of(y), neg = b >> 31, magnitude = b & ~SIGN;
        const int below_128 = magnitude < 0x43000000u, below_256 = magnitude < 0x43800000u; /* NaN: neither */
        /* |y| in fixed point, exactly, truncated (ftz: a subnormal y gives 0); |y| >= 256 and NaN: 0 */
        const uint32_t fx = (uint32_t)((double)float_of(pick(below_256, magnitude, 0)) * 0x1p23);
        const uint32_t q = fx & MANT, whole = fx >> 23;
        const double t = (double)(int32_t)pick(neg, -(q & 2047), q & 2047) * 0x1p-23;
        const double power = ref[neg * 4099 + (q >> 11)] * (1 + t * (c1 + t * (c2 + t * c3)));
        const uint32_t off = pick(neg, (uint32_t)offset_neg, (uint32_t)offset_pos);
        const uint32_t table = bits_of((float)power) + code(codes, q | (neg << 23)) - off;
        const uint32_t inside = scaled(table, (int32_t)pick(neg, -whole, whole));
        /* |y| >= 128 or NaN: 2**y rounded and flushed */
        const uint32_t outside = pick(y != y, b | QUIET, pick(neg, 0, INF));
        uint32_t result = pick(below_128, inside, outside);
        if (exp) { /* y < -126: 2**y, a subnormal or zero, rounded once */
            const uint32_t tiny = pick(below_256, bits_of((float)(power * inverse_power_of_two(whole))), 0);
            result = pick(y < -126.0f, tiny, result);
        }
        out[i] = float_of(result);
    }
}

CLONES void tilescope_sfu_ex2(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, const double *ref,
                              int offset_pos, int offset_neg) {
    power(x, out, n, codes, ref, offset_pos, offset_neg, 1.0f, 0);
}

CLONES void tilescope_sfu_exp(const float *x, float *out, ptrdiff_t n, const uint32_t *codes, const double *ref,
                              int offset_pos, int offset_neg, float scale) {
    power(x, out, n, codes, ref, offset_pos, offset_neg, scale, 1);
}
