/* The decoding attention on AVX-512 BF16 (engine/loading/native_build.py builds this file on the machine that
runs it; row_attention.h holds what the forms share: the inputs, chunks, merge and entry point).

Per key head, the keys are read once for every query row of its heads: each block of 16 keys is transposed
into 32-bit pairs (lanes = keys), and a row's 16 scores are D / 2 VDPBF16PS of the row's pairs against them.
The softmax is float32; its weights are rounded to bfloat16 in pairs of keys for the values' products (two
keys a VDPBF16PS, the values interleaved by key pairs: half the instructions of float32 FMAs; torch's
products round the weights the same way, and the scores). The vector form's cost grows with rows.

Built with DC_TILES (a CPU with AMX), the same chunks run on AMX tiles: 16 query rows by 16 keys a tile
product (the keys' block transposed as above is the tiles' pair layout), and 16 rows' bfloat16 weights by 32
keys' values; a tile's row is its query row's alone, so the bits still do not depend on the row count, but
they are not the vector form's (another order of sums). A tile product costs the same for 1 row or 16. */
#include <immintrin.h>

#ifdef DC_TILES
#define FORM 1
#else
#define FORM 0
#endif
#include "row_attention.h"

#define MAX_PAIRS 128 /* D <= 256 */

static inline __mmask16 first(int64_t n) { return (__mmask16)(n <= 0 ? 0 : n >= 16 ? 0xFFFF : (1u << n) - 1); }

/* 16 rows of 16 32-bit lanes, transposed in place. */
static inline void transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    /* 128-bit lane L of r[4a + c] now holds element 4L + c of rows 4a..4a+3; the lane shuffles gather each
       element's four lanes into one vector */
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xDD);
        r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
        r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xDD);
    }
}

/* e^x for x <= 0 (row_attention.h's polynomial). */
static inline __m512 exp_neg(__m512 x) {
    const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LOWEST), _CMP_LT_OQ);
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_LO), _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_HI), x));
    __m512 p = _mm512_set1_ps(EXP_POLY[0]);
    for (int i = 1; i < 6; i++) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_POLY[i]));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_maskz_mov_ps((__mmask16)~tiny, _mm512_scalef_ps(p, n));
}

/* The scores of m rows from `row` against 16 transposed keys (n of them real) at j0 (their column in
   `scores`, rows apart by `width`); each row's own sequence of instructions, m only interleaves them. */
static inline __attribute__((always_inline)) void score_rows(const call* c, int64_t b, int64_t g,
                                                             const __m512i* kt, int64_t j0, int64_t n,
                                                             int64_t row, const int m, float* scores,
                                                             int64_t column, int64_t width) {
    const uint32_t* qp[4];
    __m512 even[4], odd[4];
    for (int i = 0; i < m; i++) {
        qp[i] = (const uint32_t*)(c->q + b * c->qsb + row_offset(c, g, row + i, c->qsh, c->qsr));
        even[i] = odd[i] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < c->D / 2; p += 2)
        for (int i = 0; i < m; i++) {
            even[i] = _mm512_dpbf16_ps(even[i], (__m512bh)kt[p], (__m512bh)_mm512_set1_epi32((int)qp[i][p]));
            odd[i] = _mm512_dpbf16_ps(odd[i], (__m512bh)kt[p + 1], (__m512bh)_mm512_set1_epi32((int)qp[i][p + 1]));
        }
    for (int i = 0; i < m; i++) {
        __m512 s = _mm512_mul_ps(_mm512_add_ps(even[i], odd[i]), _mm512_set1_ps(c->scale));
        if (c->mask)
            s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(first(n), c->mask + b * c->msb
                                                       + row_offset(c, g, row + i, c->msh, c->msr) + j0));
        _mm512_store_ps(scores + (row + i) * width + column, _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), first(n), s));
    }
}

/* m rows' weighted values from `row`: acc (rows apart by D) += e (rows apart by `width`), rounded to
   bfloat16 in pairs of keys, times the values `vp`: per pair of keys and 32 dims, two vectors of 16
   (key, key + 1) pairs, their dims in `unpacked` order. */
