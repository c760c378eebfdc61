/* 4-bit weight products on AMX bfloat16 tiles for decoding steps (engine/loading/native_build.py builds this file on
   the machine that runs it, engine/kernels/tile_int4.py calls it).

y (rows, N) float32 = x (rows, kx) float32, followed by its products by a LoRA's down-projection (rank, kx)
where one is given, then zeros up to K, times W (N, K)^T, W in groups of 32 along K:
w = (q - 8) * scale + offset, q a 4-bit code, scale and offset bfloat16 per (output, group).

Layout (made by tile_int4.pack): for output block b (16 outputs) and group g, 256 bytes of codes, 8 chunks of
32: in chunk c, byte 2j + e holds q[16b + j][32g + 4c + e] in its low nibble and q[16b + j][32g + 4c + 2 + e]
in its high one; then 32 bfloat16 of scales: 16 scales, 16 offsets.

Each group is one tile product: the rows' 32 inputs (bfloat16) by the group's codes as bfloat16 128 + q (the
code or'ed into the mantissa of 128.0, one ternary-logic instruction per 32 weights), into a zeroed float32
tile; then y += scale * tile + (offset - 136 scale) * (the group's sum of inputs). A row's arithmetic is the
same whatever rows run beside it: an output's bits do not depend on the row count. */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) tile_config;

/* 0 once this process may use the tiles (Linux asks each process to request them). */
int dc_tiles_init(void) { return (int)syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); }

/* Which kernel this library is: 0 AMX tiles (1: int4_avx2.c). */
int dc_tiles_form(void) { return 0; }

static inline __m512 bf16_to_f32(const uint16_t* p) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

static inline void unpack_group(const uint8_t* codes, uint32_t (*tile)[16]) {
    const __m512i nibble = _mm512_set1_epi16(0x000F), magic = _mm512_set1_epi16(0x4300);
    for (int c = 0; c < 8; c++) {
        __m512i v = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i*)(codes + 32 * c)));
        /* (v & nibble) | magic */
        _mm512_store_si512((__m512i*)tile[2 * c], _mm512_ternarylogic_epi32(v, nibble, magic, 0xEA));
        _mm512_store_si512((__m512i*)tile[2 * c + 1],
                           _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 4), nibble, magic, 0xEA));
    }
}

static inline __mmask16 first(int64_t n) { return (__mmask16)(n <= 0 ? 0 : n >= 16 ? 0xFFFF : (1u << n) - 1); }

#define DOWN_CHUNK 8  /* a LoRA's down-projection outputs per task: a rank of 16 splits over two threads */

/* The sum of each group g0 <= g < g1 of 32 of row r's bfloat16 inputs. */
static void group_sums(int64_t r, int64_t g0, int64_t g1, int64_t K, const uint16_t* xb, float* sums) {
    const uint16_t* out = xb + r * K;
    for (int64_t g = g0; g < g1; g++)
        sums[r * (K / 32) + g] = _mm512_reduce_add_ps(_mm512_add_ps(bf16_to_f32(out + 32 * g), bf16_to_f32(out + 32 * g + 16)));
}

/* Row r's own input as bfloat16 (rounded to nearest even): x's kx columns, zeros from kx + rank up to K (the
   columns between are the down-projection's, `down_chunk`'s to write), and the sums of the groups up to
   `g1`, which hold none of those. */
static void widen_row(const float* x, int64_t r, int64_t kx, int64_t stride, int64_t rank, int64_t K, int64_t g1,
                      uint16_t* xb, float* sums) {
    const float* row = x + r * stride;
    uint16_t* out = xb + r * K;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        __mmask16 own = first(kx - k0), zeros = (__mmask16)~first(kx + rank - k0) & first(K - k0);
        __m256i v = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(own, row + k0));
        _mm256_mask_storeu_epi16(out + k0, own | zeros, v);
    }
    group_sums(r, 0, g1, K, xb, sums);
}

#define DOWN_ROWS 4  /* rows a task of the down-projection runs together: its values are read once for them */

static inline __m512 down_values(const void* down, int half, int64_t j, int64_t kx, int64_t k0, __mmask16 m) {
    return half ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t*)down + j * kx + k0))
                : _mm512_maskz_loadu_ps(m, (const float*)down + j * kx + k0);
}

