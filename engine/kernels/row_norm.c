/* RMSNorm of float32 rows for CPU forwards (engine/loading/native_build.py builds this file on the machine
   that runs it, engine/kernels/row_norm.py calls it).

out[r] = x[r] * (1 / sqrt(mean(x[r]^2) + eps)) * w, each row alone. The sum of squares runs in 16 lanes
(element i in lane i % 16, in order) then over the lanes in order, so a row's bits never depend on the rows
beside it. One call costs a few microseconds where torch's fused kernel, between a step's other work,
costs tens (its dispatch is long, and a step's other code has pushed it out of the caches). */
#include <math.h>
#include <stdint.h>

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
