// attention's GPU tiers. gpu-naive: a thread per score, softmax_device's
// rows, a thread per output element. gpu-flash: FlashAttention's loop
// (Dao et al., 2022) without tensor cores: a block owns 16 query rows (4
// warps x 4 rows), walks the visible keys in tiles of 32 held in shared
// memory, each lane scoring one key of the tile, and keeps per row the
// running max, the running sum and the weighted sum of values (its dv
// elements split over the lanes), rescaled when the max grows.
#include "backends/cuda/attention.hpp"

#include <algorithm>
#include <cmath>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/softmax.hpp"

namespace veda::detail::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kWarps = 4, kRowsPerWarp = 4, kBlockRows = kWarps * kRowsPerWarp;
constexpr int kMaxDimPerLane = 4;                  // dv <= 128
constexpr std::size_t kSharedLimit = 48 * 1024;    // without opting in to more

__device__ std::size_t smin(std::size_t a, std::size_t b) { return a < b ? a : b; }

template <class T>
__device__ T exp_t(T x) {
  if constexpr (sizeof(T) == 4) return expf(x);
  else return ::exp(x);
}

template <class T>
__device__ T neg_inf() {
  return -static_cast<T>(INFINITY);
}

// Kernel arguments: sizes as 64-bit, the head mapping precomputed.
struct Dims {
  std::size_t bh, heads, group, kv_heads, q_len, kv_len, d, dv;
  bool causal;
  __device__ std::size_t kv_head(std::size_t bh_index) const {
    return bh_index / heads * kv_heads + bh_index % heads / group;
  }
};

Dims dims_of(const AttentionShape& s) {
  return {s.batch * s.heads, s.heads, s.kv_heads ? s.heads / s.kv_heads : 1, s.kv_heads, s.q_len, s.kv_len, s.d, s.dv,
          s.causal};
}

template <class T>
__global__ void naive_scores(Dims m, T scale, const T* q, const T* k, T* scores) {
  const std::size_t total = m.bh * m.q_len * m.kv_len;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t j = e % m.kv_len, i = e / m.kv_len % m.q_len, bh = e / (m.kv_len * m.q_len);
    if (m.causal && j > i) {
      scores[e] = neg_inf<T>();
      continue;
    }
    const T* qi = q + (bh * m.q_len + i) * m.d;
    const T* kj = k + (m.kv_head(bh) * m.kv_len + j) * m.d;
    T dot = 0;
    for (std::size_t c = 0; c < m.d; ++c) dot += qi[c] * kj[c];
    scores[e] = dot * scale;
  }
}

template <class T>
__global__ void naive_weighted_sum(Dims m, const T* p, const T* v, T* out) {
  const std::size_t total = m.bh * m.q_len * m.dv;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = e % m.dv, row = e / m.dv, bh = row / m.q_len;
    const T* pr = p + row * m.kv_len;
    const T* vh = v + m.kv_head(bh) * m.kv_len * m.dv + c;
    T acc = 0;
    for (std::size_t j = 0; j < m.kv_len; ++j) acc += pr[j] * vh[j * m.dv];
    out[e] = acc;
  }
}

unsigned grid_for(std::size_t n, unsigned threads) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + threads - 1) / threads, 1, std::size_t{1} << 20));
}

std::size_t flash_shared(const AttentionShape& s, std::size_t elem) {
  return (kWarp * (s.d + 1) + kWarp * s.dv + kBlockRows * s.d) * elem;  // K tile (padded), V tile, q rows
}