/* Rows r0 .. r0 + n (n <= DOWN_ROWS) times rows j0 .. j0 + DOWN_CHUNK of `down` (a LoRA's down-projection, rank
   x kx, float32 or, with `half`, float16: the same values where the adapter was saved in float16, half the
   bytes), as bfloat16 input columns kx + j. Each product is one chain of float32 multiply-adds along k then
   one reduction, whatever rows and outputs run beside it (two outputs and n rows at a time: independent
   chains keep the multiply-add units busy). */
static void down_chunk(const float* x, int64_t r0, int n, int64_t kx, int64_t stride, const void* down, int half,
                       int64_t rank, int64_t j0, int64_t K, uint16_t* xb) {
    __attribute__((aligned(64))) float dots[DOWN_ROWS][16] = {{0}};
    const int64_t j1 = rank < j0 + DOWN_CHUNK ? rank : j0 + DOWN_CHUNK;
    for (int64_t j = j0; j < j1; j += 2) {
        const int pair = j + 1 < j1;
        __m512 acc[2][DOWN_ROWS];
        for (int i = 0; i < n; i++) acc[0][i] = acc[1][i] = _mm512_setzero_ps();
        for (int64_t k0 = 0; k0 < kx; k0 += 16) {
            const __mmask16 m = first(kx - k0);
            const __m512 d0 = down_values(down, half, j, kx, k0, m);
            const __m512 d1 = pair ? down_values(down, half, j + 1, kx, k0, m) : d0;
            for (int i = 0; i < n; i++) {
                const __m512 v = _mm512_maskz_loadu_ps(m, x + (r0 + i) * stride + k0);
                acc[0][i] = _mm512_fmadd_ps(v, d0, acc[0][i]);
                acc[1][i] = _mm512_fmadd_ps(v, d1, acc[1][i]);
            }
        }
        for (int i = 0; i < n; i++) {
            dots[i][j - j0] = _mm512_reduce_add_ps(acc[0][i]);
            if (pair) dots[i][j + 1 - j0] = _mm512_reduce_add_ps(acc[1][i]);
        }
    }
    for (int i = 0; i < n; i++)
        _mm256_mask_storeu_epi16(xb + (r0 + i) * K + kx + j0, first(j1 - j0),
                                 (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(dots[i])));
}

/* Up to three blocks of 16 outputs side by side, for M rows: the blocks share the rows' tile, and their
   three chains of tile products keep the matrix unit busy while the codes of the next groups are unpacked. An
   output's arithmetic is the same whichever blocks run beside it. */
static inline __attribute__((always_inline)) void blocks_rows(
    const int count, const uint16_t* xb, const float* sums, int M, int64_t K, const uint8_t* weights, float* y,
    int64_t N, int64_t b, uint32_t (*tiles)[16][16], float (*out)[16][16]) {
    const int64_t G = K / 32;
    __m512 acc[3][16];
    for (int i = 0; i < count; i++)
        for (int r = 0; r < M; r++) acc[i][r] = _mm512_setzero_ps();
    for (int64_t g = 0; g < G; g++) {
        const uint8_t* w[3];
        for (int i = 0; i < count; i++) {
            w[i] = weights + ((b + i) * G + g) * 320;
            /* four groups ahead: the memory keeps streaming while the tiles wait on the unpacked codes */
            for (int l = 0; l < 320; l += 64) _mm_prefetch((const char*)w[i] + 4 * 320 + l, _MM_HINT_T0);
            unpack_group(w[i], tiles[i]);
        }
        _tile_loadd(1, xb + 32 * g, K * 2);
        _tile_zero(0); _tile_loadd(2, tiles[0], 64); _tile_dpbf16ps(0, 1, 2);
        if (count > 1) { _tile_zero(3); _tile_loadd(5, tiles[1], 64); _tile_dpbf16ps(3, 1, 5); }
        if (count > 2) { _tile_zero(4); _tile_loadd(6, tiles[2], 64); _tile_dpbf16ps(4, 1, 6); }
        _tile_stored(0, out[0], 64);
        if (count > 1) _tile_stored(3, out[1], 64);
        if (count > 2) _tile_stored(4, out[2], 64);
        for (int i = 0; i < count; i++) {
            const uint16_t* s = (const uint16_t*)(w[i] + 256);
            __m512 scale = bf16_to_f32(s), offset = bf16_to_f32(s + 16);
            __m512 shift = _mm512_fnmadd_ps(_mm512_set1_ps(136.0f), scale, offset);
            for (int r = 0; r < M; r++) {
                acc[i][r] = _mm512_fmadd_ps(_mm512_load_ps(out[i][r]), scale, acc[i][r]);
                acc[i][r] = _mm512_fmadd_ps(_mm512_set1_ps(sums[r * G + g]), shift, acc[i][r]);
            }
        }
    }
    for (int i = 0; i < count; i++)
        for (int r = 0; r < M; r++) _mm512_storeu_ps(y + r * N + 16 * (b + i), acc[i][r]);
}

