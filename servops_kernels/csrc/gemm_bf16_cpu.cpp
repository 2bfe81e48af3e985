// bfloat16 linear layer (y = x W^T + b) for x86-64 CPUs with AVX2 + FMA and no native bfloat16
// arithmetic: bf16 inputs, weights and outputs, float32 products and sums.
//
// Why native code: on a CPU without AVX512-BF16 or AMX, PyTorch's bf16 GEMM is a software
// path. Measured here it ran at 8.5-9.7 GFLOP/s through F.linear whatever the batch, against
// 50-55 in float32 in the same process, so a bf16 engine was 5x slower than a float32 one and
// batching bought no faster GEMMs. Widening bf16 to float32 is a 16-bit shift, so a kernel
// that widens in registers runs at float32 FMA speed while reading half the weight bytes.
//
// Layout: the weight stays as PyTorch holds it, [N, K] row-major (nn.Linear's layout, and the
// embedding table for a tied LM head), so nothing is repacked or copied. The product is a dot
// product along K of one weight row and one activation row. 16 bf16 weights load as one
// 256-bit vector whose 32-bit lane j holds elements 2j (low half) and 2j+1 (high half): a left
// shift by 16 gives the even elements as floats, masking the low half gives the odd ones, two
// instructions and no shuffle. The activations are widened once per call into the same
// even/odd split, so the inner loop is loads and FMAs.
//
// Blocking: threads split the output columns (weight rows) into blocks that stay in L2; a
// panel of activation rows (in L2) meets each block a few rows at a time (in L1), in a 4 x 2
// register tile (4 activation rows by 2 weight rows, 8 accumulators). Sizes were picked by a
// sweep on SmolLM2's shapes (16-2,048 rows); the box's noise hides differences under ~20%.
//
// Results differ from PyTorch's bf16 GEMM only by the order of the float32 sums before the
// one rounding to bf16 (tests/unit/servops_kernels/test_cpu_gemm.py bounds it). Built at first use by
// servops_kernels/cpu_build.py; servops_kernels/cpu_gemm.py falls back to PyTorch where this does not compile.
#include <algorithm>
#include <cstdint>
#include <vector>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "gemm_bf16_cpu.cpp needs AVX2 and FMA (x86-64-v3)"
#endif
#include <immintrin.h>

#include "simd_common.h"

namespace {

constexpr int CHUNK = 16;                 // K elements per inner step: one 256-bit load of bf16
constexpr int MR = 4;                     // activation rows per register tile
constexpr int ROW_BLOCK = 8;              // activation rows kept in L1 while a weight pair passes
constexpr int PANEL_ROWS = 128;           // activation rows kept in L2 while the weight blocks pass
constexpr int64_t WEIGHT_BLOCK_BYTES = 96 << 10;  // weight rows per block: about this much, in L2
constexpr int64_t PARALLEL_FLOPS = 1 << 19;       // below this a call runs on one thread

inline float horizontal_sum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// One activation row widened into the split layout: for each full chunk of 16, its 8 even
// elements then its 8 odd ones; the tail (K % 16) after them in natural order.
inline void widen_row(const uint16_t* x, float* out, int k) {
  const int full = k / CHUNK * CHUNK;
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  for (int i = 0; i < full; i += CHUNK) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
    _mm256_storeu_ps(out + i + 8, _mm256_castsi256_ps(_mm256_and_si256(v, high)));
  }
  for (int i = full; i < k; ++i) out[i] = to_float(x[i]);
}

// out[r][c] (r < R, c < C) = dot(x row r, w row c) over K; x rows widened (split layout)
template <int R, int C>
inline void tile(const float* x, int64_t x_stride, const uint16_t* w, int64_t w_stride, int k, float* out) {
  const int full = k / CHUNK * CHUNK;
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int i = 0; i < full; i += CHUNK) {
    __m256 even[C], odd[C];
    for (int c = 0; c < C; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + c * w_stride + i));
      even[c] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      odd[c] = _mm256_castsi256_ps(_mm256_and_si256(v, high));
    }
    for (int r = 0; r < R; ++r) {
      const __m256 xe = _mm256_loadu_ps(x + r * x_stride + i), xo = _mm256_loadu_ps(x + r * x_stride + i + 8);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(odd[c], xo, _mm256_fmadd_ps(even[c], xe, acc[r][c]));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float sum = horizontal_sum(acc[r][c]);
      for (int i = full; i < k; ++i) sum += x[r * x_stride + i] * to_float(w[c * w_stride + i]);
      out[r * C + c] = sum;
    }
}