template <class T>
__global__ void flash_kernel(Dims m, T scale, const T* q, const T* k, const T* v, T* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);   // [32][d + 1]: a lane reads its key's row without bank conflicts
  T* vs = ks + kWarp * (m.d + 1);       // [32][dv]
  T* qs = vs + kWarp * m.dv;            // [16][d], pre-scaled
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const std::size_t q_tiles = (m.q_len + kBlockRows - 1) / kBlockRows;
  for (std::size_t tile = blockIdx.x; tile < m.bh * q_tiles; tile += gridDim.x) {
    const std::size_t bh = tile / q_tiles, i0 = tile % q_tiles * kBlockRows;
    const std::size_t rows = smin(kBlockRows, m.q_len - i0);
    const T* kh = k + m.kv_head(bh) * m.kv_len * m.d;
    const T* vh = v + m.kv_head(bh) * m.kv_len * m.dv;
    __syncthreads();  // the previous tile's readers are done with shared memory
    for (std::size_t e = threadIdx.x; e < rows * m.d; e += blockDim.x)
      qs[e] = q[(bh * m.q_len + i0) * m.d + e] * scale;
    T mx[kRowsPerWarp], sum[kRowsPerWarp], acc[kRowsPerWarp][kMaxDimPerLane];
    for (int r = 0; r < kRowsPerWarp; ++r) {
      mx[r] = neg_inf<T>();
      sum[r] = 0;
      for (int t = 0; t < kMaxDimPerLane; ++t) acc[r][t] = 0;
    }
    const std::size_t key_end = m.causal ? smin(m.kv_len, i0 + rows) : m.kv_len;
    for (std::size_t j0 = 0; j0 < key_end; j0 += kWarp) {
      const std::size_t nk = smin(kWarp, key_end - j0);
      __syncthreads();  // the previous key tile's readers are done
      for (std::size_t e = threadIdx.x; e < nk * m.d; e += blockDim.x)
        ks[e / m.d * (m.d + 1) + e % m.d] = kh[j0 * m.d + e];
      for (std::size_t e = threadIdx.x; e < nk * m.dv; e += blockDim.x) vs[e] = vh[j0 * m.dv + e];
      __syncthreads();
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const std::size_t row = warp * kRowsPerWarp + r, i = i0 + row;
        if (row >= rows) break;  // warp-uniform
        // This lane's key: visible when it exists and the mask allows it.
        const std::size_t j = j0 + lane;
        const bool seen = lane < nk && (!m.causal || j <= i);
        T sc = neg_inf<T>();
        if (seen) {
          const T* qr = qs + row * m.d;
          const T* kr = ks + lane * (m.d + 1);
          T dot = 0;
          for (std::size_t c = 0; c < m.d; ++c) dot += qr[c] * kr[c];
          sc = dot;
        }
        T tile_max = sc;
        for (int o = kWarp / 2; o > 0; o /= 2) tile_max = max(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
        if (tile_max == neg_inf<T>()) continue;  // nothing visible to this row here (warp-uniform)
        const T m_new = max(mx[r], tile_max);
        const T keep = exp_t(mx[r] - m_new);  // 0 on the row's first tile
        const T p = seen ? exp_t(sc - m_new) : T(0);
        T tile_sum = p;
        for (int o = kWarp / 2; o > 0; o /= 2) tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, o);
        sum[r] = sum[r] * keep + tile_sum;
        mx[r] = m_new;
        for (int t = 0; t < kMaxDimPerLane; ++t) acc[r][t] *= keep;
        for (std::size_t jj = 0; jj < nk; ++jj) {
          const T pj = __shfl_sync(0xffffffffu, p, static_cast<int>(jj));
          for (int t = 0; t < kMaxDimPerLane; ++t) {
            const std::size_t c = lane + t * kWarp;
            if (c < m.dv) acc[r][t] += pj * vs[jj * m.dv + c];
          }
        }
      }
    }
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const std::size_t row = warp * kRowsPerWarp + r;
      if (row >= rows) break;
      const T inv = mx[r] == neg_inf<T>() ? T(0) : T(1) / sum[r];  // no visible key: zeros
      T* o = out + (bh * m.q_len + i0 + row) * m.dv;
      for (int t = 0; t < kMaxDimPerLane; ++t) {
        const std::size_t c = lane + t * kWarp;
        if (c < m.dv) o[c] = acc[r][t] * inv;
      }
    }
  }
}

}  // namespace

template <class T>
void attention_naive(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, T* scores,
                     cudaStream_t stream) {
  const Dims m = dims_of(s);
  const std::size_t n_out = m.bh * m.q_len * m.dv;
  if (n_out == 0) return;
  if (m.kv_len == 0) {  // an empty weighted sum
    check(cudaMemsetAsync(out, 0, n_out * sizeof(T), stream), "cudaMemsetAsync (attention without keys)");
    return;
  }
  const std::size_t n_scores = m.bh * m.q_len * m.kv_len;
  naive_scores<T><<<grid_for(n_scores, 256), 256, 0, stream>>>(m, static_cast<T>(s.scale), q, k, scores);
  launched("attention score kernel launch");
  softmax_device(sizeof(T) == 4 ? ScalarType::F32 : ScalarType::F64, scores, scores, m.bh * m.q_len, m.kv_len, 1,
                 false, stream);
  naive_weighted_sum<T><<<grid_for(n_out, 256), 256, 0, stream>>>(m, scores, v, out);
  launched("attention weighted-sum kernel launch");
}

bool flash_fits(const AttentionShape& s, std::size_t elem_bytes) {
  return s.dv <= static_cast<std::size_t>(kWarp * kMaxDimPerLane) && flash_shared(s, elem_bytes) <= kSharedLimit;
}

template <class T>
void attention_flash(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, cudaStream_t stream) {
  const Dims m = dims_of(s);
  const std::size_t tiles = m.bh * ((m.q_len + kBlockRows - 1) / kBlockRows);
  if (tiles == 0 || m.dv == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(tiles, std::size_t{1} << 20));
  flash_kernel<T><<<grid, kWarps * kWarp, flash_shared(s, sizeof(T)), stream>>>(m, static_cast<T>(s.scale), q, k, v,
                                                                                out);
  launched("attention flash kernel launch");
}

template void attention_naive<float>(const AttentionShape&, const float*, const float*, const float*, float*,
                                     float*, cudaStream_t);
template void attention_naive<double>(const AttentionShape&, const double*, const double*, const double*,
                                      double*, double*, cudaStream_t);
template void attention_flash<float>(const AttentionShape&, const float*, const float*, const float*, float*,
                                     cudaStream_t);
template void attention_flash<double>(const AttentionShape&, const double*, const double*, const double*,
                                      double*, cudaStream_t);

}  // namespace veda::detail::cuda
