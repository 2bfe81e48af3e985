// Paged attention for x86-64 CPUs with AVX2 + FMA: the engine's CPU decode and prefill paths.
//
// Why native code: decode attention is memory-bound, and the PyTorch twin (kernels/torch_decode.py)
// must gather every context into a dense copy before its matmuls, so it moves each key and value
// three times; this reads each sequence's K and V rows once, in place, from the paged cache.
// Prefill of short prompts is overhead-bound in PyTorch (one SDPA call per chunk, ~8 GFLOP/s at
// 144 tokens); this does every chunk of a step in one parallel call, straight from the cache.
//
// Layout (as the engine allocates it): caches [num_blocks, block_size, KVH, D], so one token's
// keys for all KV heads are KVH*D contiguous elements; block_tables [B, stride] int32;
// context_lens [B] int32 (tokens in the cache, including the ones just written). float32 or
// bfloat16 storage, float32 arithmetic. Positions past a sequence's context are never read.
//
// Built at first use by kernels/cpu_build.py with -march=native; the Python side falls back to the
// PyTorch twins when this does not compile (no AVX2/FMA, not x86, no compiler).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "paged_attention_cpu.cpp needs AVX2 and FMA (x86-64-v3)"
#endif
#include <immintrin.h>

#include "simd_common.h"

namespace {

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

// acc[0, head_dim) += sum over i < count of probs[i] * values[rows[i] + column + (0, head_dim)].
// 64 columns at a time in eight registers, so the eight FMAs of one row are independent and
// the loop runs at FMA throughput, not at the latency of one accumulator's chain.
template <typename T>
inline void accumulate_values(float* acc, const float* probs, const T* values, const int64_t* rows, int64_t column,
                              int count, int head_dim) {
  for (int d0 = 0; d0 < head_dim; d0 += 64) {
    const int chunks = std::min(64, head_dim - d0) / 8;
    if (chunks == 8) {
      __m256 a[8];
      for (int c = 0; c < 8; ++c) a[c] = _mm256_loadu_ps(acc + d0 + 8 * c);
      for (int i = 0; i < count; ++i) {
        const __m256 p = _mm256_set1_ps(probs[i]);
        const T* v = values + rows[i] + column + d0;
        for (int c = 0; c < 8; ++c) a[c] = _mm256_fmadd_ps(p, load8(v + 8 * c), a[c]);
      }
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(acc + d0 + 8 * c, a[c]);
    } else {
      for (int c = 0; c < chunks; ++c) {
        __m256 a = _mm256_loadu_ps(acc + d0 + 8 * c);
        for (int i = 0; i < count; ++i)
          a = _mm256_fmadd_ps(_mm256_set1_ps(probs[i]), load8(values + rows[i] + column + d0 + 8 * c), a);
        _mm256_storeu_ps(acc + d0 + 8 * c, a);
      }
    }
  }
}

// scores[v * stride + (0..8)] = query vector v . the 8 keys of a transposed tile kt[d * 8 + i],
// for N vectors side by side: N independent FMA chains hide the FMA latency
template <int N>
inline void score_vectors(const float* kt, const float* query, int head_dim, float* scores, int stride) {
  __m256 acc[N];
  for (int v = 0; v < N; ++v) acc[v] = _mm256_setzero_ps();
  for (int d = 0; d < head_dim; ++d) {
    const __m256 k = _mm256_loadu_ps(kt + d * 8);
    for (int v = 0; v < N; ++v) acc[v] = _mm256_fmadd_ps(_mm256_set1_ps(query[v * head_dim + d]), k, acc[v]);
  }
  for (int v = 0; v < N; ++v) _mm256_storeu_ps(scores + static_cast<size_t>(v) * stride, acc[v]);
}

// scores[0, length) -> exp(score - max), vectorised (a decode step's softmax is heads x context
// exponentials per sequence, which scalar std::exp made as costly as the dot products); the padding
// up to the next multiple of 8 becomes exactly 0. Returns the sum, the softmax's denominator.
inline float softmax_numerators(float* scores, int length) {
  const int padded = (length + 7) & ~7;
  for (int t = length; t < padded; ++t) scores[t] = -INFINITY;
  __m256 peak8 = _mm256_set1_ps(-INFINITY);
  for (int t = 0; t < padded; t += 8) peak8 = _mm256_max_ps(peak8, _mm256_loadu_ps(scores + t));
  float lanes[8];
  _mm256_storeu_ps(lanes, peak8);
  const __m256 peak = _mm256_set1_ps(*std::max_element(lanes, lanes + 8));
  __m256 sum8 = _mm256_setzero_ps();
  for (int t = 0; t < padded; t += 8) {
    const __m256 x = _mm256_loadu_ps(scores + t);
    __m256 p = exp_clamped(_mm256_sub_ps(x, peak));
    p = _mm256_and_ps(p, _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_NEQ_OQ));  // padding: exactly 0
    _mm256_storeu_ps(scores + t, p);
    sum8 = _mm256_add_ps(sum8, p);
  }
  _mm256_storeu_ps(lanes, sum8);
  float sum = 0.f;
  for (float lane : lanes) sum += lane;
  return sum;
}

