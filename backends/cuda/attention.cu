// attention's GPU tiers. gpu-naive: a thread per score, softmax_device's
// rows, a thread per output element. gpu-flash: FlashAttention's loop
// (Dao et al., 2022). Without tensor cores a block owns 16 query rows (4
// warps x 4 rows), walks the visible keys in tiles of 32 held in shared
// memory, each lane scoring one key of the tile, and keeps per row the
// running max, the running sum and the weighted sum of values (its dv
// elements split over the lanes), rescaled when the max grows. With them
// (16-bit elements, sm_80+): flash_wmma below. 16-bit elements are summed
// in FP32 everywhere (Acc).
#include "backends/cuda/attention.hpp"

#include <mma.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_elem.cuh"
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

// The flash kernels' blocks each take `block_rows` query rows of one
// (batch, head) at a time: tile t of Dims::tiles, walked grid-stride.
struct QueryTile {
  std::size_t bh, i0, rows;  // (batch, head), its first query row, how many
  std::size_t kv;            // offset of its kv head's rows, in rows
};
__device__ QueryTile query_tile(const Dims& m, std::size_t tile, std::size_t block_rows) {
  const std::size_t q_tiles = (m.q_len + block_rows - 1) / block_rows;
  QueryTile t;
  t.bh = tile / q_tiles;
  t.i0 = tile % q_tiles * block_rows;
  t.rows = smin(block_rows, m.q_len - t.i0);
  t.kv = m.kv_head(t.bh) * m.kv_len;
  return t;
}
__host__ __device__ std::size_t tiles_of(const Dims& m, std::size_t block_rows) {
  return m.bh * ((m.q_len + block_rows - 1) / block_rows);
}

Dims dims_of(const AttentionShape& s) {
  return {s.batch * s.heads, s.heads, s.kv_heads ? s.heads / s.kv_heads : 1, s.kv_heads, s.q_len, s.kv_len, s.d, s.dv,
          s.causal};
}

// D: the stored element, A = Acc<D>: what it is computed in.
template <class D, class A = Acc<D>>
__global__ void naive_scores(Dims m, A scale, const D* q, const D* k, A* scores) {
  const std::size_t total = m.bh * m.q_len * m.kv_len;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t j = e % m.kv_len, i = e / m.kv_len % m.q_len, bh = e / (m.kv_len * m.q_len);
    if (m.causal && j > i) {
      scores[e] = neg_inf<A>();
      continue;
    }
    const D* qi = q + (bh * m.q_len + i) * m.d;
    const D* kj = k + (m.kv_head(bh) * m.kv_len + j) * m.d;
    A dot = 0;
    for (std::size_t c = 0; c < m.d; ++c) dot += static_cast<A>(qi[c]) * static_cast<A>(kj[c]);
    scores[e] = dot * scale;
  }
}

template <class D, class A = Acc<D>>
__global__ void naive_weighted_sum(Dims m, const A* p, const D* v, D* out) {
  const std::size_t total = m.bh * m.q_len * m.dv;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = e % m.dv, row = e / m.dv, bh = row / m.q_len;
    const A* pr = p + row * m.kv_len;
    const D* vh = v + m.kv_head(bh) * m.kv_len * m.dv + c;
    A acc = 0;
    for (std::size_t j = 0; j < m.kv_len; ++j) acc += pr[j] * static_cast<A>(vh[j * m.dv]);
    out[e] = D(acc);
  }
}

unsigned grid_for(std::size_t n, unsigned threads) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + threads - 1) / threads, 1, std::size_t{1} << 20));
}

// Shared memory of flash_kernel: K tile (padded), V tile, q rows, in A.
std::size_t flash_shared(const AttentionShape& s, std::size_t acc_bytes) {
  return (kWarp * (s.d + 1) + kWarp * s.dv + kBlockRows * s.d) * acc_bytes;
}

