// Paged decode attention for x86-64 CPUs with AVX2 + FMA: the engine's CPU decode path.
//
// Why native code: decode attention is memory-bound, and the PyTorch twin (kernels/torch_decode.py)
// must gather every context into a dense copy before its matmuls, so it moves each key and value
// three times. This reads each sequence's K and V rows once, in place, from the paged cache.
//
// Layout (as the engine allocates it): q, out [B, H, D]; caches [num_blocks, block_size, KVH, D],
// so one token's keys for all KV heads are KVH*D contiguous elements; block_tables [B, stride]
// int32; context_lens [B] int32 (tokens in the cache, including the new one). float32 or bfloat16
// storage, float32 arithmetic. One OpenMP task per sequence: a task computes all H heads, which
// walks each cached token's whole row front to back, the order the hardware prefetcher follows.
//
// Built at first use by kernels/cpu_build.py with -march=native; the Python side falls back to the
// PyTorch twin when this does not compile (no AVX2/FMA, not x86, no compiler).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "paged_decode_cpu.cpp needs AVX2 and FMA (x86-64-v3)"
#endif
#include <immintrin.h>

namespace {

inline float to_float(float x) { return x; }
inline float to_float(uint16_t x) {
  uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline void store(float x, float* out) { *out = x; }
inline void store(float x, uint16_t* out) {  // round to nearest even, NaN stays NaN (as torch)
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    *out = static_cast<uint16_t>((bits >> 16) | 0x40);
    return;
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  *out = static_cast<uint16_t>(bits >> 16);
}
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
}
// eight vectors -> one vector holding each one's horizontal sum
inline __m256 horizontal_sums(const __m256 v[8]) {
  const __m256 s01 = _mm256_hadd_ps(v[0], v[1]), s23 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 s45 = _mm256_hadd_ps(v[4], v[5]), s67 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}
template <typename T>
inline void prefetch_row(const T* row, int bytes) {
  for (int offset = 0; offset < bytes; offset += 64) _mm_prefetch(reinterpret_cast<const char*>(row) + offset, _MM_HINT_T0);
}

struct Scratch {
  std::vector<int64_t> rows;  // element offset of each context token's row in the cache
  std::vector<float> query, scores, acc, denom;
};

struct Shape {
  int heads, kv_heads, head_dim, block_size;
  float scale;
};

// One sequence, all heads. Scores are computed 8 tokens at a time (8 dot products reduced
// together), softmax per head, then values accumulated 8 tokens at a time. Positions past the
// context are never read: the last tile repeats the last token's row and its scores are unused.
template <typename T>
void attend_sequence(const T* q, const T* k_cache, const T* v_cache, const int32_t* table, int length, T* out,
                     const Shape& shape, Scratch& s) {
  const int heads = shape.heads, head_dim = shape.head_dim, group = shape.heads / shape.kv_heads;
  const int padded = (length + 7) & ~7;
  const int64_t row = static_cast<int64_t>(shape.kv_heads) * head_dim;
  const int row_bytes = static_cast<int>(row * sizeof(T));
  s.rows.resize(padded);
  s.scores.resize(static_cast<size_t>(heads) * padded);
  s.query.resize(static_cast<size_t>(heads) * head_dim);
  s.acc.assign(static_cast<size_t>(heads) * head_dim, 0.f);
  s.denom.resize(heads);
  for (int start = 0, block = 0; start < length; start += shape.block_size, ++block) {
    const int64_t base = static_cast<int64_t>(table[block]) * shape.block_size * row;
    const int count = std::min(shape.block_size, length - start);
    for (int i = 0; i < count; ++i) s.rows[start + i] = base + i * row;
  }
  for (int t = length; t < padded; ++t) s.rows[t] = s.rows[length - 1];
  for (int i = 0; i < heads * head_dim; ++i) s.query[i] = to_float(q[i]) * shape.scale;

  for (int t = 0; t < padded; t += 8) {
    if (t + 8 < padded)
      for (int i = 0; i < 8; ++i) prefetch_row(k_cache + s.rows[t + 8 + i], row_bytes);
    for (int h = 0; h < heads; ++h) {
      const int64_t column = static_cast<int64_t>(h / group) * head_dim;
      __m256 dots[8];
      for (int i = 0; i < 8; ++i) dots[i] = _mm256_setzero_ps();
      for (int d = 0; d < head_dim; d += 8) {
        const __m256 qv = _mm256_loadu_ps(&s.query[static_cast<size_t>(h) * head_dim + d]);
        for (int i = 0; i < 8; ++i) dots[i] = _mm256_fmadd_ps(load8(k_cache + s.rows[t + i] + column + d), qv, dots[i]);
      }
      _mm256_storeu_ps(&s.scores[static_cast<size_t>(h) * padded + t], horizontal_sums(dots));
    }
  }
  for (int h = 0; h < heads; ++h) {
    float* scores = &s.scores[static_cast<size_t>(h) * padded];
    const float peak = *std::max_element(scores, scores + length);
    float sum = 0.f;
    for (int t = 0; t < length; ++t) {
      scores[t] = std::exp(scores[t] - peak);
      sum += scores[t];
    }
    s.denom[h] = sum;
  }
  for (int t = 0; t < length; t += 8) {
    const int count = std::min(8, length - t);
    for (int i = 0; i < 8 && t + 8 + i < length; ++i) prefetch_row(v_cache + s.rows[t + 8 + i], row_bytes);
    for (int h = 0; h < heads; ++h) {
      const int64_t column = static_cast<int64_t>(h / group) * head_dim;
      const float* probs = &s.scores[static_cast<size_t>(h) * padded + t];
      float* acc = &s.acc[static_cast<size_t>(h) * head_dim];
      for (int d = 0; d < head_dim; d += 8) {
        __m256 a = _mm256_loadu_ps(acc + d);
        for (int i = 0; i < count; ++i)
          a = _mm256_fmadd_ps(_mm256_set1_ps(probs[i]), load8(v_cache + s.rows[t + i] + column + d), a);
        _mm256_storeu_ps(acc + d, a);
      }
    }
  }
  for (int h = 0; h < heads; ++h) {
    const float inverse = 1.f / s.denom[h];
    for (int d = 0; d < head_dim; ++d)
      store(s.acc[static_cast<size_t>(h) * head_dim + d] * inverse, &out[static_cast<size_t>(h) * head_dim + d]);
  }
}

template <typename T>
void paged_decode(const T* q, const T* k_cache, const T* v_cache, const int32_t* block_tables, int64_t table_stride,
                  const int32_t* context_lens, T* out, int batch, const Shape& shape, int threads) {
  const int64_t token = static_cast<int64_t>(shape.heads) * shape.head_dim;
#pragma omp parallel num_threads(threads)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < batch; ++b) {
      if (context_lens[b] <= 0) {
        for (int64_t i = 0; i < token; ++i) store(0.f, out + b * token + i);
        continue;
      }
      attend_sequence(q + b * token, k_cache, v_cache, block_tables + b * table_stride, context_lens[b],
                      out + b * token, shape, scratch);
    }
  }
}

}  // namespace

extern "C" {

// ABI version: kernels/cpu_decode.py checks it, so a stale cached build is never called wrongly.
int servops_paged_decode_abi() { return 1; }

void servops_paged_decode_f32(const float* q, const float* k_cache, const float* v_cache, const int32_t* block_tables,
                              int64_t table_stride, const int32_t* context_lens, float* out, int batch, int heads,
                              int kv_heads, int head_dim, int block_size, float scale, int threads) {
  paged_decode(q, k_cache, v_cache, block_tables, table_stride, context_lens, out, batch,
               Shape{heads, kv_heads, head_dim, block_size, scale}, threads);
}

void servops_paged_decode_bf16(const uint16_t* q, const uint16_t* k_cache, const uint16_t* v_cache,
                               const int32_t* block_tables, int64_t table_stride, const int32_t* context_lens,
                               uint16_t* out, int batch, int heads, int kv_heads, int head_dim, int block_size,
                               float scale, int threads) {
  paged_decode(q, k_cache, v_cache, block_tables, table_stride, context_lens, out, batch,
               Shape{heads, kv_heads, head_dim, block_size, scale}, threads);
}

}  // extern "C"
