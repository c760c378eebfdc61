/* 4-bit weight products on AVX2 and FMA for decoding steps, on CPUs without AMX tiles: the same entry points
   and weight layout as tile_int4.c (engine/kernels/tile_int4.py packs the weight and calls either library;
   engine/loading/native_build.py builds this file on the machine that runs it).

y (rows, N) float32 = x (rows, kx) float32, followed by its products by a LoRA's down-projection (rank, kx)
where one is given, then zeros up to K, times W (N, K)^T, W in groups of 32 along K:
w = (q - 8) * scale + offset, so y = sum over groups of scale * (x . q) + (offset - 8 scale) * sum(x).

Each row is rounded to int8 per group of 32 inputs (its scale the group's largest magnitude / 127), as
llama.cpp rounds rows for its AVX2 products (the AMX kernel rounds them to bfloat16); the offset's term
takes the group's float32 sum. Per block of 16 outputs, every group's codes are spread to bytes once (a
32-bit lane per output, four columns), and then every row's groups are integer dot products
(`_mm256_maddubs_epi16`: 32 multiplies and 16 adds an instruction, where an FMA does 8): the weight is read
once for all rows, where torch's float16 product on such a machine reads it once per row, and a product
takes 0.4-0.5x the time float32 FMAs on widened codes took, at 1 to 16 rows. A row's arithmetic (integer
sums, then a fixed order of float32 FMAs) is the same whatever rows run beside it and however many threads
run: an output's bits do not depend on the row count.

The same file runs an 8-bit product (`dc_int8_mm`, `engine.kernels.int8_blocks`) for a checkpoint's 8-bit
blocks (SmolLM2's vocabulary projection, Q8_0): torch's float16 and bfloat16 products on such a machine read
the weight once per row, a 16-row step's head cost 40 ms of its 170.

Built with DC_VNNI512 (CPUs with AVX-512 VNNI and no AMX tiles, as the Zen 4 EPYC), the multi-row products
run int4_vnni.h's forms instead: the same integer sums and float32 steps, so the same bits. int4_rows.h
prepares a call's rows for both. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "int4_rows.h"

/* The AMX kernel asks Linux for its tiles here; nothing to ask for AVX2. */
int dc_tiles_init(void) { return 0; }

/* Which kernel this library is: 1 AVX2, 2 the AVX-512 VNNI build (0: tile_int4.c). */
#ifdef DC_VNNI512
int dc_tiles_form(void) { return 2; }
#else
int dc_tiles_form(void) { return 1; }
#endif

/* Group g's 256 bytes of codes (tile_int4.c's layout: in chunk c, byte 2j + e holds output j's column
   4c + e in its low nibble and 4c + 2 + e in its high one) as bytes, two vectors per chunk: each 32-bit
   lane one output's columns 4c..4c + 3, the first vector outputs 0-3 and 8-11, the second 4-7 and 12-15
   (the spread's lane order, which the scales and shifts take too). */
static inline void spread_group(const uint8_t* codes, __m256i* cw) {
    const __m256i low = _mm256_set1_epi16(0x0F0F);
    for (int c = 0; c < 8; c++) {
        const __m256i v = _mm256_loadu_si256((const __m256i*)(codes + 32 * c));
        const __m256i first = _mm256_and_si256(v, low), second = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        cw[2 * c] = _mm256_unpacklo_epi16(first, second);
        cw[2 * c + 1] = _mm256_unpackhi_epi16(first, second);
    }
}

/* 8 bfloat16 as float32. */
static inline __m256 widen8(const uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
}

/* A group's 16 bfloat16 scales and 16 offsets (p) as float32 scales and shifts (offset - 8 scale) in the
   spread's lane order: outputs 0-3 and 8-11, then 4-7 and 12-15. */
static inline void lane_scales(const uint16_t* p, float* scales, float* shifts) {
    const __m256 s0 = widen8(p), s1 = widen8(p + 8), o0 = widen8(p + 16), o1 = widen8(p + 24);
    const __m256 eight = _mm256_set1_ps(8.0f);
    const __m256 a = _mm256_permute2f128_ps(s0, s1, 0x20), b = _mm256_permute2f128_ps(s0, s1, 0x31);
    _mm256_store_ps(scales, a);
    _mm256_store_ps(scales + 8, b);
    _mm256_store_ps(shifts, _mm256_fnmadd_ps(eight, a, _mm256_permute2f128_ps(o0, o1, 0x20)));
    _mm256_store_ps(shifts + 8, _mm256_fnmadd_ps(eight, b, _mm256_permute2f128_ps(o0, o1, 0x31)));
}

