/* What every form of the decoding attention shares (engine/kernels/row_attention.c: AVX-512 BF16 vectors
   or AMX tiles; row_attention_avx2.c: AVX2 and FMA; engine/kernels/row_attention.py calls them).

out (B, R, H, D) float32 = softmax(scale * q k^T + mask) v for q (B, H, R, D) bfloat16, keys and values
(B, Hkv, S, D) bfloat16 (query head h reads key head h / (H / Hkv)), mask (B, H or 1, R, S) additive float32
or none. D is a multiple of 32, at most 256.

The work is split into chunks of CHUNK keys per key head (so two threads share three key heads evenly). A
form's `attend_chunk` gives every query row of the key head's group (its heads' rows, head by head) the
chunk's maximum score, sum of weights and weighted values (in the form's order of dims, `dim_at`); `merge`
joins a row's chunks in order. Every row's arithmetic is the same sequence whatever rows run beside it and
however many threads run, so a row's bits do not depend on the row count: the rule for every decoding
kernel. The forms' bits differ from each other; a machine runs one form at every row count.

The including source defines `attend_chunk`, `dim_at`, `thread_start` and `thread_end` (declared below) and
FORM (`dc_row_attention_form`). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 256 /* keys per unit of work, a multiple of 32 */

/* e^r = 1 + r + r^2 (EXP_POLY[0] r^5 + ... + EXP_POLY[5]) for |r| <= ln 2 / 2, r = x - n ln 2 with ln 2 in two
   parts (Cephes' expf); every form's softmax evaluates it so. Below EXP_LOWEST a weight is 0 (a masked key's
   too). */
static const float EXP_POLY[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f
#define EXP_LN2_LO -2.12194440e-4f
#define EXP_LOWEST -87.33654f

typedef struct {
    const uint16_t *q, *k, *v;
    const float* mask;
    float* out;
    int64_t qsb, qsh, qsr, ksb, ksh, vsb, vsh, msb, msh, msr;
    int64_t H, Hkv, R, S, D, chunks;
    float scale;
    float* parts; /* per (b, g, chunk, row): D weighted values (dims in `dim_at`'s order), max, sum */
} call;

static int attend_chunk(const call* c, int64_t b, int64_t g, int64_t chunk); /* 0, or -1: no memory */
static inline int64_t dim_at(int64_t i);                                     /* the dim of a part's value i */
static void thread_start(void);
static void thread_end(void);

/* Each thread's buffer for its chunks, grown as a call's chunks need and freed when the call ends: kept
   between calls, a thread's buffer outlived its thread (a server's request threads each get OpenMP
   workers), and a server's memory grew by hundreds of MB under the HTTP fuzzer. */
static __thread float* scratch;
static __thread size_t scratch_size;

/* This thread's buffer of at least `floats` floats, or NULL. */
static float* scratch_for(size_t floats) {
    if (floats > scratch_size) {
        free(scratch);
        scratch = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
        scratch_size = scratch ? floats : 0;
    }
    return scratch;
}

/* Query row `row` of key head g's group (its heads' rows, head by head). */
static inline int64_t row_offset(const call* c, int64_t g, int64_t row, int64_t sh, int64_t sr) {
    return (g * (c->H / c->Hkv) + row / c->R) * sh + (row % c->R) * sr;
}

static inline float* part_of(const call* c, int64_t b, int64_t g, int64_t chunk, int64_t row) {
    const int64_t rows = c->H / c->Hkv * c->R;
    return c->parts + (((b * c->Hkv + g) * c->chunks + chunk) * rows + row) * (c->D + 2);
}

/* Row `row` of key head g: its chunks merged in order, dims back in place, into out. */
static void merge(const call* c, int64_t b, int64_t g, int64_t row) {
    float most = -INFINITY, total = 0.0f;
    for (int64_t k = 0; k < c->chunks; k++) most = fmaxf(most, part_of(c, b, g, k, row)[c->D]);
    float sums[256] __attribute__((aligned(64)));
    for (int64_t d = 0; d < c->D; d++) sums[d] = 0.0f;
    for (int64_t k = 0; k < c->chunks; k++) {
        const float* part = part_of(c, b, g, k, row);
        if (part[c->D] == -INFINITY) continue;
        const float w = expf(part[c->D] - most);
        total += w * part[c->D + 1];
        for (int64_t d = 0; d < c->D; d++) sums[d] = fmaf(w, part[d], sums[d]);
    }
    const float inv = 1.0f / total;
    const int64_t h = g * (c->H / c->Hkv) + row / c->R, r = row % c->R;
    float* o = c->out + ((b * c->R + r) * c->H + h) * c->D;
    for (int64_t i = 0; i < c->D; i++) o[dim_at(i)] = sums[i] * inv;
}

/* Which form this library runs: 0 AVX-512 vectors, 1 AMX tiles, 2 AVX2. */
int dc_row_attention_form(void) { return FORM; }

/* 0, or -1 where a buffer could not be allocated. */
int dc_row_attention(const uint16_t* q, int64_t qsb, int64_t qsh, int64_t qsr, const uint16_t* k, int64_t ksb,
                     int64_t ksh, const uint16_t* v, int64_t vsb, int64_t vsh, const float* mask, int64_t msb,
                     int64_t msh, int64_t msr, float* out, int64_t B, int64_t H, int64_t Hkv, int64_t R, int64_t S,
                     int64_t D, float scale, int threads) {
    const int64_t chunks = (S + CHUNK - 1) / CHUNK, rows = H / Hkv * R;
    float* parts = malloc((size_t)(B * Hkv * chunks * rows * (D + 2)) * sizeof(float));
    if (!parts) return -1;
    const call c = {q, k, v, mask, out, qsb, qsh, qsr, ksb, ksh, vsb, vsh, msb, msh, msr, H, Hkv, R, S, D, chunks,
                    scale, parts};
    const int64_t units = B * Hkv * chunks, merges = B * Hkv * rows;
    int failed = 0;
#pragma omp parallel num_threads(threads < units ? threads : (int)units) reduction(| : failed)
    {
        thread_start();
#pragma omp for schedule(static)
        for (int64_t u = 0; u < units; u++) failed |= attend_chunk(&c, u / (Hkv * chunks), u / chunks % Hkv, u % chunks) != 0;
        thread_end();
        free(scratch);
        scratch = NULL;
        scratch_size = 0;
#pragma omp for schedule(static)
        for (int64_t u = 0; u < merges; u++) merge(&c, u / (Hkv * rows), u / rows % Hkv, u % rows);
    }
    free(parts);
    return failed ? -1 : 0;
}