static inline __attribute__((always_inline)) void weigh_rows(const call* c, const __m512i* vp, int64_t n, int64_t row,
                                                             const int m, const float* e, int64_t width,
                                                             float* acc) {
    uint32_t w[4][8];
    for (int i = 0; i < m; i++)
        _mm256_storeu_si256((__m256i*)w[i], (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(e + (row + i) * width)));
    const int64_t chunks = c->D / 32;
    for (int64_t d = 0; d < chunks; d++) {
        __m512 lo[4], hi[4];
        for (int i = 0; i < m; i++) {
            lo[i] = _mm512_load_ps(acc + (row + i) * c->D + 32 * d);
            hi[i] = _mm512_load_ps(acc + (row + i) * c->D + 32 * d + 16);
        }
        for (int64_t j = 0; j < (n + 1) / 2; j++) {
            const __m512bh v0 = (__m512bh)vp[(j * chunks + d) * 2], v1 = (__m512bh)vp[(j * chunks + d) * 2 + 1];
            for (int i = 0; i < m; i++) {
                const __m512bh pair = (__m512bh)_mm512_set1_epi32((int)w[i][j]);
                lo[i] = _mm512_dpbf16_ps(lo[i], v0, pair);
                hi[i] = _mm512_dpbf16_ps(hi[i], v1, pair);
            }
        }
        for (int i = 0; i < m; i++) {
            _mm512_store_ps(acc + (row + i) * c->D + 32 * d, lo[i]);
            _mm512_store_ps(acc + (row + i) * c->D + 32 * d + 16, hi[i]);
        }
    }
}

#define BY_FOURS(rows, call_m)                                          \
    for (int64_t row = 0; row < (rows); row += 4) switch ((rows) - row) { \
            case 1: call_m(1); break;                                   \
            case 2: call_m(2); break;                                   \
            case 3: call_m(3); break;                                   \
            default: call_m(4);                                         \
        }

/* Block [j0, j0 + n) of `keys` (16 at most, the rest zero) transposed into kt: kt[p] holds pair p (dims 2p,
   2p + 1) of the 16 keys. */
static inline void transpose_keys(const call* c, const uint16_t* keys, int64_t j0, int64_t n, __m512i* kt) {
    for (int64_t p0 = 0; p0 < c->D / 2; p0 += 16) {
        __m512i block[16];
        for (int64_t i = 0; i < 16; i++)
            block[i] = i < n ? _mm512_loadu_si512((const void*)(keys + (j0 + i) * c->D + 2 * p0)) : _mm512_setzero_si512();
        transpose16(block);
        for (int64_t i = 0; i < 16; i++) kt[p0 + i] = block[i];
    }
}

/* A step's keys and values come from memory (its weights pushed them out of the caches): ask for the keys
   two blocks after j0 and block j0's values (n of them), which the second pass reads. */
static inline void prefetch(const call* c, const uint16_t* keys, const uint16_t* values, int64_t j0, int64_t n) {
    for (int64_t i = 0; i < 16 * c->D * 2; i += 64) {
        if (j0 + 32 < c->S) _mm_prefetch((const char*)(keys + (j0 + 32) * c->D) + i, _MM_HINT_T0);
        if (i < n * c->D * 2) _mm_prefetch((const char*)(values + j0 * c->D) + i, _MM_HINT_T1);
    }
}

/* Values of keys [j0, j0 + 2 * count) (those from `end` on zero) interleaved by key pairs: for pair j and
   dims 32 d..32 d + 31, vectors lo and hi of 16 (key, key + 1) pairs at vp[j * sj + d * sd] and + sh (their
   dims in `merge`'s unpacked order). */
static inline void pair_values(const call* c, const uint16_t* values, int64_t j0, int64_t count, int64_t end,
                               __m512i* vp, int64_t sj, int64_t sd, int64_t sh) {
    for (int64_t j = 0; j < count; j++)
        for (int64_t d = 0; d < c->D / 32; d++) {
            const int64_t k0 = j0 + 2 * j;
            const __m512i a = k0 < end ? _mm512_loadu_si512((const void*)(values + k0 * c->D + 32 * d)) : _mm512_setzero_si512();
            const __m512i b = k0 + 1 < end ? _mm512_loadu_si512((const void*)(values + (k0 + 1) * c->D + 32 * d))
                                           : _mm512_setzero_si512();
            vp[j * sj + d * sd] = _mm512_unpacklo_epi16(a, b);
            vp[j * sj + d * sd + sh] = _mm512_unpackhi_epi16(a, b);
        }
}

/* A row's scores s (width of them, -inf where hidden) turned into e^(s - max) in place; its max and sum
   into part[D], part[D + 1]. */