/* Rows r0.. (m of them, int8 in xq with their groups' scales sx and float32 sums) times one block of 16
   outputs spread in cw (G x 16 vectors) with scales and shifts (offset - 8 scale) per group in that
   order: y[r][16 b..] for each row. A group's eight chunks add up in 16 bits (at most 8 x 2 x 15 x 127),
   then in 32. */
static inline __attribute__((always_inline)) void block_rows_int8(
    const int m, const int8_t* xq, const float* sx, const float* sums, int64_t r0, int64_t K, const __m256i* cw,
    const float* scales, const float* shifts, float* y, int64_t N, int64_t b) {
    const int64_t G = K / 32;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[4][2];
    for (int i = 0; i < m; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t g = 0; g < G; g++) {
        const __m256i* cg = cw + g * 16;
        __m256i t[4][2];
        for (int i = 0; i < m; i++) t[i][0] = t[i][1] = _mm256_setzero_si256();
        for (int c = 0; c < 8; c++) {
            const __m256i w0 = _mm256_load_si256(cg + 2 * c), w1 = _mm256_load_si256(cg + 2 * c + 1);
            for (int i = 0; i < m; i++) {
                int32_t four;
                __builtin_memcpy(&four, xq + (r0 + i) * K + 32 * g + 4 * c, 4);
                const __m256i xb = _mm256_set1_epi32(four);
                t[i][0] = _mm256_add_epi16(t[i][0], _mm256_maddubs_epi16(w0, xb));
                t[i][1] = _mm256_add_epi16(t[i][1], _mm256_maddubs_epi16(w1, xb));
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 scale = _mm256_load_ps(scales + g * 16 + 8 * h), shift = _mm256_load_ps(shifts + g * 16 + 8 * h);
            for (int i = 0; i < m; i++) {
                const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(t[i][h], ones));
                acc[i][h] = _mm256_fmadd_ps(dot, _mm256_mul_ps(scale, _mm256_set1_ps(sx[(r0 + i) * G + g])), acc[i][h]);
                acc[i][h] = _mm256_fmadd_ps(_mm256_set1_ps(sums[(r0 + i) * G + g]), shift, acc[i][h]);
            }
        }
    }
    for (int i = 0; i < m; i++) {
        _mm256_storeu_ps(y + (r0 + i) * N + 16 * b, _mm256_permute2f128_ps(acc[i][0], acc[i][1], 0x20));
        _mm256_storeu_ps(y + (r0 + i) * N + 16 * b + 8, _mm256_permute2f128_ps(acc[i][0], acc[i][1], 0x31));
    }
}

/* `block_rows_int8` for a call of one row, on the codes as stored: a spread would not be repaid. Per chunk the
   low nibbles (columns 4c, 4c + 1 of each output) meet one pair of the row's bytes and the high nibbles
   (4c + 2, 4c + 3) the other, an output a 16-bit lane; the integer sums, and so every bit of y, are
   `block_rows_int8`'s. (Beside two or three rows the pairs' broadcasts cost more than the spread saves.) */
static void block_row_nibbles(const int8_t* xq, const float* sx, const float* sums, int64_t K, const uint8_t* block,
                              float* y, int64_t b) {
    const int64_t G = K / 32;
    const __m256i low = _mm256_set1_epi16(0x0F0F);
    const __m256 eight = _mm256_set1_ps(8.0f);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t g = 0; g < G; g++) {
        const uint8_t* w = block + g * 320;
        __m256i t0 = _mm256_setzero_si256(), t1 = _mm256_setzero_si256();
        for (int c = 0; c < 8; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i*)(w + 32 * c));
            int16_t pair[2];
            __builtin_memcpy(pair, xq + 32 * g + 4 * c, 4);
            t0 = _mm256_add_epi16(t0, _mm256_maddubs_epi16(_mm256_and_si256(v, low), _mm256_set1_epi16(pair[0])));
            t1 = _mm256_add_epi16(t1, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low),
                                                           _mm256_set1_epi16(pair[1])));
        }
        const uint16_t* p = (const uint16_t*)(w + 256);
        const __m128i halves[2][2] = {{_mm256_castsi256_si128(t0), _mm256_castsi256_si128(t1)},
                                      {_mm256_extracti128_si256(t0, 1), _mm256_extracti128_si256(t1, 1)}};
        for (int h = 0; h < 2; h++) {
            const __m256 scale = widen8(p + 8 * h), shift = _mm256_fnmadd_ps(eight, scale, widen8(p + 16 + 8 * h));
            const __m256i dot = _mm256_add_epi32(_mm256_cvtepi16_epi32(halves[h][0]), _mm256_cvtepi16_epi32(halves[h][1]));
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(scale, _mm256_set1_ps(sx[g])), acc[h]);
            acc[h] = _mm256_fmadd_ps(_mm256_set1_ps(sums[g]), shift, acc[h]);
        }
    }
    for (int h = 0; h < 2; h++) _mm256_storeu_ps(y + 16 * b + 8 * h, acc[h]);
}

