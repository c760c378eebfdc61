/* The decoding attention on AVX2 and FMA, for CPUs without AVX-512 BF16 (engine/loading/native_build.py builds
   this file on the machine that runs it; row_attention.h holds what the forms share).

Without bfloat16 instructions the chunk's keys and values are widened to float32 once (a bfloat16 is the
top half of a float32) and every query row of the key head's group reads them there: each block of 8 keys
transposed (lanes = keys), so a row's 8 scores are D FMAs, two rows against four blocks a pass; float32
weights meet the values by FMAs too, two rows at a time over 32 dims. torch's products on such a machine
widen the keys once per row and run rows apart to keep a row's bits; here the keys are widened once per
call for all rows. At 16 rows its inner loops are bound by the FMAs: the 566 M multiply-adds of SmolLM2's
30 layers after 1,024 keys need 6.3 ms of the Xeon's two threads at their measured peak (180 GFLOP/s held
to AVX2); the calls took 10.7-12.6 ms. */
#include <immintrin.h>

#define FORM 2
#include "row_attention.h"

static void thread_start(void) {}
static void thread_end(void) {}
static inline int64_t dim_at(int64_t i) { return i; }

/* 8 bfloat16 as float32. */
static inline __m256 widen(const uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
}

/* e^x for x <= 0 (row_attention.h's polynomial; 2^n from the exponent bits, n >= -126 for every lane kept). */
static inline __m256 exp_neg(__m256 x) {
    const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(EXP_LOWEST), _CMP_LT_OQ);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x));
    __m256 p = _mm256_set1_ps(EXP_POLY[0]);
    for (int i = 1; i < 6; i++) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_POLY[i]));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_max_ps(n, _mm256_set1_ps(-126.0f))), _mm256_set1_epi32(127));
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23))));
}

/* Lanes [0, n) all ones. */
static inline __m256i first(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 0 ? 0 : n > 8 ? 8 : n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Rows q, q + D (m of them) against nb blocks of 8 transposed keys (kt, D vectors a block): each row's
   score of a key is one chain of FMAs over the dims in order, whatever rows and blocks run beside it. Two
   rows and four blocks a pass keep the FMAs, not the loads, the bound (six loads for eight FMAs; a row
   alone against one block loaded two per FMA). */
static inline __attribute__((always_inline)) void score_rows(const int m, const int nb, const float* q,
                                                             const __m256* kt, int64_t D, float* s, int64_t width) {
    __m256 acc[2][4];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < nb; j++) acc[i][j] = _mm256_setzero_ps();
    for (int64_t d = 0; d < D; d++) {
        __m256 k[4];
        for (int j = 0; j < nb; j++) k[j] = kt[j * D + d];
        for (int i = 0; i < m; i++) {
            const __m256 x = _mm256_broadcast_ss(q + i * D + d);
            for (int j = 0; j < nb; j++) acc[i][j] = _mm256_fmadd_ps(x, k[j], acc[i][j]);
        }
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < nb; j++) _mm256_store_ps(s + i * width + 8 * j, acc[i][j]);
}

/* `score_rows` with m and nb constants (its chains then stay in registers). */
static void score_pass(int m, int nb, const float* q, const __m256* kt, int64_t D, float* s, int64_t width) {
    switch (4 * (m - 1) + nb - 1) {
        case 0: score_rows(1, 1, q, kt, D, s, width); break;
        case 1: score_rows(1, 2, q, kt, D, s, width); break;
        case 2: score_rows(1, 3, q, kt, D, s, width); break;
        case 3: score_rows(1, 4, q, kt, D, s, width); break;
        case 4: score_rows(2, 1, q, kt, D, s, width); break;
        case 5: score_rows(2, 2, q, kt, D, s, width); break;
        case 6: score_rows(2, 3, q, kt, D, s, width); break;
        default: score_rows(2, 4, q, kt, D, s, width);
    }
}

/* Rows `row`, `row` + 1 (m of them) of acc (rows apart by D), dims [d0, d0 + 32): += their weights (rows
   apart by `width`) times the n values vf (rows apart by D), key by key. */
static inline void weigh2(const float* e, int64_t width, const float* vf, int64_t n, int64_t D, int64_t row, int m,
                          int64_t d0, float* acc) {
    __m256 a[2][4];
    for (int i = 0; i < m; i++)
        for (int u = 0; u < 4; u++) a[i][u] = _mm256_load_ps(acc + (row + i) * D + d0 + 8 * u);
    for (int64_t j = 0; j < n; j++) {
        const float* v = vf + j * D + d0;
        const __m256 v0 = _mm256_load_ps(v), v1 = _mm256_load_ps(v + 8), v2 = _mm256_load_ps(v + 16),
                     v3 = _mm256_load_ps(v + 24);
        for (int i = 0; i < m; i++) {
            const __m256 w = _mm256_broadcast_ss(e + (row + i) * width + j);
            a[i][0] = _mm256_fmadd_ps(w, v0, a[i][0]);
            a[i][1] = _mm256_fmadd_ps(w, v1, a[i][1]);
            a[i][2] = _mm256_fmadd_ps(w, v2, a[i][2]);
            a[i][3] = _mm256_fmadd_ps(w, v3, a[i][3]);
        }
    }
    for (int i = 0; i < m; i++)
        for (int u = 0; u < 4; u++) _mm256_store_ps(acc + (row + i) * D + d0 + 8 * u, a[i][u]);
}