template <class D, class A = Acc<D>>
__global__ void flash_kernel(Dims m, A scale, const D* q, const D* k, const D* v, D* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  A* ks = reinterpret_cast<A*>(smem);   // [32][d + 1]: a lane reads its key's row without bank conflicts
  A* vs = ks + kWarp * (m.d + 1);       // [32][dv]
  A* qs = vs + kWarp * m.dv;            // [16][d], pre-scaled
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (std::size_t tile = blockIdx.x; tile < tiles_of(m, kBlockRows); tile += gridDim.x) {
    const auto [bh, i0, rows, kv] = query_tile(m, tile, kBlockRows);
    const D* kh = k + kv * m.d;
    const D* vh = v + kv * m.dv;
    __syncthreads();  // the previous tile's readers are done with shared memory
    for (std::size_t e = threadIdx.x; e < rows * m.d; e += blockDim.x)
      qs[e] = static_cast<A>(q[(bh * m.q_len + i0) * m.d + e]) * scale;
    A mx[kRowsPerWarp], sum[kRowsPerWarp], acc[kRowsPerWarp][kMaxDimPerLane];
    for (int r = 0; r < kRowsPerWarp; ++r) {
      mx[r] = neg_inf<A>();
      sum[r] = 0;
      for (int t = 0; t < kMaxDimPerLane; ++t) acc[r][t] = 0;
    }
    const std::size_t key_end = m.causal ? smin(m.kv_len, i0 + rows) : m.kv_len;
    for (std::size_t j0 = 0; j0 < key_end; j0 += kWarp) {
      const std::size_t nk = smin(kWarp, key_end - j0);
      __syncthreads();  // the previous key tile's readers are done
      for (std::size_t e = threadIdx.x; e < nk * m.d; e += blockDim.x)
        ks[e / m.d * (m.d + 1) + e % m.d] = static_cast<A>(kh[j0 * m.d + e]);
      for (std::size_t e = threadIdx.x; e < nk * m.dv; e += blockDim.x) vs[e] = static_cast<A>(vh[j0 * m.dv + e]);
      __syncthreads();
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const std::size_t row = warp * kRowsPerWarp + r, i = i0 + row;
        if (row >= rows) break;  // warp-uniform
        // This lane's key: visible when it exists and the mask allows it.
        const std::size_t j = j0 + lane;
        const bool seen = lane < nk && (!m.causal || j <= i);
        A sc = neg_inf<A>();
        if (seen) {
          const A* qr = qs + row * m.d;
          const A* kr = ks + lane * (m.d + 1);
          A dot = 0;
          for (std::size_t c = 0; c < m.d; ++c) dot += qr[c] * kr[c];
          sc = dot;
        }
        A tile_max = sc;
        for (int o = kWarp / 2; o > 0; o /= 2) tile_max = max(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
        if (tile_max == neg_inf<A>()) continue;  // nothing visible to this row here (warp-uniform)
        const A m_new = max(mx[r], tile_max);
        const A keep = exp_t(mx[r] - m_new);  // 0 on the row's first tile
        const A p = seen ? exp_t(sc - m_new) : A(0);
        A tile_sum = p;
        for (int o = kWarp / 2; o > 0; o /= 2) tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, o);
        sum[r] = sum[r] * keep + tile_sum;
        mx[r] = m_new;
        for (int t = 0; t < kMaxDimPerLane; ++t) acc[r][t] *= keep;
        for (std::size_t jj = 0; jj < nk; ++jj) {
          const A pj = __shfl_sync(0xffffffffu, p, static_cast<int>(jj));
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
      const A inv = mx[r] == neg_inf<A>() ? A(0) : A(1) / sum[r];  // no visible key: zeros
      D* o = out + (bh * m.q_len + i0 + row) * m.dv;
      for (int t = 0; t < kMaxDimPerLane; ++t) {
        const std::size_t c = lane + t * kWarp;
        if (c < m.dv) o[c] = D(acc[r][t] * inv);
      }
    }
  }
}

// flash_wmma: the same loop on tensor cores for 16-bit elements (sm_80+).
// A block owns 64 query rows, 16 a warp, and walks the visible keys in
// tiles of 32 staged in shared memory. A warp computes its 16 x 32 scores
// with WMMA 16 x 16 x 16 (FP32 accumulators) into shared memory; two lanes
// a row take the tile's max, the weights exp(s - max) rounded to the
// element type (they multiply v on the tensor cores, as in FlashAttention;
// the row sum adds the rounded weights, so the result stays normalised)
// and rescale the row's output, which lives in shared memory in FP32
// (WMMA's fragment layout is opaque: a row of a fragment cannot be
// scaled); then O += P V with WMMA. Rows of shared arrays are padded by 8
// 16-bit values (4 floats): every fragment pointer stays 32-byte aligned.
constexpr int kWmmaWarps = 4, kWmmaRows = 16 * kWmmaWarps, kWmmaKeys = 32, kWmmaMaxDim = 128;

struct WmmaLayout {
  std::size_t ldq, ldk, ldv, lds, ldp, ldo;      // row strides, in elements
  std::size_t q, k, v, s, p, o, bytes;           // offsets (s, p, o: the first warp's), total
  std::size_t s_warp, p_warp, o_warp;            // bytes a warp's arrays take
};
__host__ __device__ inline std::size_t round_up(std::size_t b) { return (b + 127) / 128 * 128; }
__host__ __device__ inline WmmaLayout wmma_layout(std::size_t d, std::size_t dv) {
  WmmaLayout l{};
  l.ldq = l.ldk = d + 8;
  l.ldv = dv + 8;
  l.lds = kWmmaKeys + 4;
  l.ldp = kWmmaKeys + 8;
  l.ldo = dv + 4;
  l.q = 0;
  l.k = l.q + round_up(kWmmaRows * l.ldq * 2);
  l.v = l.k + round_up(kWmmaKeys * l.ldk * 2);
  l.s_warp = round_up(16 * l.lds * 4);
  l.p_warp = round_up(16 * l.ldp * 2);
  l.o_warp = round_up(16 * l.ldo * 4);
  l.s = l.v + round_up(kWmmaKeys * l.ldv * 2);
  l.p = l.s + kWmmaWarps * l.s_warp;
  l.o = l.p + kWmmaWarps * l.p_warp;
  l.bytes = l.o + kWmmaWarps * l.o_warp;
  return l;
}

template <class D>
__global__ void __launch_bounds__(kWmmaWarps * kWarp) flash_wmma(Dims m, float scale, const D* q, const D* k,
                                                                 const D* v, D* out) {
#if __CUDA_ARCH__ >= 800
  namespace w = nvcuda::wmma;
  extern __shared__ __align__(128) unsigned char wmma_smem[];
  unsigned char* smem = wmma_smem;
  const WmmaLayout l = wmma_layout(m.d, m.dv);
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  D* qs = reinterpret_cast<D*>(smem + l.q);
  D* ks = reinterpret_cast<D*>(smem + l.k);
  D* vs = reinterpret_cast<D*>(smem + l.v);
  float* ss = reinterpret_cast<float*>(smem + l.s + warp * l.s_warp);
  D* ps = reinterpret_cast<D*>(smem + l.p + warp * l.p_warp);
  float* os = reinterpret_cast<float*>(smem + l.o + warp * l.o_warp);
  const std::size_t wrow0 = 16 * std::size_t{warp};
  const unsigned r = lane / 2, side = lane % 2;  // two lanes a row of the warp's 16
  for (std::size_t tile = blockIdx.x; tile < tiles_of(m, kWmmaRows); tile += gridDim.x) {
    const auto [bh, i0, rows, kv] = query_tile(m, tile, kWmmaRows);
    const D* kh = k + kv * m.d;
    const D* vh = v + kv * m.dv;
    __syncthreads();  // the previous tile's readers are done with shared memory
    for (std::size_t e = threadIdx.x; e < kWmmaRows * m.d; e += blockDim.x) {
      const std::size_t row = e / m.d, c = e % m.d;
      qs[row * l.ldq + c] = row < rows ? q[(bh * m.q_len + i0 + row) * m.d + c] : D(0.0f);
    }
    for (std::size_t e = lane; e < 16 * m.dv; e += kWarp) os[e / m.dv * l.ldo + e % m.dv] = 0.0f;
    __syncwarp();  // other lanes read these rows, even with no key tile between
    float row_max = -INFINITY, row_sum = 0;  // of row r (both lanes keep them)
    const std::size_t i = i0 + wrow0 + r;
    const bool row_ok = wrow0 + r < rows;
    const std::size_t key_end = m.causal ? smin(m.kv_len, i0 + rows) : m.kv_len;
    for (std::size_t j0 = 0; j0 < key_end; j0 += kWmmaKeys) {
      const std::size_t nk = smin(kWmmaKeys, key_end - j0);
      __syncthreads();  // the previous key tile's readers are done
      // Rows past nk are zeros: their weights are 0, and 0 * v must not be NaN.
      for (std::size_t e = threadIdx.x; e < kWmmaKeys * m.d; e += blockDim.x) {
        const std::size_t jj = e / m.d, c = e % m.d;
        ks[jj * l.ldk + c] = jj < nk ? kh[(j0 + jj) * m.d + c] : D(0.0f);
      }
      for (std::size_t e = threadIdx.x; e < kWmmaKeys * m.dv; e += blockDim.x) {
        const std::size_t jj = e / m.dv, c = e % m.dv;
        vs[jj * l.ldv + c] = jj < nk ? vh[(j0 + jj) * m.dv + c] : D(0.0f);
      }
      __syncthreads();
      // Warp-uniform: a warp past the last row, or whose rows see none of
      // these keys, skips the tile (no barrier below).
      if (wrow0 >= rows || (m.causal && j0 > i0 + wrow0 + 15)) continue;
      w::fragment<w::accumulator, 16, 16, 16, float> sacc[2];
      w::fill_fragment(sacc[0], 0.0f);
      w::fill_fragment(sacc[1], 0.0f);
      for (std::size_t kk = 0; kk < m.d; kk += 16) {
        w::fragment<w::matrix_a, 16, 16, 16, D, w::row_major> a;
        w::load_matrix_sync(a, qs + wrow0 * l.ldq + kk, static_cast<unsigned>(l.ldq));
        for (int n = 0; n < 2; ++n) {
          w::fragment<w::matrix_b, 16, 16, 16, D, w::col_major> b;  // K^T: key n*16 + col, element c at ks[key][c]
          w::load_matrix_sync(b, ks + n * 16 * l.ldk + kk, static_cast<unsigned>(l.ldk));
          w::mma_sync(sacc[n], a, b, sacc[n]);
        }
      }
      w::store_matrix_sync(ss, sacc[0], static_cast<unsigned>(l.lds), w::mem_row_major);
      w::store_matrix_sync(ss + 16, sacc[1], static_cast<unsigned>(l.lds), w::mem_row_major);
      __syncwarp();
      float sv[16], tile_max = -INFINITY;
      for (int t = 0; t < 16; ++t) {
        const std::size_t jj = side * 16 + t, j = j0 + jj;
        const bool seen = row_ok && jj < nk && (!m.causal || j <= i);
        sv[t] = seen ? ss[r * l.lds + jj] * scale : -INFINITY;
        tile_max = fmaxf(tile_max, sv[t]);
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      const float new_max = fmaxf(row_max, tile_max);
      const float keep = new_max == -INFINITY ? 1.0f : expf(row_max - new_max);  // 0 on the row's first keys
      float tile_sum = 0;
      for (int t = 0; t < 16; ++t) {
        const D pw = D(sv[t] == -INFINITY ? 0.0f : expf(sv[t] - new_max));
        ps[r * l.ldp + side * 16 + t] = pw;
        tile_sum += static_cast<float>(pw);
      }
      tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
      row_sum = row_sum * keep + tile_sum;
      row_max = new_max;
      for (std::size_t c = side; c < m.dv; c += 2) os[r * l.ldo + c] *= keep;
      __syncwarp();
      for (std::size_t n = 0; n < m.dv; n += 16) {
        w::fragment<w::accumulator, 16, 16, 16, float> oacc;
        w::load_matrix_sync(oacc, os + n, static_cast<unsigned>(l.ldo), w::mem_row_major);
        for (int kk = 0; kk < kWmmaKeys; kk += 16) {
          w::fragment<w::matrix_a, 16, 16, 16, D, w::row_major> pa;
          w::fragment<w::matrix_b, 16, 16, 16, D, w::row_major> vb;
          w::load_matrix_sync(pa, ps + kk, static_cast<unsigned>(l.ldp));
          w::load_matrix_sync(vb, vs + kk * l.ldv + n, static_cast<unsigned>(l.ldv));
          w::mma_sync(oacc, pa, vb, oacc);
        }
        w::store_matrix_sync(os + n, oacc, static_cast<unsigned>(l.ldo), w::mem_row_major);
      }
      __syncwarp();
    }
    if (row_ok) {
      const float inv = row_sum > 0 ? 1.0f / row_sum : 0.0f;  // no visible key: zeros
      D* o = out + (bh * m.q_len + i) * m.dv;
      for (std::size_t c = side; c < m.dv; c += 2) o[c] = D(os[r * l.ldo + c] * inv);
    }
  }
#else
  __trap();  // the host checks the compute capability first
#endif
}

// Whether flash_wmma takes this call on the current device: 16-bit
// elements, tensor cores (sm_80+), head_dim and dv multiples of 16 up to
// 128, code for sm_80+ loaded there, and its shared memory (81 KiB at the
// largest shape, past the default 48) opted in there: both are per device,
// so they are asked once per device.
template <class D>
bool wmma_takes(const AttentionShape& s, bool tensor_cores) {
  if (!tensor_cores || s.d == 0 || s.dv == 0 || s.d % 16 || s.dv % 16 || s.d > kWmmaMaxDim || s.dv > kWmmaMaxDim)
    return false;
  constexpr int kDevices = 64;
  static std::atomic<int> ready[kDevices];  // 0: not asked yet, 1: yes, 2: no
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kDevices) {
    (void)cudaGetLastError();
    return false;
  }
  int state = ready[dev].load();
  if (state == 0) {  // two threads asking at once set the same values
    cudaFuncAttributes attr{};
    const int most = static_cast<int>(wmma_layout(kWmmaMaxDim, kWmmaMaxDim).bytes);
    const bool ok = cudaFuncGetAttributes(&attr, flash_wmma<D>) == cudaSuccess && attr.ptxVersion >= 80 &&
                    cudaFuncSetAttribute(flash_wmma<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, most) ==
                        cudaSuccess;
    if (!ok) (void)cudaGetLastError();  // no sm_80 image, or too little shared memory: not sticky
    state = ok ? 1 : 2;
    ready[dev].store(state);
  }
  return state == 1;
}

template <class D>
void launch_wmma(const AttentionShape& s, const D* q, const D* k, const D* v, D* out, cudaStream_t stream) {
  const Dims m = dims_of(s);
  flash_wmma<D><<<grid_for(tiles_of(m, kWmmaRows), 1), kWmmaWarps * kWarp, wmma_layout(s.d, s.dv).bytes, stream>>>(
      m, static_cast<float>(s.scale), q, k, v, out);
  launched("attention flash (tensor cores) kernel launch");
}

}  // namespace