template <int R>
inline void tile_rows(const float* x, int64_t x_stride, const uint16_t* w, int64_t w_stride, int k, int cols,
                      float* out) {
  if (cols == 2) tile<R, 2>(x, x_stride, w, w_stride, k, out);
  else tile<R, 1>(x, x_stride, w, w_stride, k, out);
}

// The rows x columns tile at (m, n) of the output, rounded to bf16 after the bias
inline void output_tile(const float* xw, int64_t xw_stride, const uint16_t* w, int k, const uint16_t* bias,
                        uint16_t* y, int64_t y_stride, int m, int n, int rows, int cols) {
  float sums[MR * 2];
  const float* x = xw + m * xw_stride;
  const uint16_t* wn = w + static_cast<int64_t>(n) * k;
  switch (rows) {
    case 4: tile_rows<4>(x, xw_stride, wn, k, k, cols, sums); break;
    case 3: tile_rows<3>(x, xw_stride, wn, k, k, cols, sums); break;
    case 2: tile_rows<2>(x, xw_stride, wn, k, k, cols, sums); break;
    default: tile_rows<1>(x, xw_stride, wn, k, k, cols, sums); break;
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float b = bias ? to_float(bias[n + c]) : 0.0f;
      store(sums[r * cols + c] + b, y + (m + r) * y_stride + n + c);
    }
}

// Grows and is kept, one per calling thread: a fresh buffer per call would fault its pages in
// every time, and a shared one would make concurrent callers overwrite each other.
std::vector<float>& widened_buffer() {
  thread_local std::vector<float> buffer;
  return buffer;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512BF16__)
// With AVX512-BF16 (built with -march=native on such a CPU) the dot products run on the bf16
// units instead: one vdpbf16ps takes 32 bf16 pairs of a weight row and an activation row,
// multiplies them exactly in float32 and adds them pairwise into 16 float32 sums (round to
// nearest even, denormals flushed, as every float32 FMA path here rounds too). Neither side is
// widened or repacked, and a tile of up to 4 x 4 keeps 16 independent sums in flight, so a
// matrix-vector product (a decode step of one or two sequences) is bound by reading the weights,
// not by FMA latency. One row, one core, SmolLM2's layers: 36 GB/s from L2 against the AVX2
// tile's 16.5, and a one-sequence decode step 64 -> 37 ms (BENCHMARKS.md, "bf16 GEMV on the bf16
// units"). The engine sends at most MEMORY_BOUND_ROWS (4) rows here on such a CPU (more go to
// oneDNN's AMX/AVX512-BF16 GEMM, servops_kernels/cpu_gemm.py), but any shape is computed correctly.
#define SERVOPS_GEMM_DPBF16 1
constexpr int DP_CHUNK = 32;  // bf16 elements per 512-bit load
constexpr int DP_COLS = 4;    // weight rows per tile
constexpr int PREFETCH_ROWS = 8;  // weight rows ahead to prefetch

template <int R, int C>
inline void dp_tile(const uint16_t* x, int64_t x_stride, const uint16_t* w, int64_t w_stride, int k, float* out) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int i = 0;
  for (; i + DP_CHUNK <= k; i += DP_CHUNK) {
    __m512i wv[C];
    for (int c = 0; c < C; ++c) {
      wv[c] = _mm512_loadu_si512(w + c * w_stride + i);
      _mm_prefetch(reinterpret_cast<const char*>(w + (c + PREFETCH_ROWS) * w_stride + i), _MM_HINT_T0);
    }
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(x + r * x_stride + i);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], (__m512bh)xv, (__m512bh)wv[c]);
    }
  }
  if (i < k) {  // the K tail: masked loads read zeros past the row
    const __mmask32 tail = static_cast<__mmask32>((1ULL << (k - i)) - 1);
    __m512i wv[C];
    for (int c = 0; c < C; ++c) wv[c] = _mm512_maskz_loadu_epi16(tail, w + c * w_stride + i);
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_maskz_loadu_epi16(tail, x + r * x_stride + i);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], (__m512bh)xv, (__m512bh)wv[c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) out[r * C + c] = _mm512_reduce_add_ps(acc[r][c]);
}

template <int R>
inline void dp_tile_cols(const uint16_t* x, int64_t x_stride, const uint16_t* w, int k, int cols, float* out) {
  switch (cols) {
    case 4: dp_tile<R, 4>(x, x_stride, w, k, k, out); break;
    case 3: dp_tile<R, 3>(x, x_stride, w, k, k, out); break;
    case 2: dp_tile<R, 2>(x, x_stride, w, k, k, out); break;
    default: dp_tile<R, 1>(x, x_stride, w, k, k, out); break;
  }
}

