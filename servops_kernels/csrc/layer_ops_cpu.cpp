// The decoder layer's elementwise work for x86-64 CPUs with AVX2 + FMA (16 lanes where the compiler
// targets AVX-512), float32 and bfloat16
// (vLLM's custom ops of the same names): reshape_and_cache, rms_norm, fused_add_rms_norm,
// rotary_embedding (rotate-half, "neox" style) and silu_and_mul.
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
// ulps apart (tests/unit/servops_kernels/test_cpu_layer_ops.py bounds them). In bfloat16 the math is
// float32 on widened values, rounded to bf16 at each point where PyTorch's bf16 ops produce a
// bf16 tensor, so the same holds: the residual add and the rotary embedding bit for bit, the
// norms and silu at most one bf16 rounding step apart where the float32 value lies near a
// rounding boundary.
//
// Rows may be strided (views into a fused projection's output); within a row, elements are
// contiguous. Built at first use by servops_kernels/cpu_build.py; servops_kernels/cpu_layer_ops.py falls back to
// PyTorch where this does not compile.
#include <algorithm>
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

// Element types: float32 rows compute and store in float32; bfloat16 rows (uint16_t bits)
// widen to float32, compute there, and round to bf16 wherever PyTorch materialises a bf16
// tensor: `rounded` is the identity for float32 and a round to nearest even for bf16, and
// `store8`/`store` round the final value. The float32 instantiations are the same operations
// in the same order as before the bf16 paths existed, so they stay bit-identical.
inline __m256 rounded(__m256 v, const float*) { return v; }
inline __m256 rounded(__m256 v, const uint16_t*) {  // as `store`, kept in float32 form
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i up = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  const __m256i even = _mm256_and_si256(up, _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
  const __m256i nan = _mm256_and_si256(_mm256_or_si256(bits, _mm256_set1_epi32(0x400000)),
                                       _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
  return _mm256_blendv_ps(_mm256_castsi256_ps(even), _mm256_castsi256_ps(nan), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}
inline float rounded(float v, const float*) { return v; }
inline float rounded(float v, const uint16_t*) {
  uint16_t bits;
  store(v, &bits);
  return to_float(bits);
}
inline void store8(__m256 v, float* out) { _mm256_storeu_ps(out, v); }
inline void store8(__m256 v, uint16_t* out) {
  const __m256i high = _mm256_srli_epi32(_mm256_castps_si256(rounded(v, out)), 16);  // 8 values < 2^16
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(high, high), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
}

#if defined(__AVX512F__)
inline __m512 rounded(__m512 v, const float*) { return v; }
inline __m512 rounded(__m512 v, const uint16_t*) {  // the 8-lane form's integer steps on 16 lanes
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i up = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  const __m512i even = _mm512_and_si512(up, _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
  const __m512i nan = _mm512_and_si512(_mm512_or_si512(bits, _mm512_set1_epi32(0x400000)),
                                       _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_castsi512_ps(even),
                              _mm512_castsi512_ps(nan));
}
inline void store16(__m512 v, float* out) { _mm512_storeu_ps(out, v); }
inline void store16(__m512 v, uint16_t* out) {  // the rounded value's high halves, 16 x 16 bits
  const __m512i high = _mm512_srli_epi32(_mm512_castps_si512(rounded(v, out)), 16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(high));
}
#endif

// The vector widths the element-wise loops run at. Each op's per-vector body is written once,
// generic over the width (`vector_span`); a row runs 16 lanes at a time while 16 remain (where the
// compiler targets AVX-512), then 8, then one element. Every width applies the same float32
// operations in the same order to an element, so which width computed it never changes a result.
// Why 16 lanes: the bf16 rounding and the exp are a dozen instructions per vector, and these
// passes were compute-bound on 8 lanes (SiLU-and-multiply ~1 ns per element on one thread).
struct Lanes8 {
  using F = __m256;
  template <typename T>
  static F load(const T* p) { return load8(p); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F exp(F x) { return exp_clamped(x); }
  template <typename T>
  static F round_as(F v, const T* type) { return rounded(v, type); }
  template <typename T>
  static void store(F v, T* out) { store8(v, out); }
};
#if defined(__AVX512F__)
struct Lanes16 {
  using F = __m512;
  template <typename T>
  static F load(const T* p) { return load16(p); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F exp(F x) { return exp_clamped(x); }
  template <typename T>
  static F round_as(F v, const T* type) { return rounded(v, type); }
  template <typename T>
  static void store(F v, T* out) { store16(v, out); }
};
#endif

// body(Lanes, i) for i = begin, begin + lanes, ... while a whole vector fits before `end`, widest
// lanes first; returns the first index left for the scalar tail.
template <typename Body>
inline int vector_span(int begin, int end, Body body) {
  int i = begin;
#if defined(__AVX512F__)
  for (; i + 16 <= end; i += 16) body(Lanes16{}, i);
#endif
  for (; i + 8 <= end; i += 8) body(Lanes8{}, i);
  return i;
}

// out = weight * (x * 1/sqrt(mean(x^2) + eps)), rounding as PyTorch's RMSNorm does (each
// square, the scaled x, then the weight product; in bf16 the scaled x is rounded to bf16 before
// the product, as HF's `weight * h.to(dtype)`); the sum of squares runs in four lanes of 8.
template <typename T>
inline void rms_norm_row(const T* x, T* out, const T* weight, int cols, float eps) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int i = 0;
  for (; i + 32 <= cols; i += 32)
    for (int a = 0; a < 4; ++a) {
      const __m256 v = load8(x + i + 8 * a);
      acc[a] = _mm256_add_ps(acc[a], _mm256_mul_ps(v, v));
    }
  for (; i + 8 <= cols; i += 8) {
    const __m256 v = load8(x + i);
    acc[0] = _mm256_add_ps(acc[0], _mm256_mul_ps(v, v));
  }
  float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < cols; ++i) sum += to_float(x[i]) * to_float(x[i]);
  const float inverse = 1.0f / std::sqrt(sum / static_cast<float>(cols) + eps);
  i = vector_span(0, cols, [&](auto lanes, int j) {
    using V = decltype(lanes);
    V::store(V::mul(V::load(weight + j), V::round_as(V::mul(V::load(x + j), V::set1(inverse)), x)), out + j);
  });
  for (; i < cols; ++i) store(to_float(weight[i]) * rounded(to_float(x[i]) * inverse, x), out + i);
}

// x[0, half) and x[half, 2 half) -> x*cos + rotate_half(x)*sin, products rounded before the
// sum as PyTorch's `q * cos + rotate_half(q) * sin` (rotate_half negates the second half, and
// a - b rounds as a + (-b)); in bf16 each product is a bf16 tensor there, so rounded to bf16
template <typename T>
inline void rotate_half_row(T* x, const T* cos, const T* sin, int head_dim) {
  const int half = head_dim / 2;
  int i = vector_span(0, half, [&](auto lanes, int j) {
    using V = decltype(lanes);
    const auto a = V::load(x + j), b = V::load(x + half + j);
    V::store(V::sub(V::round_as(V::mul(a, V::load(cos + j)), x), V::round_as(V::mul(b, V::load(sin + j)), x)), x + j);
    V::store(V::add(V::round_as(V::mul(b, V::load(cos + half + j)), x),
                    V::round_as(V::mul(a, V::load(sin + half + j)), x)),
             x + half + j);
  });
  for (; i < half; ++i) {
    const float a = to_float(x[i]), b = to_float(x[half + i]);
    const float a_cos = rounded(a * to_float(cos[i]), x), b_sin = rounded(b * to_float(sin[i]), x);
    const float b_cos = rounded(b * to_float(cos[half + i]), x), a_sin = rounded(a * to_float(sin[half + i]), x);
    store(a_cos - b_sin, x + i);
    store(b_cos + a_sin, x + half + i);
  }
}

template <typename T>
void rms_norm(const T* x, int64_t x_stride, T* out, int64_t out_stride, const T* weight, int rows, int cols,
              float eps, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) rms_norm_row(x + t * x_stride, out + t * out_stride, weight, cols, eps);
}

template <typename T>
void fused_add_rms_norm(T* x, int64_t x_stride, T* residual, int64_t residual_stride, const T* weight, int rows,
                        int cols, float eps, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) {
    T* r = residual + t * residual_stride;
    T* h = x + t * x_stride;
    int i = vector_span(0, cols, [&](auto lanes, int j) {
      using V = decltype(lanes);
      V::store(V::add(V::load(r + j), V::load(h + j)), r + j);
    });
    for (; i < cols; ++i) store(to_float(r[i]) + to_float(h[i]), r + i);
    rms_norm_row(r, h, weight, cols, eps);
  }
}

template <typename T>
void rotary_embedding(T* x, int64_t stride, int heads, int head_dim, const T* cos, const T* sin, int64_t cs_stride,
                      int rows, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * heads * head_dim, threads)) schedule(static)
  for (int t = 0; t < rows; ++t)
    for (int h = 0; h < heads; ++h)
      rotate_half_row(x + t * stride + static_cast<int64_t>(h) * head_dim, cos + t * cs_stride, sin + t * cs_stride,
                      head_dim);
}