/* y = [x, x down^T] W^T as above (down: NULL where rank is 0, float16 where `half`; kx + rank <= K); x's
   rows `stride` floats apart, y contiguous. Returns 0, or -1 where memory ran out. */
int dc_tiles_mm(const float* x, int64_t rows, int64_t kx, int64_t stride, const void* down, int half,
                int64_t rank, const uint8_t* weights, float* y, int64_t N, int64_t K, int threads) {
    const int64_t G = K / 32, blocks = N / 16;
    uint16_t* xb = aligned_alloc(64, (size_t)(rows * K * 2 + 64));
    float* sums = malloc((size_t)(rows * G * 4 + 4));
    if (xb == NULL || sums == NULL) { free(xb); free(sums); return -1; }
    #pragma omp parallel num_threads(threads)
    {
        /* Each row's own columns and its down-projection's chunks (per DOWN_ROWS rows) are tasks of one
           loop, so that a one-row step's down-projection is read by every thread; the groups that hold its
           products are summed once they are all written. */
        const int64_t chunks = (rank + DOWN_CHUNK - 1) / DOWN_CHUNK, x_groups = rank ? kx / 32 : G;
        const int64_t blocks_of_rows = (rows + DOWN_ROWS - 1) / DOWN_ROWS;
        #pragma omp for schedule(static, 1)  /* round robin: the costly chunks spread over the threads */
        for (int64_t t = 0; t < rows + blocks_of_rows * chunks; t++) {
            if (t < rows) {
                widen_row(x, t, kx, stride, rank, K, x_groups, xb, sums);
                continue;
            }
            const int64_t r0 = (t - rows) / chunks * DOWN_ROWS, c = (t - rows) % chunks;
            const int n = rows - r0 < DOWN_ROWS ? (int)(rows - r0) : DOWN_ROWS;
            down_chunk(x, r0, n, kx, stride, down, half, rank, c * DOWN_CHUNK, K, xb);
        }
        if (rank) {
            #pragma omp for schedule(static)
            for (int64_t r = 0; r < rows; r++) group_sums(r, x_groups, G, K, xb, sums);
        }
        __attribute__((aligned(64))) uint32_t tiles[3][16][16];
        __attribute__((aligned(64))) float out[3][16][16];
        for (int64_t r0 = 0; r0 < rows; r0 += 16) {
            const int M = rows - r0 < 16 ? (int)(rows - r0) : 16;
            tile_config cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.palette = 1;
            for (int t = 0; t < 7; t++) { cfg.rows[t] = (uint8_t)M; cfg.colsb[t] = 64; }
            cfg.rows[2] = cfg.rows[5] = cfg.rows[6] = 16;  /* the codes' tiles: 16 pairs of columns */
            _tile_loadconfig(&cfg);
            #pragma omp for schedule(static)
            for (int64_t t = 0; t < (blocks + 2) / 3; t++) {
                const int64_t b = 3 * t;
                const uint16_t* rows_b = xb + r0 * K;
                switch (blocks - b < 3 ? (int)(blocks - b) : 3) {
                    case 3: blocks_rows(3, rows_b, sums + r0 * G, M, K, weights, y + r0 * N, N, b, tiles, out); break;
                    case 2: blocks_rows(2, rows_b, sums + r0 * G, M, K, weights, y + r0 * N, N, b, tiles, out); break;
                    default: blocks_rows(1, rows_b, sums + r0 * G, M, K, weights, y + r0 * N, N, b, tiles, out);
                }
            }
            _tile_release();
        }
    }
    free(xb);
    free(sums);
    return 0;
}
