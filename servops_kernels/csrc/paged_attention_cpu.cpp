// Paged attention for x86-64 CPUs with AVX2 + FMA: the engine's CPU decode and prefill paths, a
// 16-lane decode with the GQA heads of a KV head together where the CPU has AVX-512
// (attend_sequence_grouped), and a bf16 prefill on the bf16 units where it has AVX512-BF16
// (paged_prefill_bf16).
//
// Why native code: decode attention is memory-bound, and the PyTorch twin (servops_kernels/torch_decode.py)
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
// Built at first use by servops_kernels/cpu_build.py with -march=native; the Python side falls back to the
// PyTorch twins when this does not compile (no AVX2/FMA, not x86, no compiler).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

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

// One sequence, all heads. Scores are computed 8 tokens at a time (score_tile(t, padded) fills
// s.scores[h * padded + t, + 8) for every head h), softmax per head, then values accumulated 8 tokens
// at a time (value_tile(t, count, padded) adds them into s.acc). Positions past the context are never
// read: the last tile repeats the last token's row and its scores are unused. Both decode paths
// (8 lanes per head, 16 lanes per GQA group) are this skeleton with their own tiles.
template <typename T, typename ScoreTile, typename ValueTile>
void attend_sequence_tiles(const T* q, const T* k_cache, const T* v_cache, const int32_t* table, int length, T* out,
                           const Shape& shape, Scratch& s, ScoreTile score_tile, ValueTile value_tile) {
  const int heads = shape.heads, head_dim = shape.head_dim;
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
    score_tile(t, padded);
  }
  for (int h = 0; h < heads; ++h) s.denom[h] = softmax_numerators(&s.scores[static_cast<size_t>(h) * padded], length);
  for (int t = 0; t < length; t += 8) {
    for (int i = 0; i < 8 && t + 8 + i < length; ++i) prefetch_row(v_cache + s.rows[t + 8 + i], row_bytes);
    value_tile(t, std::min(8, length - t), padded);
  }
  for (int h = 0; h < heads; ++h) {
    const float inverse = 1.f / s.denom[h];
    for (int d = 0; d < head_dim; ++d)
      store(s.acc[static_cast<size_t>(h) * head_dim + d] * inverse, &out[static_cast<size_t>(h) * head_dim + d]);
  }
}

// The 8-lane path: each query head scores 8 keys at once (8 dot products reduced together), then
// takes its share of the values.
template <typename T>
void attend_sequence(const T* q, const T* k_cache, const T* v_cache, const int32_t* table, int length, T* out,
                     const Shape& shape, Scratch& s) {
  const int heads = shape.heads, head_dim = shape.head_dim, group = shape.heads / shape.kv_heads;
  auto score_tile = [&](int t, int padded) {
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
  };
  auto value_tile = [&](int t, int count, int padded) {
    for (int h = 0; h < heads; ++h)
      accumulate_values(&s.acc[static_cast<size_t>(h) * head_dim], &s.scores[static_cast<size_t>(h) * padded + t],
                        v_cache, &s.rows[t], static_cast<int64_t>(h / group) * head_dim, count, head_dim);
  };
  attend_sequence_tiles(q, k_cache, v_cache, table, length, out, shape, s, score_tile, value_tile);
}

#if defined(__AVX512F__)
// The decode path on 16 lanes, for head_dim a multiple of 64 (every Llama-family model's), with the
// query heads that share a KV head (GQA) taken together, up to GROUP_TILE at a time: each key and
// value row is loaded and widened from bf16 once for all of them, where attend_sequence loads it
// once per query head. Measured the largest single cost of a 64-sequence decode step on SmolLM2
// (9 query heads over 3 KV heads): ~0.7 ms a layer, a third of the step, compute-bound on the
// widening loads and 8-lane FMAs. Same algorithm and float32 arithmetic; the dot products sum
// their 16-lane partials in another order (within the twin's tolerance, as any order is).
constexpr int GROUP_TILE = 3;  // 8 keys x 3 heads of 16-lane accumulators: 24 of the 32 registers

