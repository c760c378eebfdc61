/* A call's rows as the AVX2 and VNNI builds of int4_avx2.c multiply them: each row's own columns widened,
   its products by a LoRA's down-projection appended, each group of 32 summed in float32 (the offsets'
   term) and rounded to int8 steps of its largest magnitude / 127. A row's arithmetic is the same whatever
   rows run beside it. */

#define DOWN_CHUNK 8  /* outputs of a LoRA's down-projection per task: a rank of 16 splits over two threads */

/* The sum of 8 lanes, in order. */
static inline float lanes_sum(__m256 v) {
    float lanes[8], sum = 0.0f;
    _mm256_storeu_ps(lanes, v);
    for (int l = 0; l < 8; l++) sum += lanes[l];
    return sum;
}

/* Row r's own input: x's kx columns, zeros from kx + rank up to K (the columns between are the
   down-projection's, `down_chunk`'s to write). */
static void widen_row(const float* x, int64_t r, int64_t kx, int64_t stride, int64_t rank, int64_t K, float* xe) {
    const float* row = x + r * stride;
    float* out = xe + r * K;
    const int64_t whole = kx / 8 * 8;
    for (int64_t k = 0; k < whole; k += 8) _mm256_store_ps(out + k, _mm256_loadu_ps(row + k));
    for (int64_t k = whole; k < kx; k++) out[k] = row[k];
    for (int64_t k = kx + rank; k < K; k++) out[k] = 0.0f;
}

#define DOWN_ROWS 4  /* rows a task of the down-projection runs together: its values are read once for them */

static inline __m256 down_values(const void* down, int half, int64_t j, int64_t kx, int64_t k) {
    return half ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)((const uint16_t*)down + j * kx + k)))
                : _mm256_loadu_ps((const float*)down + j * kx + k);
}

static inline float down_value(const void* down, int half, int64_t j, int64_t kx, int64_t k) {
    return half ? _cvtsh_ss(((const uint16_t*)down)[j * kx + k]) : ((const float*)down)[j * kx + k];
}

/* Rows r0 .. r0 + n (n <= DOWN_ROWS) times rows j0 .. j0 + DOWN_CHUNK of `down` (a LoRA's down-projection, rank
   x kx, float32 or, with `half`, float16: the same float32 values where the adapter was saved in float16,
   half the bytes to read), as input columns kx + j. Each product is 8 lanes of multiply-adds along k, then
   the lanes in order, then the tail, whatever rows run beside it (n rows at a time: independent chains, and
   the down-projection read once for them). */
static inline __attribute__((always_inline)) void down_rows(
    const int n, const float* x, int64_t r0, int64_t kx, int64_t stride, const void* down, int half, int64_t rank,
    int64_t j0, int64_t K, float* xe) {
    const int64_t whole = kx / 8 * 8;
    for (int64_t j = j0; j < rank && j < j0 + DOWN_CHUNK; j++) {
        __m256 acc[DOWN_ROWS];
        for (int i = 0; i < n; i++) acc[i] = _mm256_setzero_ps();
        for (int64_t k = 0; k < whole; k += 8) {
            const __m256 w = down_values(down, half, j, kx, k);
            for (int i = 0; i < n; i++) acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(x + (r0 + i) * stride + k), w, acc[i]);
        }
        for (int i = 0; i < n; i++) {
            const float* row = x + (r0 + i) * stride;
            float tail = 0.0f;
            for (int64_t k = whole; k < kx; k++) tail = fmaf(row[k], down_value(down, half, j, kx, k), tail);
            xe[(r0 + i) * K + kx + j] = lanes_sum(acc[i]) + tail;
        }
    }
}

/* `down_rows` with n a constant (its chains then stay in registers). */
static void down_chunk(const float* x, int64_t r0, int n, int64_t kx, int64_t stride, const void* down, int half,
                       int64_t rank, int64_t j0, int64_t K, float* xe) {
    switch (n) {
        case 4: down_rows(4, x, r0, kx, stride, down, half, rank, j0, K, xe); break;
        case 3: down_rows(3, x, r0, kx, stride, down, half, rank, j0, K, xe); break;
        case 2: down_rows(2, x, r0, kx, stride, down, half, rank, j0, K, xe); break;
        default: down_rows(1, x, r0, kx, stride, down, half, rank, j0, K, xe);
    }
}

/* The sum of each group of 32 of row r's inputs (in 8 lanes, then the lanes in order). */
static void group_sums(int64_t r, int64_t K, const float* xe, float* sums) {
    for (int64_t g = 0; g < K / 32; g++) {
        const float* v = xe + r * K + 32 * g;
        sums[r * (K / 32) + g] = lanes_sum(_mm256_add_ps(_mm256_add_ps(_mm256_load_ps(v), _mm256_load_ps(v + 8)),
                                                         _mm256_add_ps(_mm256_load_ps(v + 16), _mm256_load_ps(v + 24))));
    }
}

/* Row r's inputs (xe) rounded to int8 per group of 32: xq = round(x * 127 / max |x|), the group's scale
   max |x| / 127 in sx (zero for a group of zeros). */
static void quantize_row(const float* xe, int64_t r, int64_t K, int8_t* xq, float* sx) {
    const int64_t G = K / 32;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t g = 0; g < G; g++) {
        const float* v = xe + r * K + 32 * g;
        __m256 m = _mm256_andnot_ps(sign, _mm256_load_ps(v));
        for (int u = 1; u < 4; u++) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_load_ps(v + 8 * u)));
        float lanes[8], amax = 0.0f;
        _mm256_storeu_ps(lanes, m);
        for (int l = 0; l < 8; l++) amax = lanes[l] > amax ? lanes[l] : amax;
        sx[r * G + g] = amax / 127.0f;
        const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
        __m256i q[4];
        for (int u = 0; u < 4; u++) q[u] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_load_ps(v + 8 * u), inv));
        const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_store_si256((__m256i*)(xq + r * K + 32 * g), _mm256_permutevar8x32_epi32(bytes, order));
    }
}