void linear_dpbf16(const uint16_t* x, int64_t x_stride, const uint16_t* w, const uint16_t* bias, uint16_t* y,
                   int64_t y_stride, int rows, int cols, int k, int threads) {
  const int64_t flops = 2LL * rows * cols * k;
  const int team = flops >= PARALLEL_FLOPS ? std::max(threads, 1) : 1;
  const int64_t groups = (cols + DP_COLS - 1) / DP_COLS;
  // each thread takes one contiguous run of weight rows: one sequential stream for the prefetcher
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t group = 0; group < groups; ++group) {
    const int n = static_cast<int>(group * DP_COLS);
    const int width = std::min(DP_COLS, cols - n);
    const uint16_t* wn = w + static_cast<int64_t>(n) * k;
    float sums[MR * DP_COLS];
    for (int m = 0; m < rows; m += MR) {
      const int height = std::min(MR, rows - m);
      const uint16_t* xm = x + m * x_stride;
      switch (height) {
        case 4: dp_tile_cols<4>(xm, x_stride, wn, k, width, sums); break;
        case 3: dp_tile_cols<3>(xm, x_stride, wn, k, width, sums); break;
        case 2: dp_tile_cols<2>(xm, x_stride, wn, k, width, sums); break;
        default: dp_tile_cols<1>(xm, x_stride, wn, k, width, sums); break;
      }
      for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c) {
          const float b = bias ? to_float(bias[n + c]) : 0.0f;
          store(sums[r * width + c] + b, y + (m + r) * y_stride + n + c);
        }
    }
  }
}
#endif

}  // namespace

extern "C" {

// ABI version: servops_kernels/cpu_gemm.py checks it, so a stale cached build is never called wrongly.
int servops_gemm_abi() { return 1; }

// y[m, n] = bf16(sum_k x[m, k] w[n, k] + bias[n]) for m < rows, n < cols; x rows x_stride
// elements apart, w contiguous [cols, k], bias [cols] or null, y rows y_stride apart.
// Callers on different threads each get their own widened-activation buffer.
void servops_linear_bf16(const uint16_t* x, int64_t x_stride, const uint16_t* w, const uint16_t* bias, uint16_t* y,
                         int64_t y_stride, int rows, int cols, int k, int threads) {
  if (rows <= 0 || cols <= 0) return;
#ifdef SERVOPS_GEMM_DPBF16
  linear_dpbf16(x, x_stride, w, bias, y, y_stride, rows, cols, k, threads);
#else
  const int64_t xw_stride = (k + 7) / 8 * 8;
  std::vector<float>& xw_buffer = widened_buffer();
  if (xw_buffer.size() < static_cast<size_t>(rows * xw_stride)) xw_buffer.resize(rows * xw_stride);
  float* xw = xw_buffer.data();
  const int64_t flops = 2LL * rows * cols * k;
  const int team = flops >= PARALLEL_FLOPS ? std::max(threads, 1) : 1;

  // weight blocks: about WEIGHT_BLOCK_BYTES each, an even number of rows, a multiple of the team
  int64_t per_block = std::max<int64_t>(2, WEIGHT_BLOCK_BYTES / (2LL * k)) / 2 * 2;
  int64_t blocks = (cols + per_block - 1) / per_block;
  blocks = (blocks + team - 1) / team * team;
  per_block = ((cols + blocks - 1) / blocks + 1) / 2 * 2;
  blocks = (cols + per_block - 1) / per_block;

#pragma omp parallel num_threads(team)
  {
#pragma omp for schedule(static)
    for (int m = 0; m < rows; ++m) widen_row(x + m * x_stride, xw + m * xw_stride, k);
    for (int panel = 0; panel < rows; panel += PANEL_ROWS) {
      const int panel_end = std::min(rows, panel + PANEL_ROWS);
#pragma omp for schedule(static)
      for (int64_t block = 0; block < blocks; ++block) {
        const int n_begin = static_cast<int>(block * per_block);
        const int n_end = static_cast<int>(std::min<int64_t>(cols, n_begin + per_block));
        for (int m0 = panel; m0 < panel_end; m0 += ROW_BLOCK) {
          const int m_end = std::min(panel_end, m0 + ROW_BLOCK);
          for (int n = n_begin; n < n_end; n += 2)
            for (int m = m0; m < m_end; m += MR)
              output_tile(xw, xw_stride, w, k, bias, y, y_stride, m, n, std::min(MR, m_end - m),
                          std::min(2, n_end - n));
        }
      }
    }
  }
#endif
}

}  // extern "C"