inline __m256 fold(__m512 v) {  // 16 lanes -> 8: low half + high half
  return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

// scores[j * stride + (0..8)] = query head j . the 8 keys at rows[0..8], for the G heads at query
template <int G, typename T>
inline void score_keys16(const float* query, const T* k_cache, const int64_t* rows, int64_t column, int head_dim,
                         float* scores, int stride) {
  __m512 acc[G][8];
  for (int j = 0; j < G; ++j)
    for (int i = 0; i < 8; ++i) acc[j][i] = _mm512_setzero_ps();
  for (int d = 0; d < head_dim; d += 16) {
    __m512 q[G];
    for (int j = 0; j < G; ++j) q[j] = _mm512_loadu_ps(query + j * head_dim + d);
    for (int i = 0; i < 8; ++i) {
      const __m512 k = load16(k_cache + rows[i] + column + d);
      for (int j = 0; j < G; ++j) acc[j][i] = _mm512_fmadd_ps(k, q[j], acc[j][i]);
    }
  }
  for (int j = 0; j < G; ++j) {
    __m256 folded[8];
    for (int i = 0; i < 8; ++i) folded[i] = fold(acc[j][i]);
    _mm256_storeu_ps(scores + static_cast<size_t>(j) * stride, horizontal_sums(folded));
  }
}

// acc[j * head_dim + (0, head_dim)] += sum over i < count of probs[j * stride + i] * value row i, for G heads
template <int G, typename T>
inline void accumulate_values16(float* acc, const float* probs, int stride, const T* values, const int64_t* rows,
                                int64_t column, int count, int head_dim) {
  for (int d0 = 0; d0 < head_dim; d0 += 64) {
    __m512 a[G][4];
    for (int j = 0; j < G; ++j)
      for (int c = 0; c < 4; ++c) a[j][c] = _mm512_loadu_ps(acc + j * head_dim + d0 + 16 * c);
    for (int i = 0; i < count; ++i) {
      __m512 p[G];
      for (int j = 0; j < G; ++j) p[j] = _mm512_set1_ps(probs[static_cast<size_t>(j) * stride + i]);
      const T* v = values + rows[i] + column + d0;
      for (int c = 0; c < 4; ++c) {
        const __m512 x = load16(v + 16 * c);
        for (int j = 0; j < G; ++j) a[j][c] = _mm512_fmadd_ps(p[j], x, a[j][c]);
      }
    }
    for (int j = 0; j < G; ++j)
      for (int c = 0; c < 4; ++c) _mm512_storeu_ps(acc + j * head_dim + d0 + 16 * c, a[j][c]);
  }
}

// f(std::integral_constant<int, G>, first head) for the heads sharing KV head kv, G = up to GROUP_TILE at a time
template <typename F>
inline void for_head_tiles(int kv, int group, F&& f) {
  for (int h = kv * group; h < (kv + 1) * group; h += GROUP_TILE) {
    const int n = std::min(GROUP_TILE, (kv + 1) * group - h);
    if (n == 3) f(std::integral_constant<int, 3>{}, h);
    else if (n == 2) f(std::integral_constant<int, 2>{}, h);
    else f(std::integral_constant<int, 1>{}, h);
  }
}

// attend_sequence's skeleton on 16 lanes, the query heads of each KV head in tiles of GROUP_TILE
template <typename T>
void attend_sequence_grouped(const T* q, const T* k_cache, const T* v_cache, const int32_t* table, int length, T* out,
                             const Shape& shape, Scratch& s) {
  const int head_dim = shape.head_dim, group = shape.heads / shape.kv_heads;
  auto score_tile = [&](int t, int padded) {
    for (int kv = 0; kv < shape.kv_heads; ++kv)
      for_head_tiles(kv, group, [&](auto tile, int h) {
        score_keys16<decltype(tile)::value>(&s.query[static_cast<size_t>(h) * head_dim], k_cache, &s.rows[t],
                                            static_cast<int64_t>(kv) * head_dim, head_dim,
                                            &s.scores[static_cast<size_t>(h) * padded + t], padded);
      });
  };
  auto value_tile = [&](int t, int count, int padded) {
    for (int kv = 0; kv < shape.kv_heads; ++kv)
      for_head_tiles(kv, group, [&](auto tile, int h) {
        accumulate_values16<decltype(tile)::value>(&s.acc[static_cast<size_t>(h) * head_dim],
                                                   &s.scores[static_cast<size_t>(h) * padded + t], padded, v_cache,
                                                   &s.rows[t], static_cast<int64_t>(kv) * head_dim, count, head_dim);
      });
  };
  attend_sequence_tiles(q, k_cache, v_cache, table, length, out, shape, s, score_tile, value_tile);
}
#endif

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
#if defined(__AVX512F__)
      if (shape.head_dim % 64 == 0) {
        attend_sequence_grouped(q + b * token, k_cache, v_cache, block_tables + b * table_stride, context_lens[b],
                                out + b * token, shape, scratch);
        continue;
      }
#endif
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

// Every chunk's query tiles of `rows` tokens x KV heads, the longest contexts first, so the dynamic
// schedule ends with short ones (both prefill paths).
std::vector<PrefillTile> longest_first_tiles(const int32_t* cu_seqlens_q, const int32_t* context_lens, int num_seqs,
                                             int kv_heads, int rows) {
  std::vector<PrefillTile> tiles;
  for (int b = 0; b < num_seqs; ++b) {
    const int chunk_len = cu_seqlens_q[b + 1] - cu_seqlens_q[b];
    for (int first = 0; first < chunk_len; first += rows)
      for (int h = 0; h < kv_heads; ++h) tiles.push_back({b, h, first, std::min(rows, chunk_len - first)});
  }
  auto end_position = [&](const PrefillTile& t) {
    const int chunk_len = cu_seqlens_q[t.sequence + 1] - cu_seqlens_q[t.sequence];
    return context_lens[t.sequence] - chunk_len + t.first_row + t.num_rows;
  };
  std::stable_sort(tiles.begin(), tiles.end(),
                   [&](const PrefillTile& a, const PrefillTile& b) { return end_position(a) > end_position(b); });
  return tiles;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512BF16__)
// bfloat16 prefill on the bf16 units (vdpbf16ps: 32 bf16 pairs multiplied and summed into 16 float
// lanes per instruction), for CPUs with AVX512-BF16 and head_dim a multiple of 32. Why: the AVX2 path
// above widens every key to float and runs 8-lane FMAs, about 55 GFLOP/s on two cores, which made
// attention half of a 700-token bf16 prefill.
//
// Each (sequence, KV head)'s keys and values are first packed once, in parallel, into the pair
// layouts the instruction reads, shared by every query tile of that sequence:
//   keys:   per tile of 16 keys, [head_dim / 2 pairs][16 keys] of (K[j][2p], K[j][2p+1]);
//   values: per pair of keys, [head_dim] of (V[2q][d], V[2q+1][d]).
// A query pair (Q[2p], Q[2p+1]) is two adjacent bf16 already, so queries are read in place.
// Scores are float32 (the products of two bf16 are exact in float32); the softmax weights are
// rounded to bf16 for the value products, as flash-attention kernels do: the output stays within
// the bf16 tolerance of the float32 reference (tests/unit/servops_kernels/test_cpu_attention.py).
constexpr int BF16_PREFILL_ROWS = 32;  // query rows per tile: K/V are packed once per sequence, so a
                                       // tile only needs enough rows to keep both cores' work even

// head_dim a multiple of 32 (whole bf16 pairs per 16 lanes), at most 128 (value accumulators in registers)
constexpr int BF16_PREFILL_HEAD_DIM_MAX = 128;
bool bf16_prefill_applies(int head_dim) { return head_dim % 32 == 0 && head_dim <= BF16_PREFILL_HEAD_DIM_MAX; }

struct PackedKV {
  std::vector<uint32_t> keys, values;
  int length = 0;  // keys packed, a multiple of 32 (the last key repeated past the context)
};

inline uint32_t pair(uint16_t low, uint16_t high) { return static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16); }

