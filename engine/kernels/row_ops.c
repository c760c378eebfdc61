/* A step's small row operations for CPU forwards: RMSNorm and the rotary embedding, float32
   (engine/loading/native_build.py builds this file on the machine that runs it with -ffp-contract=off,
   engine/kernels/row_ops.py calls it).

One call costs a few microseconds where torch's kernels, between a step's other work, cost tens (their
dispatch is long, and a step's other code has pushed it out of the caches). Each row is computed alone, so
a row's bits never depend on the rows beside it. */
#include <math.h>
#include <stdint.h>

/* out[r] = x[r] * (1 / sqrt(mean(x[r]^2) + eps)) * w. The sum of squares runs in 16 lanes (element i in
   lane i % 16, in order) then over the lanes in order. */
void dc_rms_norm(const float* x, int64_t rows, int64_t dim, int64_t stride, const float* w, float eps, float* out) {
    for (int64_t r = 0; r < rows; r++) {
        const float* row = x + r * stride;
        float lanes[16] = {0};
        int64_t i = 0;
        for (; i + 16 <= dim; i += 16)
            for (int l = 0; l < 16; l++) lanes[l] += row[i + l] * row[i + l];
        for (int l = 0; i < dim; i++, l++) lanes[l] += row[i] * row[i];
        float sum = 0.0f;
        for (int l = 0; l < 16; l++) sum += lanes[l];
        const float scale = 1.0f / sqrtf(sum / (float)dim + eps);
        float* o = out + r * dim;
        for (int64_t j = 0; j < dim; j++) o[j] = row[j] * scale * w[j];
    }
}

/* Rotate-half RoPE of x (B, H, T, D; strides xb, xh, xt, dims contiguous) by tables cos, sin (B or 1, T, D;
   strides cb, ct; sin's first half negated, engine.models.layers.rotary_tables) into out (B, T, H, D)
   contiguous: out = x * cos + (x's halves swapped) * sin, two products and a sum each rounded, as torch
   computes `layers.apply_rotary`, so the bits are its. */
void dc_rotate(const float* x, int64_t B, int64_t H, int64_t T, int64_t D, int64_t xb, int64_t xh, int64_t xt,
               const float* cos, const float* sin, int64_t cb, int64_t ct, float* out) {
    const int64_t half = D / 2;
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            const float* c = cos + b * cb + t * ct;
            const float* s = sin + b * cb + t * ct;
            for (int64_t h = 0; h < H; h++) {
                const float* row = x + b * xb + h * xh + t * xt;
                float* o = out + ((b * T + t) * H + h) * D;
                for (int64_t d = 0; d < half; d++) o[d] = row[d] * c[d] + row[d + half] * s[d];
                for (int64_t d = half; d < D; d++) o[d] = row[d] * c[d] + row[d - half] * s[d];
            }
        }
}