/* 8-bit products: per block of 16 outputs and group of 32 columns, 512 bytes of int8 codes (chunk c of four
   columns at bytes 64 c..: output o's four codes at 64 c + 4 o) then the 16 outputs' float32 scales;
   w = q * scale (GGUF's Q8_0, exactly). */
#define INT8_GROUP_BYTES 576

/* Rows r0.. (m of them, int8 in xq with their groups' scales sx) times one block of 16 outputs of the 8-bit
   layout (its G groups from `block`): y[r][16 b..]. The codes are signed, so each product is |w| times x with
   w's sign (`_mm256_sign_epi8`); two such pairs can reach 2 x 128 x 127, so each chunk's sums widen to 32 bits
   at once. */
static inline __attribute__((always_inline)) void block_rows_8bit(
    const int m, const int8_t* xq, const float* sx, int64_t r0, int64_t K, const uint8_t* block, float* y,
    int64_t N, int64_t b) {
    const int64_t G = K / 32;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[4][2];
    for (int i = 0; i < m; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t g = 0; g < G; g++) {
        const uint8_t* w = block + g * INT8_GROUP_BYTES;
        __m256i t[4][2];
        for (int i = 0; i < m; i++) t[i][0] = t[i][1] = _mm256_setzero_si256();
        for (int c = 0; c < 8; c++) {
            const __m256i w0 = _mm256_loadu_si256((const __m256i*)(w + 64 * c));
            const __m256i w1 = _mm256_loadu_si256((const __m256i*)(w + 64 * c + 32));
            const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);
            for (int i = 0; i < m; i++) {
                int32_t four;
                __builtin_memcpy(&four, xq + (r0 + i) * K + 32 * g + 4 * c, 4);
                const __m256i xb = _mm256_set1_epi32(four);
                t[i][0] = _mm256_add_epi32(t[i][0], _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(xb, w0)), ones));
                t[i][1] = _mm256_add_epi32(t[i][1], _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(xb, w1)), ones));
            }
        }
        for (int h = 0; h < 2; h++) {
            const __m256 scale = _mm256_loadu_ps((const float*)(w + 512) + 8 * h);
            for (int i = 0; i < m; i++)
                acc[i][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t[i][h]), _mm256_mul_ps(scale, _mm256_set1_ps(sx[(r0 + i) * G + g])),
                                            acc[i][h]);
        }
    }
    for (int i = 0; i < m; i++)
        for (int h = 0; h < 2; h++) _mm256_storeu_ps(y + (r0 + i) * N + 16 * b + 8 * h, acc[i][h]);
}

#ifdef DC_VNNI512
#include "int4_vnni.h" /* spread_blocks and rows_8bit on AVX-512 VNNI */
#else
/* The blocks of a call of several rows (a worksharing loop of the caller's parallel region): each block's
   codes spread once, then its rows four at a time. 0, or 1 where this thread's buffer could not be had. */
static int spread_blocks(const int8_t* xq, const float* sx, const float* sums, int64_t rows, const uint8_t* weights,
                         float* y, int64_t N, int64_t K) {
    const int64_t G = K / 32, blocks = N / 16;
    int failed = 0;
    __m256i* cw = aligned_alloc(32, (size_t)(G * 16 * 32 + G * 32 * 4)); /* this thread's spread groups */
    #pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        if (cw == NULL) { failed = 1; continue; }
        float* scales = (float*)(cw + G * 16);
        float* shifts = scales + G * 16;
        for (int64_t g = 0; g < G; g++) {
            const uint8_t* w = weights + (b * G + g) * 320;
            spread_group(w, cw + g * 16);
            lane_scales((const uint16_t*)(w + 256), scales + g * 16, shifts + g * 16);
        }
        int64_t r0 = 0;
        for (; rows - r0 >= 4; r0 += 4) block_rows_int8(4, xq, sx, sums, r0, K, cw, scales, shifts, y, N, b);
        for (; r0 < rows; r0++) block_rows_int8(1, xq, sx, sums, r0, K, cw, scales, shifts, y, N, b);
    }
    free(cw);
    return failed;
}

/* One block of the 8-bit product: its rows four at a time, then the rest one by one. */
static void rows_8bit(const int8_t* xq, const float* sx, const int32_t* xsum, int64_t rows, int64_t K,
                      const uint8_t* block, float* y, int64_t N, int64_t b) {
    (void)xsum; /* the VNNI build's */
    int64_t r0 = 0;
    for (; rows - r0 >= 4; r0 += 4) block_rows_8bit(4, xq, sx, r0, K, block, y, N, b);
    for (; r0 < rows; r0++) block_rows_8bit(1, xq, sx, r0, K, block, y, N, b);
}
#endif