static inline void weigh_scores(float* s, int64_t width, float* part, int64_t D) {
    __m512 top = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < width; j += 16) top = _mm512_max_ps(top, _mm512_load_ps(s + j));
    const float most = _mm512_reduce_max_ps(top);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < width; j += 16) {
        /* a chunk whose keys are all masked weighs nothing (not e^(-inf + inf)) */
        __m512 e = most == -INFINITY ? _mm512_setzero_ps()
                                     : exp_neg(_mm512_sub_ps(_mm512_load_ps(s + j), _mm512_set1_ps(most)));
        _mm512_store_ps(s + j, e);
        sum = _mm512_add_ps(sum, e);
    }
    float lanes[16], total = 0.0f;
    _mm512_storeu_ps(lanes, sum);
    for (int i = 0; i < 16; i++) total += lanes[i];
    part[D] = most;
    part[D + 1] = total;
}

/* Key head g of batch row b, keys [chunk * CHUNK, + CHUNK): every row's max, sum and weighted values. */
static int attend_vectors(const call* c, int64_t b, int64_t g, int64_t chunk) {
    const int64_t rows = c->H / c->Hkv * c->R, start = chunk * CHUNK;
    const int64_t end = start + CHUNK < c->S ? start + CHUNK : c->S, width = (end - start + 15) / 16 * 16;
    float* scores = scratch_for((size_t)rows * (width + c->D));
    if (!scores) return -1;
    float* acc = scores + rows * width;
    const uint16_t* keys = c->k + b * c->ksb + g * c->ksh;
    const uint16_t* values = c->v + b * c->vsb + g * c->vsh;
    __m512i kt[MAX_PAIRS];
    for (int64_t i = 0; i < 32 * c->D * 2 && start * c->D * 2 + i < c->S * c->D * 2; i += 64)
        _mm_prefetch((const char*)(keys + start * c->D) + i, _MM_HINT_T0);
    for (int64_t j0 = start; j0 < end; j0 += 16) {
        const int64_t n = end - j0 < 16 ? end - j0 : 16;
        prefetch(c, keys, values, j0, n);
        transpose_keys(c, keys, j0, n, kt);
#define SCORE(m) score_rows(c, b, g, kt, j0, n, row, m, scores, j0 - start, width)
        BY_FOURS(rows, SCORE)
    }
    for (int64_t row = 0; row < rows; row++) {
        weigh_scores(scores + row * width, width, part_of(c, b, g, chunk, row), c->D);
        for (int64_t d = 0; d < c->D; d++) acc[row * c->D + d] = 0.0f;
    }
    __m512i vp[8 * (256 / 32) * 2];
    for (int64_t j0 = start; j0 < end; j0 += 16) {
        const int64_t n = end - j0 < 16 ? end - j0 : 16;
        pair_values(c, values, j0, (n + 1) / 2, end, vp, 2 * (c->D / 32), 2, 1);
#define WEIGH(m) weigh_rows(c, vp, n, row, m, scores + (j0 - start), width, acc)
        BY_FOURS(rows, WEIGH)
    }
    for (int64_t row = 0; row < rows; row++) {
        float* part = part_of(c, b, g, chunk, row);
        for (int64_t d = 0; d < c->D; d++) part[d] = acc[row * c->D + d];
    }
    return 0;
}

#ifdef DC_TILES
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* 0 once this process may use the tiles (Linux asks each process to request them). */
int dc_tiles_init(void) { return (int)syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); }

/* Every tile 16 rows of 64 bytes: 16 query rows by 32 bfloat16 (16 pairs), 16 pairs by 16 keys or dims, 16
   rows by 16 float32. */
static void configure_tiles(void) {
    struct {
        uint8_t palette, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } __attribute__((packed)) cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 4; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    _tile_loadconfig(&cfg);
}

/* `attend_vectors` on tiles: the group's rows in tiles of 16 (the last padded with zero rows), keys in
   blocks of 16 for the scores and 32 for the values. */