/* Key head g of batch row b, keys [chunk * CHUNK, + CHUNK): every row's max, sum and weighted values. */
static int attend_chunk(const call* c, int64_t b, int64_t g, int64_t chunk) {
    const int64_t rows = c->H / c->Hkv * c->R, D = c->D, start = chunk * CHUNK;
    const int64_t end = start + CHUNK < c->S ? start + CHUNK : c->S, n = end - start, width = (n + 7) / 8 * 8;
    /* floats, each a multiple of 8 (32 bytes): scores, weighted values, query rows, transposed keys, values */
    float* scores = scratch_for((size_t)(rows * width + rows * D + rows * D + width * D + n * D));
    if (!scores) return -1;
    float* acc = scores + rows * width;
    float* q = acc + rows * D;
    __m256* kt = (__m256*)(q + rows * D); /* block j / 8: D vectors of 8 keys */
    float* vf = (float*)(kt + width / 8 * D);
    const uint16_t* keys = c->k + b * c->ksb + g * c->ksh + start * D;
    const uint16_t* values = c->v + b * c->vsb + g * c->vsh + start * D;
    for (int64_t row = 0; row < rows; row++) {
        const uint16_t* from = c->q + b * c->qsb + row_offset(c, g, row, c->qsh, c->qsr);
        for (int64_t d = 0; d < D; d += 8) _mm256_store_ps(q + row * D + d, widen(from + d));
    }
    for (int64_t j0 = 0; j0 < width; j0 += 8) {
        __m256* block = kt + j0 / 8 * D;
        for (int64_t d0 = 0; d0 < D; d0 += 8) {
            __m256 r[8], t[8];
            for (int i = 0; i < 8; i++) r[i] = j0 + i < n ? widen(keys + (j0 + i) * D + d0) : _mm256_setzero_ps();
            /* 8 x 8 transpose: r[i] lane d becomes block[d0 + d] lane i */
            for (int i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
                t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
            }
            for (int i = 0; i < 8; i += 4) {
                r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
                r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
                r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
                r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
            }
            for (int i = 0; i < 4; i++) {
                block[d0 + i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
                block[d0 + i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
            }
        }
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t d = 0; d < D; d += 8) _mm256_store_ps(vf + j * D + d, widen(values + j * D + d));
    for (int64_t row = 0; row < rows; row += 2)
        for (int64_t j0 = 0; j0 < width; j0 += 32)
            score_pass(rows - row < 2 ? 1 : 2, width - j0 < 32 ? (int)((width - j0) / 8) : 4, q + row * D,
                       kt + j0 / 8 * D, D, scores + row * width + j0, width);
    const __m256 scale = _mm256_set1_ps(c->scale), hidden = _mm256_set1_ps(-INFINITY);
    for (int64_t row = 0; row < rows; row++) {
        float* s = scores + row * width;
        const float* mask = c->mask ? c->mask + b * c->msb + row_offset(c, g, row, c->msh, c->msr) + start : NULL;
        __m256 top = hidden;
        for (int64_t j0 = 0; j0 < width; j0 += 8) {
            const __m256i real = first(n - j0);
            __m256 x = _mm256_mul_ps(_mm256_load_ps(s + j0), scale);
            if (mask) x = _mm256_add_ps(x, _mm256_maskload_ps(mask + j0, real));
            x = _mm256_blendv_ps(hidden, x, _mm256_castsi256_ps(real));
            _mm256_store_ps(s + j0, x);
            top = _mm256_max_ps(top, x);
        }
        float lanes[8], most = -INFINITY, total = 0.0f;
        _mm256_storeu_ps(lanes, top);
        for (int i = 0; i < 8; i++) most = fmaxf(most, lanes[i]);
        __m256 sum = _mm256_setzero_ps();
        for (int64_t j0 = 0; j0 < width; j0 += 8) {
            /* a chunk whose keys are all masked weighs nothing (not e^(-inf + inf)) */
            const __m256 e = most == -INFINITY ? _mm256_setzero_ps()
                                               : exp_neg(_mm256_sub_ps(_mm256_load_ps(s + j0), _mm256_set1_ps(most)));
            _mm256_store_ps(s + j0, e);
            sum = _mm256_add_ps(sum, e);
        }
        _mm256_storeu_ps(lanes, sum);
        for (int i = 0; i < 8; i++) total += lanes[i];
        float* part = part_of(c, b, g, chunk, row);
        part[D] = most;
        part[D + 1] = total;
        for (int64_t d = 0; d < D; d++) acc[row * D + d] = 0.0f;
    }
    for (int64_t d0 = 0; d0 < D; d0 += 32)
        for (int64_t row = 0; row < rows; row += 2) {
            if (rows - row >= 2) weigh2(scores, width, vf, n, D, row, 2, d0, acc);
            else weigh2(scores, width, vf, n, D, row, 1, d0, acc);
        }
    for (int64_t row = 0; row < rows; row++) memcpy(part_of(c, b, g, chunk, row), acc + row * D, (size_t)D * 4);
    return 0;
}