struct Scratch {
  std::vector<int64_t> rows;  // element offset of each context token's row in the cache
  std::vector<float> query, scores, acc, denom, keys;
};

struct Shape {
  int heads, kv_heads, head_dim, block_size;
  float scale;
};

// Element offset of each of a sequence's first `length` cached tokens' rows, padded to a multiple
// of 8 by repeating the last row (so 8-token tiles never step past the context).
inline void token_rows(const int32_t* table, int length, int block_size, int64_t row, std::vector<int64_t>& rows) {
  const int padded = (length + 7) & ~7;
  rows.resize(padded);
  for (int start = 0, block = 0; start < length; start += block_size, ++block) {
    const int64_t base = static_cast<int64_t>(table[block]) * block_size * row;
    const int count = std::min(block_size, length - start);
    for (int i = 0; i < count; ++i) rows[start + i] = base + i * row;
  }
  for (int t = length; t < padded; ++t) rows[t] = rows[length - 1];
}

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
  token_rows(table, length, shape.block_size, row, s.rows);
  s.scores.resize(static_cast<size_t>(heads) * padded);
  s.query.resize(static_cast<size_t>(heads) * head_dim);
  s.acc.assign(static_cast<size_t>(heads) * head_dim, 0.f);
  s.denom.resize(heads);
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
  for (int h = 0; h < heads; ++h) s.denom[h] = softmax_numerators(&s.scores[static_cast<size_t>(h) * padded], length);
  for (int t = 0; t < length; t += 8) {
    const int count = std::min(8, length - t);
    for (int i = 0; i < 8 && t + 8 + i < length; ++i) prefetch_row(v_cache + s.rows[t + 8 + i], row_bytes);
    for (int h = 0; h < heads; ++h)
      accumulate_values(&s.acc[static_cast<size_t>(h) * head_dim], &s.scores[static_cast<size_t>(h) * padded + t],
                        v_cache, &s.rows[t], static_cast<int64_t>(h / group) * head_dim, count, head_dim);
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

struct PrefillTile {
  int sequence, kv_head, first_row, num_rows;  // query rows [first_row, first_row + num_rows) of the chunk
};

// One tile: up to PREFILL_ROWS query tokens of one chunk x the `group` query heads of one KV head.
// Query vector j (token j / group, head kv_head * group + j % group) at position `pos` sees cached
// keys 0..pos. Two passes over the keys it needs: scores (8 keys at a time), softmax, values.
template <typename T>
void prefill_tile(const T* q, int64_t q_token_stride, const T* k_cache, const T* v_cache, const int32_t* table,
                  int chunk_start, int chunk_len, int context, const PrefillTile& tile, T* out,
                  const Shape& shape, Scratch& s) {
  const int head_dim = shape.head_dim, group = shape.heads / shape.kv_heads;
  const int vectors = tile.num_rows * group;
  const int first_pos = context - chunk_len + tile.first_row;
  const int keys = first_pos + tile.num_rows;  // the last row's position + 1
  const int padded = (keys + 7) & ~7;
  const int64_t row = static_cast<int64_t>(shape.kv_heads) * head_dim;
  const int64_t column = static_cast<int64_t>(tile.kv_head) * head_dim;
  token_rows(table, keys, shape.block_size, row, s.rows);
  s.query.resize(static_cast<size_t>(vectors) * head_dim);
  s.scores.resize(static_cast<size_t>(vectors) * padded);
  s.acc.assign(static_cast<size_t>(vectors) * head_dim, 0.f);
  s.denom.resize(vectors);
  for (int j = 0; j < vectors; ++j) {
    const T* src = q + (chunk_start + tile.first_row + j / group) * q_token_stride +
                   (static_cast<int64_t>(tile.kv_head) * group + j % group) * head_dim;
    for (int d = 0; d < head_dim; ++d) s.query[static_cast<size_t>(j) * head_dim + d] = to_float(src[d]) * shape.scale;
  }
  s.keys.resize(static_cast<size_t>(head_dim) * 8);
  float* kt = s.keys.data();
  for (int t = 0; t < padded; t += 8) {
    // the tile's 8 keys transposed to kt[d * 8 + i], as float: each query vector then scores all
    // 8 at once with broadcast FMAs, up to eight vectors side by side (score_vectors)
    for (int i = 0; i < 8; ++i) {
      const T* k = k_cache + s.rows[t + i] + column;
      for (int d = 0; d < head_dim; ++d) kt[d * 8 + i] = to_float(k[d]);
    }
    // vectors whose position is below t see none of these keys: their scores stay unwritten
    int j = std::max(0, (t - first_pos) * group);
    for (; j + 8 <= vectors; j += 8)
      score_vectors<8>(kt, &s.query[static_cast<size_t>(j) * head_dim], head_dim, &s.scores[static_cast<size_t>(j) * padded + t], padded);
    for (; j + 4 <= vectors; j += 4)
      score_vectors<4>(kt, &s.query[static_cast<size_t>(j) * head_dim], head_dim, &s.scores[static_cast<size_t>(j) * padded + t], padded);
    for (; j < vectors; ++j)
      score_vectors<1>(kt, &s.query[static_cast<size_t>(j) * head_dim], head_dim, &s.scores[static_cast<size_t>(j) * padded + t], padded);
  }
  for (int j = 0; j < vectors; ++j) {  // softmax over keys 0..pos, exact zeros past pos
    const int visible = first_pos + j / group + 1;
    s.denom[j] = softmax_numerators(&s.scores[static_cast<size_t>(j) * padded], visible);
  }
  // values in blocks of 64 keys (16 KB at head_dim 64: they stay in L1 while every query vector
  // of the tile takes its share), not all keys per vector, which re-read them all from L2 each time
  for (int block = 0; block < keys; block += 64) {
    for (int j = std::max(0, (block - first_pos) * group); j < vectors; ++j)
      accumulate_values(&s.acc[static_cast<size_t>(j) * head_dim], &s.scores[static_cast<size_t>(j) * padded + block],
                        v_cache, &s.rows[block], column, std::min(64, first_pos + j / group + 1 - block), head_dim);
  }
  for (int j = 0; j < vectors; ++j) {
    const float inverse = 1.f / s.denom[j];
    T* dst = out + (static_cast<int64_t>(chunk_start + tile.first_row + j / group) * shape.heads +
                    static_cast<int64_t>(tile.kv_head) * group + j % group) * head_dim;
    for (int d = 0; d < head_dim; ++d) store(s.acc[static_cast<size_t>(j) * head_dim + d] * inverse, dst + d);
  }
}

constexpr int PREFILL_ROWS = 16;

template <typename T>
void paged_prefill(const T* q, int64_t q_token_stride, const T* k_cache, const T* v_cache, const int32_t* block_tables,
                   int64_t table_stride, const int32_t* cu_seqlens_q, const int32_t* context_lens, T* out,
                   int num_seqs, const Shape& shape, int threads) {
  // tiles of the longest contexts first, so the dynamic schedule ends with short ones
  std::vector<PrefillTile> tiles;
  for (int b = 0; b < num_seqs; ++b) {
    const int chunk_len = cu_seqlens_q[b + 1] - cu_seqlens_q[b];
    for (int first = 0; first < chunk_len; first += PREFILL_ROWS)
      for (int h = 0; h < shape.kv_heads; ++h)
        tiles.push_back({b, h, first, std::min(PREFILL_ROWS, chunk_len - first)});
  }
  auto end_position = [&](const PrefillTile& t) {
    const int chunk_len = cu_seqlens_q[t.sequence + 1] - cu_seqlens_q[t.sequence];
    return context_lens[t.sequence] - chunk_len + t.first_row + t.num_rows;
  };
  std::stable_sort(tiles.begin(), tiles.end(),
                   [&](const PrefillTile& a, const PrefillTile& b) { return end_position(a) > end_position(b); });
  const int count = static_cast<int>(tiles.size());
#pragma omp parallel num_threads(threads)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < count; ++i) {
      const PrefillTile& tile = tiles[i];
      const int b = tile.sequence;
      prefill_tile(q, q_token_stride, k_cache, v_cache, block_tables + b * table_stride, cu_seqlens_q[b],
                   cu_seqlens_q[b + 1] - cu_seqlens_q[b], context_lens[b], tile, out, shape, scratch);
    }
  }
}

}  // namespace