std::size_t naive_scores_bytes(const AttentionShape& s, std::size_t elem_bytes) {
  return s.batch * s.heads * s.q_len * s.kv_len * (elem_bytes == 2 ? 4 : elem_bytes);
}

template <class T>
void attention_naive(const AttentionShape& s, const T* hq, const T* hk, const T* hv, T* hout, void* scores_v,
                     cudaStream_t stream) {
  using D = typename DeviceElem<T>::type;
  using A = Acc<D>;
  const D *q = device_ptr(hq), *k = device_ptr(hk), *v = device_ptr(hv);
  D* out = device_ptr(hout);
  auto* scores = static_cast<A*>(scores_v);
  const Dims m = dims_of(s);
  const std::size_t n_out = m.bh * m.q_len * m.dv;
  if (n_out == 0) return;
  if (m.kv_len == 0) {  // an empty weighted sum
    check(cudaMemsetAsync(out, 0, n_out * sizeof(D), stream), "cudaMemsetAsync (attention without keys)");
    return;
  }
  const std::size_t n_scores = m.bh * m.q_len * m.kv_len;
  naive_scores<D><<<grid_for(n_scores, 256), 256, 0, stream>>>(m, static_cast<A>(s.scale), q, k, scores);
  launched("attention score kernel launch");
  softmax_device(sizeof(A) == 4 ? ScalarType::F32 : ScalarType::F64, scores, scores, m.bh * m.q_len, m.kv_len, 1,
                 false, stream);
  naive_weighted_sum<D><<<grid_for(n_out, 256), 256, 0, stream>>>(m, scores, v, out);
  launched("attention weighted-sum kernel launch");
}