void pack_kv(const uint16_t* k_cache, const uint16_t* v_cache, const int32_t* table, int context, int kv_head,
             const Shape& shape, std::vector<int64_t>& rows, PackedKV& packed) {
  const int head_dim = shape.head_dim, half = head_dim / 2;
  const int64_t row = static_cast<int64_t>(shape.kv_heads) * head_dim, column = static_cast<int64_t>(kv_head) * head_dim;
  token_rows(table, context, shape.block_size, row, rows);  // padded to 8
  const int length = (context + 31) & ~31;  // whole 32-key steps for the tile path's value products
  while (static_cast<int>(rows.size()) < length) rows.push_back(rows.back());
  packed.length = length;
  packed.keys.resize(static_cast<size_t>(length) * half);
  packed.values.resize(static_cast<size_t>(length) * half);
  for (int t = 0; t < length; t += 16) {
    uint32_t* tile = &packed.keys[static_cast<size_t>(t) * half];
    for (int j = 0; j < 16; ++j) {
      const uint32_t* k = reinterpret_cast<const uint32_t*>(k_cache + rows[t + j] + column);
      for (int p = 0; p < half; ++p) tile[p * 16 + j] = k[p];
    }
  }
  for (int q = 0; q < length / 2; ++q) {
    const uint16_t* a = v_cache + rows[2 * q] + column;
    const uint16_t* b = v_cache + rows[2 * q + 1] + column;
    uint32_t* dst = &packed.values[static_cast<size_t>(q) * head_dim];
    for (int d = 0; d < head_dim; ++d) dst[d] = pair(a[d], b[d]);
  }
}

inline __m512bh as_bh(__m512i v) { return (__m512bh)v; }