extern "C" {

// ABI version: kernels/cpu_attention.py checks it, so a stale cached build is never called wrongly.
int servops_paged_attention_abi() { return 2; }

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

// q [T, H, D] with token stride q_token_stride (head and dim contiguous); out [T, H, D] contiguous;
// cu_seqlens_q [num_seqs + 1]: sequence b's chunk is tokens cu[b]..cu[b+1] of q and out
void servops_paged_prefill_f32(const float* q, int64_t q_token_stride, const float* k_cache, const float* v_cache,
                               const int32_t* block_tables, int64_t table_stride, const int32_t* cu_seqlens_q,
                               const int32_t* context_lens, float* out, int num_seqs, int heads, int kv_heads,
                               int head_dim, int block_size, float scale, int threads) {
  paged_prefill(q, q_token_stride, k_cache, v_cache, block_tables, table_stride, cu_seqlens_q, context_lens, out,
                num_seqs, Shape{heads, kv_heads, head_dim, block_size, scale}, threads);
}

void servops_paged_prefill_bf16(const uint16_t* q, int64_t q_token_stride, const uint16_t* k_cache,
                                const uint16_t* v_cache, const int32_t* block_tables, int64_t table_stride,
                                const int32_t* cu_seqlens_q, const int32_t* context_lens, uint16_t* out, int num_seqs,
                                int heads, int kv_heads, int head_dim, int block_size, float scale, int threads) {
  paged_prefill(q, q_token_stride, k_cache, v_cache, block_tables, table_stride, cu_seqlens_q, context_lens, out,
                num_seqs, Shape{heads, kv_heads, head_dim, block_size, scale}, threads);
}

}  // extern "C"