/* y = [x, x down^T] W^T as above (down: NULL where rank is 0, float16 where `half`; kx + rank <= K); x's
   rows `stride` floats apart, y contiguous. Returns 0, or -1 where memory ran out. */
int dc_tiles_mm(const float* x, int64_t rows, int64_t kx, int64_t stride, const void* down, int half,
                int64_t rank, const uint8_t* weights, float* y, int64_t N, int64_t K, int threads) {
    const int64_t G = K / 32, blocks = N / 16;
    float* xe = aligned_alloc(32, (size_t)(rows * K * 4 + 32));
    float* sums = malloc((size_t)(rows * G * 4 + 4));
    float* sx = malloc((size_t)(rows * G * 4 + 4));
    int8_t* xq = aligned_alloc(32, (size_t)(rows * K + 32));
    int failed = xe == NULL || sums == NULL || sx == NULL || xq == NULL;
    if (!failed) {
        #pragma omp parallel num_threads(threads) reduction(| : failed)
        {
            /* Each row's own columns and its down-projection's chunks (per DOWN_ROWS rows) are tasks of one
               loop, so that a one-row step's down-projection is read by every thread; the groups are summed
               and rounded once all are written. */
            const int64_t chunks = (rank + DOWN_CHUNK - 1) / DOWN_CHUNK, blocks_of_rows = (rows + DOWN_ROWS - 1) / DOWN_ROWS;
            #pragma omp for schedule(static, 1)  /* round robin: the costly chunks spread over the threads */
            for (int64_t t = 0; t < rows + blocks_of_rows * chunks; t++) {
                if (t < rows) {
                    widen_row(x, t, kx, stride, rank, K, xe);
                    continue;
                }
                const int64_t r0 = (t - rows) / chunks * DOWN_ROWS, c = (t - rows) % chunks;
                const int n = rows - r0 < DOWN_ROWS ? (int)(rows - r0) : DOWN_ROWS;
                down_chunk(x, r0, n, kx, stride, down, half, rank, c * DOWN_CHUNK, K, xe);
            }
            #pragma omp for schedule(static)
            for (int64_t r = 0; r < rows; r++) {
                group_sums(r, K, xe, sums);
                quantize_row(xe, r, K, xq, sx);
            }
            if (rows == 1) {
                #pragma omp for schedule(static)
                for (int64_t b = 0; b < blocks; b++) block_row_nibbles(xq, sx, sums, K, weights + b * G * 320, y, b);
            } else {
                failed |= spread_blocks(xq, sx, sums, rows, weights, y, N, K);
            }
        }
    }
    free(xe);
    free(sums);
    free(sx);
    free(xq);
    return failed ? -1 : 0;
}

/* y (rows, N) float32 = x (rows, K) float32 (rows `stride` floats apart) times W (N, K)^T in the 8-bit layout
   above, the rows rounded to int8 as the 4-bit product rounds them; a row's bits do not depend on the rows
   beside it. Returns 0, or -1 where memory ran out. */
int dc_int8_mm(const float* x, int64_t rows, int64_t stride, const uint8_t* weights, float* y, int64_t N, int64_t K,
               int threads) {
    const int64_t G = K / 32, blocks = N / 16;
    float* xe = aligned_alloc(32, (size_t)(rows * K * 4 + 32));
    float* sx = malloc((size_t)(rows * G * 4 + 4));
    int8_t* xq = aligned_alloc(32, (size_t)(rows * K + 32));
    int32_t* xsum = malloc((size_t)(rows * G * 4 + 4)); /* each group's sum of its row bytes: the VNNI build's */
    const int failed = xe == NULL || sx == NULL || xq == NULL || xsum == NULL;
    if (!failed) {
        #pragma omp parallel num_threads(threads)
        {
            #pragma omp for schedule(static)
            for (int64_t r = 0; r < rows; r++) {
                widen_row(x, r, K, stride, 0, K, xe);
                quantize_row(xe, r, K, xq, sx);
#ifdef DC_VNNI512
                for (int64_t g = 0; g < G; g++) {
                    int32_t sum = 0;
                    for (int e = 0; e < 32; e++) sum += xq[r * K + 32 * g + e];
                    xsum[r * G + g] = sum;
                }
#endif
            }
            #pragma omp for schedule(static)
            for (int64_t b = 0; b < blocks; b++) rows_8bit(xq, sx, xsum, rows, K, weights + b * G * INT8_GROUP_BYTES, y, N, b);
        }
    }
    free(xe);
    free(sx);
    free(xq);
    free(xsum);
    return failed ? -1 : 0;
}