// (flash_kernel takes every shape flash_wmma takes: 40 KiB at 128 x 128.)
bool flash_fits(const AttentionShape& s, std::size_t elem_bytes) {
  return s.dv <= static_cast<std::size_t>(kWarp * kMaxDimPerLane) &&
         flash_shared(s, elem_bytes == 2 ? 4 : elem_bytes) <= kSharedLimit;
}

template <class T>
void attention_flash(const AttentionShape& s, const T* hq, const T* hk, const T* hv, T* hout, bool tensor_cores,
                     cudaStream_t stream) {
  using D = typename DeviceElem<T>::type;
  const D *q = device_ptr(hq), *k = device_ptr(hk), *v = device_ptr(hv);
  D* out = device_ptr(hout);
  const Dims m = dims_of(s);
  if (m.bh * m.q_len == 0 || m.dv == 0) return;
  if (m.kv_len == 0) {  // an empty weighted sum
    check(cudaMemsetAsync(out, 0, m.bh * m.q_len * m.dv * sizeof(D), stream), "cudaMemsetAsync (attention without keys)");
    return;
  }
  if constexpr (sizeof(D) == 2)
    if (wmma_takes<D>(s, tensor_cores)) return launch_wmma(s, q, k, v, out, stream);
  flash_kernel<D><<<grid_for(tiles_of(m, kBlockRows), 1), kWarps * kWarp, flash_shared(s, sizeof(Acc<D>)), stream>>>(
      m, static_cast<Acc<D>>(s.scale), q, k, v, out);
  launched("attention flash kernel launch");
}

#define VEDA_ATTENTION_GPU(T)                                                                                \
  template void attention_naive<T>(const AttentionShape&, const T*, const T*, const T*, T*, void*,         \
                                   cudaStream_t);                                                          \
  template void attention_flash<T>(const AttentionShape&, const T*, const T*, const T*, T*, bool, cudaStream_t);
VEDA_ATTENTION_GPU(float)
VEDA_ATTENTION_GPU(double)
VEDA_ATTENTION_GPU(veda::half)
VEDA_ATTENTION_GPU(veda::bfloat16)
#undef VEDA_ATTENTION_GPU

}  // namespace veda::detail::cuda
