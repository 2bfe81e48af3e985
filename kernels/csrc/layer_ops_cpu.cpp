// The decoder layer's elementwise work for x86-64 CPUs with AVX2 + FMA, float32 (vLLM's custom
// ops of the same names): reshape_and_cache, rms_norm, fused_add_rms_norm, rotary_embedding
// (rotate-half, "neox" style) and silu_and_mul.
//
// Why native code: with the attention native too, these were the engine's largest cost after
// the GEMMs. In PyTorch each is several passes over the activations, each pass a fresh
// allocation; the KV write (`index_copy_`) alone took 3% of a benchmark run. Here each is one
// pass, in place where vLLM's ops are in place.
//
// Numerics follow the PyTorch modules the HF models use, operation by operation, so greedy
// outputs stay token-identical to HF `generate()`: the rotary embedding and the residual add
// round exactly as PyTorch does (same products and sums, no fused multiply-add), so they are
// bit-identical; RMSNorm sums its squares in another order and silu uses another exp, a few
// ulps apart (tests/unit/kernels/test_cpu_layer_ops.py bounds them).
//
// Rows may be strided (views into a fused projection's output); within a row, elements are
// contiguous. Built at first use by kernels/cpu_build.py; kernels/cpu_layer_ops.py falls back to
// PyTorch where this does not compile.
#include <cmath>
#include <cstdint>
#include <cstring>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "layer_ops_cpu.cpp needs AVX2 and FMA (x86-64-v3)"
#endif
#include <immintrin.h>

#include "simd_common.h"

namespace {

// Below this many elements a call runs on one thread: waking the OpenMP team costs more than
// the pass (a decode step of a few sequences).
constexpr int64_t PARALLEL_ELEMENTS = 1 << 15;

inline int team(int64_t elements, int threads) { return elements >= PARALLEL_ELEMENTS ? threads : 1; }

inline float horizontal_sum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// out = weight * (x * 1/sqrt(mean(x^2) + eps)), rounding as PyTorch's RMSNorm does (each
// square, the scaled x, then the weight product); the sum of squares runs in four lanes of 8.
inline void rms_norm_row(const float* x, float* out, const float* weight, int cols, float eps) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int i = 0;
  for (; i + 32 <= cols; i += 32)
    for (int a = 0; a < 4; ++a) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * a);
      acc[a] = _mm256_add_ps(acc[a], _mm256_mul_ps(v, v));
    }
  for (; i + 8 <= cols; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    acc[0] = _mm256_add_ps(acc[0], _mm256_mul_ps(v, v));
  }
  float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < cols; ++i) sum += x[i] * x[i];
  const float inverse = 1.0f / std::sqrt(sum / static_cast<float>(cols) + eps);
  const __m256 r = _mm256_set1_ps(inverse);
  i = 0;
  for (; i + 8 <= cols; i += 8)
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(weight + i), _mm256_mul_ps(_mm256_loadu_ps(x + i), r)));
  for (; i < cols; ++i) out[i] = weight[i] * (x[i] * inverse);
}

// x[0, half) and x[half, 2 half) -> x*cos + rotate_half(x)*sin, products rounded before the
// sum as PyTorch's `q * cos + rotate_half(q) * sin` (rotate_half negates the second half, and
// a - b rounds as a + (-b))
inline void rotate_half_row(float* x, const float* cos, const float* sin, int head_dim) {
  const int half = head_dim / 2;
  int i = 0;
  for (; i + 8 <= half; i += 8) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + half + i);
    _mm256_storeu_ps(x + i, _mm256_sub_ps(_mm256_mul_ps(a, _mm256_loadu_ps(cos + i)),
                                          _mm256_mul_ps(b, _mm256_loadu_ps(sin + i))));
    _mm256_storeu_ps(x + half + i, _mm256_add_ps(_mm256_mul_ps(b, _mm256_loadu_ps(cos + half + i)),
                                                 _mm256_mul_ps(a, _mm256_loadu_ps(sin + half + i))));
  }
  for (; i < half; ++i) {
    const float a = x[i], b = x[half + i];
    const float a_cos = a * cos[i], b_sin = b * sin[i], b_cos = b * cos[half + i], a_sin = a * sin[half + i];
    x[i] = a_cos - b_sin;
    x[half + i] = b_cos + a_sin;
  }
}

}  // namespace