// scores[v][t .. t+16) for N query vectors against one packed tile of 16 keys
template <int N>
inline void score_tile(const uint32_t* tile, const uint32_t* const* query, int half, float scale, float* const* out) {
  __m512 acc[N];
  for (int i = 0; i < N; ++i) acc[i] = _mm512_setzero_ps();
  for (int p = 0; p < half; ++p) {
    const __m512bh k = as_bh(_mm512_loadu_si512(tile + p * 16));
    for (int i = 0; i < N; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], k, as_bh(_mm512_set1_epi32(static_cast<int>(query[i][p]))));
  }
  const __m512 s = _mm512_set1_ps(scale);
  for (int i = 0; i < N; ++i) _mm512_storeu_ps(out[i], _mm512_mul_ps(acc[i], s));
}

// acc[i][0, head_dim) = sum over key pairs q < pairs of (P[i][2q], P[i][2q+1]) . values pair q, for
// N vectors (head_dim / 16 accumulators each), written to out rows divided by their denominators
// (C = head_dim / 16 accumulators per vector, in registers)
template <int N, int C>
inline void value_rows(const PackedKV& kv, const uint32_t* const* probs, int pairs, const float* denom,
                       uint16_t* const* out) {
  __m512 acc[N][C];
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) acc[i][c] = _mm512_setzero_ps();
  for (int q = 0; q < pairs; ++q) {
    const uint32_t* v = &kv.values[static_cast<size_t>(q) * C * 16];
    __m512bh values[C];
    for (int c = 0; c < C; ++c) values[c] = as_bh(_mm512_loadu_si512(v + 16 * c));
    for (int i = 0; i < N; ++i) {
      const __m512bh p = as_bh(_mm512_set1_epi32(static_cast<int>(probs[i][q])));
      for (int c = 0; c < C; ++c) acc[i][c] = _mm512_dpbf16_ps(acc[i][c], p, values[c]);
    }
  }
  for (int i = 0; i < N; ++i) {
    const __m512 inverse = _mm512_set1_ps(1.f / denom[i]);
    for (int c = 0; c < C; ++c)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i] + 16 * c),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(acc[i][c], inverse)));
  }
}

// value_rows for n <= 4 vectors (4 x C accumulators; at head_dim 128 two at a time, so they fit the 32 registers)
template <int C>
void value_group(const PackedKV& kv, const uint32_t* const* probs, int n, int pairs, const float* denom,
                 uint16_t* const* out) {
  if constexpr (C > 4) {
    for (int i = 0; i < n; i += 2) {
      if (n - i >= 2) value_rows<2, C>(kv, probs + i, pairs, denom + i, out + i);
      else value_rows<1, C>(kv, probs + i, pairs, denom + i, out + i);
    }
  } else {
    switch (n) {
      case 4: value_rows<4, C>(kv, probs, pairs, denom, out); break;
      case 3: value_rows<3, C>(kv, probs, pairs, denom, out); break;
      case 2: value_rows<2, C>(kv, probs, pairs, denom, out); break;
      default: value_rows<1, C>(kv, probs, pairs, denom, out); break;
    }
  }
}

struct Bf16Scratch {
  std::vector<float> scores, denom;
  std::vector<uint16_t> probs;  // bf16 softmax weights, exact zeros past each vector's keys
};

// A tile's query vectors, shared by both bf16 tile paths: vector j is query head
// kv_head * group + j % group of the tile's (j / group)-th token, at cache position first_pos + j / group.
struct TileVectors {
  const uint16_t* q;
  int64_t q_token_stride;
  uint16_t* out;
  int64_t first_token;  // the tile's first query row in q and out
  int first_pos, group, first_head, heads, head_dim;

  TileVectors(const uint16_t* q, int64_t q_token_stride, uint16_t* out, int chunk_start, int chunk_len, int context,
              const PrefillTile& tile, const Shape& shape)
      : q(q),
        q_token_stride(q_token_stride),
        out(out),
        first_token(chunk_start + tile.first_row),
        first_pos(context - chunk_len + tile.first_row),
        group(shape.heads / shape.kv_heads),
        first_head(tile.kv_head * group),
        heads(shape.heads),
        head_dim(shape.head_dim) {}
  int position(int j) const { return first_pos + j / group; }
  const uint16_t* query(int j) const {
    return q + (first_token + j / group) * q_token_stride + static_cast<int64_t>(first_head + j % group) * head_dim;
  }
  uint16_t* output(int j) const { return out + ((first_token + j / group) * heads + first_head + j % group) * head_dim; }
};

// lanes t .. t + 16 that lie before `visible`
inline __mmask16 live_lanes(int t, int visible) {
  return t >= visible ? 0 : (visible - t >= 16 ? 0xffff : static_cast<__mmask16>((1u << (visible - t)) - 1));
}

