/* The AVX-512 VNNI build of int4_avx2.c (included there with DC_VNNI512; engine/loading/native_build.py
   builds it for CPUs with AVX-512 VNNI and no AMX tiles, as the Zen 4 EPYC). A group's chunk of four columns
   of 16 outputs is one 512-bit vector, lane o output o's columns (no lane order to undo), and each row's
   chunk one `_mm512_dpbusd_epi32`: 64 multiplies summed in 32 bits, where the AVX2 build needs two maddubs,
   two 16-bit adds and a widening for 32. The integer sums are the AVX2 build's, and so is the float32
   sequence after them: every bit of every product is the same. */

/* Group g's codes spread to 8 vectors: lane o output o's columns 4c..4c + 3 of chunk c. */
static inline void spread_group16(const uint8_t* codes, __m512i* cw) {
    const __m256i low = _mm256_set1_epi16(0x0F0F);
    for (int c = 0; c < 8; c++) {
        const __m256i v = _mm256_loadu_si256((const __m256i*)(codes + 32 * c));
        const __m256i first = _mm256_and_si256(v, low), second = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        cw[c] = _mm512_or_si512(_mm512_cvtepu16_epi32(first), _mm512_slli_epi32(_mm512_cvtepu16_epi32(second), 16));
    }
}

/* 16 bfloat16 as float32. */
static inline __m512 widen16(const uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}

/* `block_rows_int8` on the spread vectors cw (G x 8) and natural-order scales and shifts (G x 16). */
static inline __attribute__((always_inline)) void block_rows_vnni(
    const int m, const int8_t* xq, const float* sx, const float* sums, int64_t r0, int64_t K, const __m512i* cw,
    const float* scales, const float* shifts, float* y, int64_t N, int64_t b) {
    const int64_t G = K / 32;
    __m512 acc[8];
    for (int i = 0; i < m; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t g = 0; g < G; g++) {
        __m512i t[8];
        for (int i = 0; i < m; i++) t[i] = _mm512_setzero_si512();
        for (int c = 0; c < 8; c++) {
            const __m512i w = _mm512_load_si512(cw + 8 * g + c);
            for (int i = 0; i < m; i++) {
                int32_t four;
                __builtin_memcpy(&four, xq + (r0 + i) * K + 32 * g + 4 * c, 4);
                t[i] = _mm512_dpbusd_epi32(t[i], w, _mm512_set1_epi32(four));
            }
        }
        const __m512 scale = _mm512_load_ps(scales + 16 * g), shift = _mm512_load_ps(shifts + 16 * g);
        for (int i = 0; i < m; i++) {
            acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t[i]), _mm512_mul_ps(scale, _mm512_set1_ps(sx[(r0 + i) * G + g])), acc[i]);
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(sums[(r0 + i) * G + g]), shift, acc[i]);
        }
    }
    for (int i = 0; i < m; i++) _mm512_storeu_ps(y + (r0 + i) * N + 16 * b, acc[i]);
}

#define VNNI_ROWS(m) block_rows_vnni(m, xq, sx, sums, r0, K, cw, scales, shifts, y, N, b)

/* `spread_blocks` on VNNI: rows eight at a time, then the rest together. */
static int spread_blocks(const int8_t* xq, const float* sx, const float* sums, int64_t rows, const uint8_t* weights,
                         float* y, int64_t N, int64_t K) {
    const int64_t G = K / 32, blocks = N / 16;
    int failed = 0;
    __m512i* cw = aligned_alloc(64, (size_t)(G * 8 * 64 + G * 32 * 4)); /* this thread's spread groups */
    #pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        if (cw == NULL) { failed = 1; continue; }
        float* scales = (float*)(cw + G * 8);
        float* shifts = scales + G * 16;
        for (int64_t g = 0; g < G; g++) {
            const uint8_t* w = weights + (b * G + g) * 320;
            spread_group16(w, cw + g * 8);
            const __m512 scale = widen16((const uint16_t*)(w + 256));
            _mm512_store_ps(scales + 16 * g, scale);
            _mm512_store_ps(shifts + 16 * g, _mm512_fnmadd_ps(_mm512_set1_ps(8.0f), scale, widen16((const uint16_t*)(w + 256) + 16)));
        }
        int64_t r0 = 0;
        for (; rows - r0 >= 8; r0 += 8) VNNI_ROWS(8);
        switch (rows - r0) {
            case 7: VNNI_ROWS(7); break;
            case 6: VNNI_ROWS(6); break;
            case 5: VNNI_ROWS(5); break;
            case 4: VNNI_ROWS(4); break;
            case 3: VNNI_ROWS(3); break;
            case 2: VNNI_ROWS(2); break;
            case 1: VNNI_ROWS(1); break;
            default: break;
        }
    }
    free(cw);
    return failed;
}

/* `block_rows_8bit` on VNNI: a chunk of four columns of 16 outputs is one 512-bit vector, its signed codes
   made unsigned by adding 128 (`_mm512_dpbusd_epi32` multiplies unsigned by signed bytes), and 128 times the
   group's sum of the row's bytes (xsum) taken off again: the same integer sums, the same bits. */
static inline __attribute__((always_inline)) void block_rows_8bit_vnni(
    const int m, const int8_t* xq, const float* sx, const int32_t* xsum, int64_t r0, int64_t K, const uint8_t* block,
    float* y, int64_t N, int64_t b) {
    const int64_t G = K / 32;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512 acc[8];
    for (int i = 0; i < m; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t g = 0; g < G; g++) {
        const uint8_t* w = block + g * INT8_GROUP_BYTES;
        __m512i t[8];
        for (int i = 0; i < m; i++) t[i] = _mm512_setzero_si512();
        for (int c = 0; c < 8; c++) {
            const __m512i u = _mm512_xor_si512(_mm512_loadu_si512(w + 64 * c), flip);
            for (int i = 0; i < m; i++) {
                int32_t four;
                __builtin_memcpy(&four, xq + (r0 + i) * K + 32 * g + 4 * c, 4);
                t[i] = _mm512_dpbusd_epi32(t[i], u, _mm512_set1_epi32(four));
            }
        }
        const __m512 scale = _mm512_loadu_ps((const float*)(w + 512));
        for (int i = 0; i < m; i++) {
            const __m512i dot = _mm512_sub_epi32(t[i], _mm512_set1_epi32(128 * xsum[(r0 + i) * G + g]));
            acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(scale, _mm512_set1_ps(sx[(r0 + i) * G + g])), acc[i]);
        }
    }
    for (int i = 0; i < m; i++) _mm512_storeu_ps(y + (r0 + i) * N + 16 * b, acc[i]);
}

/* One block of the 8-bit product: its rows eight at a time, then the rest one by one. */
static void rows_8bit(const int8_t* xq, const float* sx, const int32_t* xsum, int64_t rows, int64_t K,
                      const uint8_t* block, float* y, int64_t N, int64_t b) {
    int64_t r0 = 0;
    for (; rows - r0 >= 8; r0 += 8) block_rows_8bit_vnni(8, xq, sx, xsum, r0, K, block, y, N, b);
    for (; r0 < rows; r0++) block_rows_8bit_vnni(1, xq, sx, xsum, r0, K, block, y, N, b);
}