// silu rounded to the element type before the product (F.silu returns a tensor of it)
template <typename T>
void silu_and_mul(const T* gate_up, int64_t in_stride, T* out, int64_t out_stride, int rows, int cols, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) {
    const T* gate = gate_up + t * in_stride;
    const T* up = gate + cols;
    T* o = out + t * out_stride;
    int i = vector_span(0, cols, [&](auto lanes, int j) {
      using V = decltype(lanes);
      const auto g = V::load(gate + j);
      const auto silu = V::round_as(V::div(g, V::add(V::set1(1.0f), V::exp(V::sub(V::set1(0.0f), g)))), o);
      V::store(V::mul(silu, V::load(up + j)), o + j);
    });
    for (; i < cols; ++i) {
      const float g = to_float(gate[i]);
      store(rounded(g / (1.0f + std::exp(-g)), o) * to_float(up[i]), o + i);
    }
  }
}

// Index of the first largest element of x[0, cols), a NaN counting as the largest (torch.argmax's
// rule). Two passes over a row that stays in L2 (a 49k vocabulary is 196 KB): the maximum, then the
// first element equal to it.
inline int64_t argmax_row(const float* x, int cols) {
  __m256 best = _mm256_set1_ps(-INFINITY), unordered = _mm256_setzero_ps();
  int c = 0;
  for (; c + 8 <= cols; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best = _mm256_max_ps(best, v);
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, best);
  float peak = -INFINITY;
  for (const float lane : lanes) peak = std::max(peak, lane);
  bool nan = _mm256_movemask_ps(unordered) != 0;
  for (int t = c; t < cols; ++t) {
    if (std::isnan(x[t])) nan = true;
    else peak = std::max(peak, x[t]);
  }
  if (nan) {
    for (int t = 0; t < cols; ++t)
      if (std::isnan(x[t])) return t;
  }
  const __m256 target = _mm256_set1_ps(peak);
  for (c = 0; c + 8 <= cols; c += 8) {
    const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + c), target, _CMP_EQ_OQ));
    if (hits) return c + __builtin_ctz(hits);
  }
  for (int t = c; t < cols; ++t)
    if (x[t] == peak) return t;
  return 0;
}

}  // namespace