void prefill_tile_bf16(const uint16_t* q, int64_t q_token_stride, const PackedKV& kv, int chunk_start, int chunk_len,
                       int context, const PrefillTile& tile, uint16_t* out, const Shape& shape, Bf16Scratch& s) {
  const TileVectors rows(q, q_token_stride, out, chunk_start, chunk_len, context, tile, shape);
  const int head_dim = shape.head_dim, half = head_dim / 2;
  const int vectors = tile.num_rows * rows.group;
  const int keys = rows.first_pos + tile.num_rows;
  const int padded = (keys + 15) & ~15;
  s.scores.resize(static_cast<size_t>(vectors) * padded);
  s.probs.resize(static_cast<size_t>(vectors) * padded);
  s.denom.resize(vectors);
  // scores: 8 vectors at a time over the key tiles the last of them sees (the others' extra scores
  // lie past their keys, where the softmax below masks them)
  for (int j = 0; j < vectors; j += 8) {
    const int n = std::min(8, vectors - j);
    const uint32_t* rows_q[8];
    float* rows_s[8];
    for (int i = 0; i < n; ++i) rows_q[i] = reinterpret_cast<const uint32_t*>(rows.query(j + i));
    const int seen = rows.position(j + n - 1) + 1;
    for (int t = 0; t < seen; t += 16) {
      const uint32_t* packed = &kv.keys[static_cast<size_t>(t) * half];
      for (int i = 0; i < n; ++i) rows_s[i] = &s.scores[static_cast<size_t>(j + i) * padded + t];
      switch (n) {
        case 8: score_tile<8>(packed, rows_q, half, shape.scale, rows_s); break;
        case 7: score_tile<7>(packed, rows_q, half, shape.scale, rows_s); break;
        case 6: score_tile<6>(packed, rows_q, half, shape.scale, rows_s); break;
        case 5: score_tile<5>(packed, rows_q, half, shape.scale, rows_s); break;
        case 4: score_tile<4>(packed, rows_q, half, shape.scale, rows_s); break;
        case 3: score_tile<3>(packed, rows_q, half, shape.scale, rows_s); break;
        case 2: score_tile<2>(packed, rows_q, half, shape.scale, rows_s); break;
        default: score_tile<1>(packed, rows_q, half, shape.scale, rows_s); break;
      }
    }
  }
  // softmax over keys 0..pos, then the weights as bf16 with exact zeros past pos up to the padding
  for (int j = 0; j < vectors; ++j) {
    const int visible = rows.position(j) + 1;
    float* scores = &s.scores[static_cast<size_t>(j) * padded];
    s.denom[j] = softmax_numerators(scores, visible);
    uint16_t* probs = &s.probs[static_cast<size_t>(j) * padded];
    for (int t = 0; t < padded; t += 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + t),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(live_lanes(t, visible), scores + t)));
    }
  }
  // values: 4 vectors at a time (4 x head_dim / 16 accumulators) over the key pairs the last one sees
  for (int j = 0; j < vectors; j += 4) {
    const int n = std::min(4, vectors - j);
    const uint32_t* rows_p[4];
    uint16_t* rows_o[4];
    for (int i = 0; i < n; ++i) {
      rows_p[i] = reinterpret_cast<const uint32_t*>(&s.probs[static_cast<size_t>(j + i) * padded]);
      rows_o[i] = rows.output(j + i);
    }
    const int pairs = (rows.position(j + n - 1) + 2) / 2;
    switch (head_dim / 16) {
      case 2: value_group<2>(kv, rows_p, n, pairs, &s.denom[j], rows_o); break;
      case 4: value_group<4>(kv, rows_p, n, pairs, &s.denom[j], rows_o); break;
      case 6: value_group<6>(kv, rows_p, n, pairs, &s.denom[j], rows_o); break;
      default: value_group<8>(kv, rows_p, n, pairs, &s.denom[j], rows_o); break;
    }
  }
}

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// The same tile on AMX, where the CPU has it (Sapphire Rapids and later): the tile unit multiplies a
// 16 x 32 bf16 tile by a 32 x 16 one into 16 x 16 float32 in one instruction, 16x the products of one
// vdpbf16ps, so the score and value products stop being the cost and the softmax's exponentials are.
// Why: on SmolLM2's 530-token prompts the vdpbf16ps tile above ran 2.6x slower than PyTorch's flash
// SDPA, so long prompts went to SDPA; vLLM's CPU backend has AMX attention kernels of its own.
// The packed layouts above are already the tile unit's "VNNI" operand layout (pairs along the
// reduced dimension), so the keys and values are read as packed; only the 16 query vectors of a
// block are copied together, since their rows are not evenly strided (GQA heads within a token).
// Same arithmetic as the vdpbf16ps tile (float32 scores, softmax weights rounded to bf16, float32
// value sums); only the summation order differs.
static_assert(BF16_PREFILL_HEAD_DIM_MAX <= 4 * 32, "query tiles 1-4 hold head_dim / 32 steps of 32");

struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Linux hands out the tile registers' state only on request, once per process (else the first tile
// instruction faults). Asked once; false where the kernel refuses, and then the vdpbf16ps tile runs.
bool amx_permitted() {
  static const bool permitted = [] {
    constexpr long ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
  }();
  return permitted;
}

// Every tile 16 rows of 64 bytes: scores and outputs in float32 (16 columns), queries, keys,
// weights and values as bf16 pairs (32 columns).
void configure_tiles() {
  TileConfig config;
  for (int i = 0; i < 8; ++i) {
    config.colsb[i] = 64;
    config.rows[i] = 16;
  }
  _tile_loadconfig(&config);
}

// scores[16 vectors][t, t + 16) for every key tile t < seen: tile 0 accumulates, tiles 1..KT hold the
// block's queries (KT = head_dim / 32), tiles 5 and 6 take turns holding the key operand.
template <int KT>
void score_block_amx(const uint16_t* queries, int head_dim, const PackedKV& kv, int seen, float* scores,
                     int padded) {
  const int half = head_dim / 2, stride = head_dim * 2;
  _tile_loadd(1, queries, stride);
  if constexpr (KT > 1) _tile_loadd(2, queries + 32, stride);
  if constexpr (KT > 2) _tile_loadd(3, queries + 64, stride);
  if constexpr (KT > 3) _tile_loadd(4, queries + 96, stride);
  for (int t = 0; t < seen; t += 16) {
    const uint32_t* keys = &kv.keys[static_cast<size_t>(t) * half];  // [half pairs][16 keys]
    _tile_zero(0);
    _tile_loadd(5, keys, 64);
    _tile_dpbf16ps(0, 1, 5);
    if constexpr (KT > 1) {
      _tile_loadd(6, keys + 256, 64);
      _tile_dpbf16ps(0, 2, 6);
    }
    if constexpr (KT > 2) {
      _tile_loadd(5, keys + 512, 64);
      _tile_dpbf16ps(0, 3, 5);
    }
    if constexpr (KT > 3) {
      _tile_loadd(6, keys + 768, 64);
      _tile_dpbf16ps(0, 4, 6);
    }
    _tile_stored(0, scores + t, padded * 4);
  }
}

// out[16 vectors][d0, d0 + 16 C) = weights . values over the first `keys` keys (a multiple of 32):
// tiles 0..C-1 accumulate, tile 4 holds 32 keys' weights, tiles 5 and 6 take turns with the values.
template <int C>
void value_block_amx(const uint16_t* probs, int padded, const PackedKV& kv, int head_dim, int d0, int keys,
                     float* out) {
  _tile_zero(0);
  if constexpr (C > 1) _tile_zero(1);
  if constexpr (C > 2) _tile_zero(2);
  if constexpr (C > 3) _tile_zero(3);
  const int stride = head_dim * 4;
  for (int k = 0; k < keys; k += 32) {
    const uint32_t* values = &kv.values[static_cast<size_t>(k / 2) * head_dim + d0];  // [pairs][head_dim]
    _tile_loadd(4, probs + k, padded * 2);
    _tile_loadd(5, values, stride);
    _tile_dpbf16ps(0, 4, 5);
    if constexpr (C > 1) {
      _tile_loadd(6, values + 16, stride);
      _tile_dpbf16ps(1, 4, 6);
    }
    if constexpr (C > 2) {
      _tile_loadd(5, values + 32, stride);
      _tile_dpbf16ps(2, 4, 5);
    }
    if constexpr (C > 3) {
      _tile_loadd(6, values + 48, stride);
      _tile_dpbf16ps(3, 4, 6);
    }
  }
  _tile_stored(0, out + d0, stride);
  if constexpr (C > 1) _tile_stored(1, out + d0 + 16, stride);
  if constexpr (C > 2) _tile_stored(2, out + d0 + 32, stride);
  if constexpr (C > 3) _tile_stored(3, out + d0 + 48, stride);
}

// exp(x) for softmax weights that are rounded to bf16 next: a degree-4 polynomial on [-ln2/2, ln2/2]
// (relative error below 5e-5, forty times under bf16's rounding) times 2^n by vscalefps. Half the
// instructions of exp_clamped's degree-6 Cephes form with its exponent-bit assembly; on the tile path
// the exponentials are most of the time. Arguments are clamped below at -87 (weights of ~1e-38).
inline __m512 exp_for_bf16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(1.f / 24), r, _mm512_set1_ps(1.f / 6));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.5f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(y, n);
}