extern "C" {

// ABI version: kernels/cpu_layer_ops.py checks it, so a stale cached build is never called wrongly.
int servops_layer_ops_abi() { return 1; }

// cache row slots[t] <- key row t, value row t (row_bytes each; any dtype); a negative slot is padding
void servops_reshape_and_cache(const char* key, int64_t key_stride_bytes, const char* value,
                               int64_t value_stride_bytes, char* k_cache, char* v_cache, const int64_t* slots,
                               int rows, int64_t row_bytes, int threads) {
#pragma omp parallel for num_threads(team(rows * row_bytes / 4, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) {
    const int64_t slot = slots[t];
    if (slot < 0) continue;
    std::memcpy(k_cache + slot * row_bytes, key + t * key_stride_bytes, row_bytes);
    std::memcpy(v_cache + slot * row_bytes, value + t * value_stride_bytes, row_bytes);
  }
}

// out[t] = RMSNorm(x[t]) * weight
void servops_rms_norm_f32(const float* x, int64_t x_stride, float* out, int64_t out_stride, const float* weight,
                          int rows, int cols, float eps, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) rms_norm_row(x + t * x_stride, out + t * out_stride, weight, cols, eps);
}

// residual[t] += x[t]; x[t] = RMSNorm(residual[t]) * weight  (both in place, as vLLM's op)
void servops_fused_add_rms_norm_f32(float* x, int64_t x_stride, float* residual, int64_t residual_stride,
                                    const float* weight, int rows, int cols, float eps, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) {
    float* r = residual + t * residual_stride;
    float* h = x + t * x_stride;
    int i = 0;
    for (; i + 8 <= cols; i += 8) _mm256_storeu_ps(r + i, _mm256_add_ps(_mm256_loadu_ps(r + i), _mm256_loadu_ps(h + i)));
    for (; i < cols; ++i) r[i] += h[i];
    rms_norm_row(r, h, weight, cols, eps);
  }
}

// Rotate the first `heads` heads of every row in place (queries then keys of a fused qkv row):
// row t's head h is x[t * stride + h * head_dim, + head_dim); cos/sin rows [t * cs_stride, + head_dim)
void servops_rotary_embedding_f32(float* x, int64_t stride, int heads, int head_dim, const float* cos,
                                  const float* sin, int64_t cs_stride, int rows, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * heads * head_dim, threads)) schedule(static)
  for (int t = 0; t < rows; ++t)
    for (int h = 0; h < heads; ++h)
      rotate_half_row(x + t * stride + static_cast<int64_t>(h) * head_dim, cos + t * cs_stride, sin + t * cs_stride,
                      head_dim);
}

// out[t, i] = silu(gate_up[t, i]) * gate_up[t, cols + i], silu(x) = x / (1 + exp(-x)) as PyTorch
// computes it (rounded before the product)
void servops_silu_and_mul_f32(const float* gate_up, int64_t in_stride, float* out, int64_t out_stride, int rows,
                              int cols, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) {
    const float* gate = gate_up + t * in_stride;
    const float* up = gate + cols;
    float* o = out + t * out_stride;
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= cols; i += 8) {
      const __m256 g = _mm256_loadu_ps(gate + i);
      const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, exp_clamped(_mm256_sub_ps(zero, g))));
      _mm256_storeu_ps(o + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
    for (; i < cols; ++i) o[i] = (gate[i] / (1.0f + std::exp(-gate[i]))) * up[i];
  }
}

}  // extern "C"