extern "C" {

// ABI version: servops_kernels/cpu_layer_ops.py checks it, so a stale cached build is never called wrongly.
int servops_layer_ops_abi() { return 3; }

// out[t] = argmax of row t of x [rows, cols] (float32, row stride x_stride); cols >= 1
void servops_argmax_f32(const float* x, int64_t x_stride, int64_t* out, int rows, int cols, int threads) {
#pragma omp parallel for num_threads(team(static_cast<int64_t>(rows) * cols, threads)) schedule(static)
  for (int t = 0; t < rows; ++t) out[t] = argmax_row(x + t * x_stride, cols);
}

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
  rms_norm(x, x_stride, out, out_stride, weight, rows, cols, eps, threads);
}
void servops_rms_norm_bf16(const uint16_t* x, int64_t x_stride, uint16_t* out, int64_t out_stride,
                           const uint16_t* weight, int rows, int cols, float eps, int threads) {
  rms_norm(x, x_stride, out, out_stride, weight, rows, cols, eps, threads);
}

// residual[t] += x[t]; x[t] = RMSNorm(residual[t]) * weight  (both in place, as vLLM's op)
void servops_fused_add_rms_norm_f32(float* x, int64_t x_stride, float* residual, int64_t residual_stride,
                                    const float* weight, int rows, int cols, float eps, int threads) {
  fused_add_rms_norm(x, x_stride, residual, residual_stride, weight, rows, cols, eps, threads);
}
void servops_fused_add_rms_norm_bf16(uint16_t* x, int64_t x_stride, uint16_t* residual, int64_t residual_stride,
                                     const uint16_t* weight, int rows, int cols, float eps, int threads) {
  fused_add_rms_norm(x, x_stride, residual, residual_stride, weight, rows, cols, eps, threads);
}

// Rotate the first `heads` heads of every row in place (queries then keys of a fused qkv row):
// row t's head h is x[t * stride + h * head_dim, + head_dim); cos/sin rows [t * cs_stride, + head_dim)
void servops_rotary_embedding_f32(float* x, int64_t stride, int heads, int head_dim, const float* cos,
                                  const float* sin, int64_t cs_stride, int rows, int threads) {
  rotary_embedding(x, stride, heads, head_dim, cos, sin, cs_stride, rows, threads);
}
void servops_rotary_embedding_bf16(uint16_t* x, int64_t stride, int heads, int head_dim, const uint16_t* cos,
                                   const uint16_t* sin, int64_t cs_stride, int rows, int threads) {
  rotary_embedding(x, stride, heads, head_dim, cos, sin, cs_stride, rows, threads);
}

// out[t, i] = silu(gate_up[t, i]) * gate_up[t, cols + i], silu(x) = x / (1 + exp(-x)) as PyTorch
// computes it (rounded before the product)
void servops_silu_and_mul_f32(const float* gate_up, int64_t in_stride, float* out, int64_t out_stride, int rows,
                              int cols, int threads) {
  silu_and_mul(gate_up, in_stride, out, out_stride, rows, cols, threads);
}
void servops_silu_and_mul_bf16(const uint16_t* gate_up, int64_t in_stride, uint16_t* out, int64_t out_stride,
                               int rows, int cols, int threads) {
  silu_and_mul(gate_up, in_stride, out, out_stride, rows, cols, threads);
}

}  // extern "C"