// probs[0, padded) = bf16 exp(scale * (scores[t] - max)) for t < visible, exact zeros after; returns
// the float sum of the weights before rounding. One pass for the peak, one for the weights, 16 lanes
// (the exponentials are what the tile path spends its time on).
inline float scaled_softmax_bf16(const float* scores, int visible, int padded, float scale, uint16_t* probs) {
  __m512 peak = _mm512_set1_ps(-INFINITY);
  for (int t = 0; t < visible; t += 16) {
    const __mmask16 live = live_lanes(t, visible);
    peak = _mm512_mask_max_ps(peak, live, peak, _mm512_maskz_loadu_ps(live, scores + t));
  }
  const __m512 factor = _mm512_set1_ps(scale), offset = _mm512_set1_ps(-scale * _mm512_reduce_max_ps(peak));
  __m512 sum = _mm512_setzero_ps();
  for (int t = 0; t < padded; t += 16) {
    const __mmask16 live = live_lanes(t, visible);
    __m512 p = _mm512_setzero_ps();
    if (live) {
      p = _mm512_maskz_mov_ps(live, exp_for_bf16(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(live, scores + t), factor, offset)));
      sum = _mm512_add_ps(sum, p);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + t), (__m256i)_mm512_cvtneps_pbh(p));
  }
  return _mm512_reduce_add_ps(sum);
}

struct AmxScratch {
  std::vector<float> scores, denom, out;
  std::vector<uint16_t> probs, queries;
};

// prefill_tile_bf16 on the tile unit, 16 query vectors a block (head_dim a multiple of 32, at most 128)
void prefill_tile_amx(const uint16_t* q, int64_t q_token_stride, const PackedKV& kv, int chunk_start, int chunk_len,
                      int context, const PrefillTile& tile, uint16_t* out, const Shape& shape, AmxScratch& s) {
  const TileVectors rows(q, q_token_stride, out, chunk_start, chunk_len, context, tile, shape);
  const int head_dim = shape.head_dim;
  const int vectors = tile.num_rows * rows.group;
  const int padded = (rows.first_pos + tile.num_rows + 31) & ~31;  // whole 32-key steps, within kv.length
  s.scores.resize(static_cast<size_t>(16) * padded);
  s.probs.resize(static_cast<size_t>(16) * padded);
  s.denom.resize(16);
  s.out.resize(static_cast<size_t>(16) * head_dim);
  s.queries.resize(static_cast<size_t>(16) * head_dim);
  configure_tiles();  // thread state, set here so a tile never depends on what its thread ran before
  for (int j = 0; j < vectors; j += 16) {
    const int n = std::min(16, vectors - j);
    for (int i = 0; i < 16; ++i) {  // the block's query vectors together; rows past the tile are zeros
      uint16_t* row = &s.queries[static_cast<size_t>(i) * head_dim];
      if (i < n) {
        std::memcpy(row, rows.query(j + i), head_dim * sizeof(uint16_t));
      } else {
        std::memset(row, 0, head_dim * sizeof(uint16_t));
      }
    }
    const int seen = rows.position(j + n - 1) + 1;  // keys the block's last vector sees
    switch (head_dim / 32) {
      case 1: score_block_amx<1>(s.queries.data(), head_dim, kv, seen, s.scores.data(), padded); break;
      case 2: score_block_amx<2>(s.queries.data(), head_dim, kv, seen, s.scores.data(), padded); break;
      case 3: score_block_amx<3>(s.queries.data(), head_dim, kv, seen, s.scores.data(), padded); break;
      default: score_block_amx<4>(s.queries.data(), head_dim, kv, seen, s.scores.data(), padded); break;
    }
    // softmax over each vector's own keys, straight to bf16 weights with exact zeros past them; rows
    // past the tile get zero weights
    for (int i = 0; i < 16; ++i) {
      const int visible = i < n ? rows.position(j + i) + 1 : 0;
      s.denom[i] = scaled_softmax_bf16(&s.scores[static_cast<size_t>(i) * padded], visible, padded, shape.scale,
                                       &s.probs[static_cast<size_t>(i) * padded]);
    }
    const int keys = (seen + 31) & ~31;
    int d0 = 0;
    for (; d0 + 64 <= head_dim; d0 += 64) value_block_amx<4>(s.probs.data(), padded, kv, head_dim, d0, keys, s.out.data());
    if (d0 < head_dim) value_block_amx<2>(s.probs.data(), padded, kv, head_dim, d0, keys, s.out.data());
    for (int i = 0; i < n; ++i) {
      uint16_t* dst = rows.output(j + i);
      const __m512 inverse = _mm512_set1_ps(1.f / s.denom[i]);
      const float* acc = &s.out[static_cast<size_t>(i) * head_dim];
      for (int d = 0; d < head_dim; d += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + d),
                            (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(acc + d), inverse)));
    }
  }
  _tile_release();
}