static int attend_chunk_tiles(const call* c, int64_t b, int64_t g, int64_t chunk) {
    const int64_t rows = c->H / c->Hkv * c->R, padded = (rows + 15) / 16 * 16, D = c->D, start = chunk * CHUNK;
    const int64_t end = start + CHUNK < c->S ? start + CHUNK : c->S, width = (end - start + 31) / 32 * 32;
    /* in floats, each a multiple of 16 (64 bytes): scores, weighted values, bfloat16 weights and query rows,
       the transposed key block, the values' pairs */
    float* scores = scratch_for((size_t)(padded * width + padded * D + padded * width / 2 + padded * D / 2
                                         + D / 2 * 16 + width / 2 * D));
    if (!scores) return -1;
    float* acc = scores + padded * width;
    uint16_t* weights = (uint16_t*)(acc + padded * D);
    uint16_t* q = weights + padded * width;
    __m512i* kt = (__m512i*)(q + padded * D);
    __m512i* vp = kt + D / 2;
    const uint16_t* keys = c->k + b * c->ksb + g * c->ksh;
    const uint16_t* values = c->v + b * c->vsb + g * c->vsh;
    for (int64_t row = 0; row < padded; row++)
        if (row < rows) memcpy(q + row * D, c->q + b * c->qsb + row_offset(c, g, row, c->qsh, c->qsr), (size_t)D * 2);
        else memset(q + row * D, 0, (size_t)D * 2);
    for (int64_t j0 = start; j0 < end; j0 += 16) {
        const int64_t n = end - j0 < 16 ? end - j0 : 16;
        prefetch(c, keys, values, j0, n);
        transpose_keys(c, keys, j0, n, kt);
        for (int64_t t = 0; t < padded; t += 16) {
            _tile_zero(0);
            for (int64_t p0 = 0; p0 < D / 2; p0 += 16) {
                _tile_loadd(1, q + t * D + 2 * p0, D * 2);
                _tile_loadd(2, kt + p0, 64);
                _tile_dpbf16ps(0, 1, 2);
            }
            _tile_stored(0, scores + t * width + (j0 - start), width * 4);
        }
    }
    const __m512 scale = _mm512_set1_ps(c->scale);
    for (int64_t row = 0; row < padded; row++) {
        float* s = scores + row * width;
        if (row >= rows) {
            memset(weights + row * width, 0, (size_t)width * 2);
            continue;
        }
        const float* mask = c->mask ? c->mask + b * c->msb + row_offset(c, g, row, c->msh, c->msr) + start : NULL;
        for (int64_t j = 0; j < width; j += 16) {
            const __mmask16 real = first(end - start - j);
            __m512 x = _mm512_mul_ps(_mm512_maskz_load_ps(real, s + j), scale);
            if (mask) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(real, mask + j));
            _mm512_store_ps(s + j, _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), real, x));
        }
        weigh_scores(s, width, part_of(c, b, g, chunk, row), D);
        for (int64_t j = 0; j < width; j += 16)
            _mm256_store_si256((__m256i*)(weights + row * width + j), (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(s + j)));
    }
    const int64_t count = width / 2; /* key pairs */
    pair_values(c, values, start, count, end, vp, 1, 2 * count, count);
    for (int64_t t = 0; t < padded; t += 16)
        for (int64_t d = 0; d < D / 32; d++) {
            _tile_zero(0);
            _tile_zero(3);
            for (int64_t j = 0; j < count; j += 16) {
                _tile_loadd(1, weights + t * width + 2 * j, width * 2);
                _tile_loadd(2, vp + 2 * d * count + j, 64);
                _tile_dpbf16ps(0, 1, 2);
                _tile_loadd(2, vp + (2 * d + 1) * count + j, 64);
                _tile_dpbf16ps(3, 1, 2);
            }
            _tile_stored(0, acc + t * D + 32 * d, D * 4);
            _tile_stored(3, acc + t * D + 32 * d + 16, D * 4);
        }
    for (int64_t row = 0; row < rows; row++) {
        float* part = part_of(c, b, g, chunk, row);
        for (int64_t d = 0; d < D; d++) part[d] = acc[row * D + d];
    }
    return 0;
}
static int attend_chunk(const call* c, int64_t b, int64_t g, int64_t chunk) { return attend_chunk_tiles(c, b, g, chunk); }
static void thread_start(void) { configure_tiles(); }
static void thread_end(void) { _tile_release(); }
#else
static int attend_chunk(const call* c, int64_t b, int64_t g, int64_t chunk) { return attend_vectors(c, b, g, chunk); }
static void thread_start(void) {}
static void thread_end(void) {}
#endif

/* unpacklo/hi of 16-bit pairs keep 128-bit lanes: in each 32 dims, lane L of the low vector holds dims
   8L..8L+3, of the high one 8L+4..8L+7 */
static inline int64_t dim_at(int64_t i) {
    const int64_t j = i % 32, lane = j % 16 / 4;
    return i - j + 8 * lane + 4 * (j / 16) + j % 4;
}