bool amx_applies(int head_dim) { return bf16_prefill_applies(head_dim) && amx_permitted(); }
#define SERVOPS_AMX_PREFILL 1
#endif

// Every chunk of a step: pack each (sequence, KV head) once, then the query tiles, longest contexts first.
void paged_prefill_bf16(const uint16_t* q, int64_t q_token_stride, const uint16_t* k_cache, const uint16_t* v_cache,
                        const int32_t* block_tables, int64_t table_stride, const int32_t* cu_seqlens_q,
                        const int32_t* context_lens, uint16_t* out, int num_seqs, const Shape& shape, int threads) {
  const int kv_heads = shape.kv_heads, packs = num_seqs * kv_heads;
  std::vector<PackedKV> packed(packs);
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> rows;
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < packs; ++i) {
      const int b = i / kv_heads;
      if (cu_seqlens_q[b + 1] > cu_seqlens_q[b])
        pack_kv(k_cache, v_cache, block_tables + b * table_stride, context_lens[b], i % kv_heads, shape, rows, packed[i]);
    }
  }
  const std::vector<PrefillTile> tiles =
      longest_first_tiles(cu_seqlens_q, context_lens, num_seqs, kv_heads, BF16_PREFILL_ROWS);
  // each thread its own scratch, a tile's arguments from its sequence's chunk and packed K/V
  auto over_tiles = [&](auto scratch, auto prefill) {
    const int count = static_cast<int>(tiles.size());
#pragma omp parallel num_threads(threads) firstprivate(scratch)
    {
#pragma omp for schedule(dynamic, 1)
      for (int i = 0; i < count; ++i) {
        const PrefillTile& tile = tiles[i];
        const int b = tile.sequence;
        prefill(q, q_token_stride, packed[b * kv_heads + tile.kv_head], cu_seqlens_q[b],
                cu_seqlens_q[b + 1] - cu_seqlens_q[b], context_lens[b], tile, out, shape, scratch);
      }
    }
  };
#ifdef SERVOPS_AMX_PREFILL
  if (amx_applies(shape.head_dim)) {
    over_tiles(AmxScratch{}, prefill_tile_amx);
    return;
  }
#endif
  over_tiles(Bf16Scratch{}, prefill_tile_bf16);
}
#define SERVOPS_BF16_PREFILL 1
#endif

template <typename T>
void paged_prefill(const T* q, int64_t q_token_stride, const T* k_cache, const T* v_cache, const int32_t* block_tables,
                   int64_t table_stride, const int32_t* cu_seqlens_q, const int32_t* context_lens, T* out,
                   int num_seqs, const Shape& shape, int threads) {
  const std::vector<PrefillTile> tiles =
      longest_first_tiles(cu_seqlens_q, context_lens, num_seqs, shape.kv_heads, PREFILL_ROWS);
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

// ABI version: servops_kernels/cpu_attention.py checks it, so a stale cached build is never called wrongly.
int servops_paged_attention_abi() { return 2; }

// Which units a bf16 prefill of this head_dim runs on here: 2 the AMX tiles, 1 vdpbf16ps, 0 the
// 8-lane float path. The dispatch below asks the same questions; the engine's attention dispatch,
// its start-up log and the tests read this, so a CPU with AMX that quietly ran a slower path shows.
int servops_paged_prefill_bf16_units(int head_dim) {
#if defined(SERVOPS_AMX_PREFILL)
  if (amx_applies(head_dim)) return 2;
#endif
#if defined(SERVOPS_BF16_PREFILL)
  if (bf16_prefill_applies(head_dim)) return 1;
#endif
  return 0;
}

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
  const Shape shape{heads, kv_heads, head_dim, block_size, scale};
#ifdef SERVOPS_BF16_PREFILL
  if (bf16_prefill_applies(head_dim)) {
    paged_prefill_bf16(q, q_token_stride, k_cache, v_cache, block_tables, table_stride, cu_seqlens_q, context_lens, out,
                       num_seqs, shape, threads);
    return;
  }
#endif
  paged_prefill(q, q_token_stride, k_cache, v_cache, block_tables, table_stride, cu_seqlens_q, context_lens, out,
                num_seqs, shape, threads);
}

}  // extern "C"
