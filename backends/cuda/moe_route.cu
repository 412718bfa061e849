// moe_route on the GPU: a warp per token picks its top k (k warp-wide
// arg-max passes, each over the experts ranking after the last pick, so no
// list of picks is kept), writes ids and gates, counts its picks (integer
// atomics: exact) and its softmax's maximum and sum; importance sums the
// probabilities per expert over chunks of tokens, then the chunks in order
// (no floating-point atomics: the same bits every run); offsets are CUB's
// scan of counts, and order CUB's (stable) radix sort of the assignments
// on the bits of their expert ids.
#include "backends/cuda/moe_route.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>

#include "backends/cuda/cuda_check.hpp"
#include "runtime/memory_pool.hpp"

namespace veda::detail::cuda {
namespace {
constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 8;        // tokens a block of route
constexpr int kTokenLanes = 8;   // importance: token lanes per block (32 experts each)
constexpr std::size_t kChunkTokens = 512;

template <class T>
__global__ void route(const T* logits, std::size_t tokens, std::size_t E, std::size_t k, std::int64_t* ids,
                      T* gates, std::int64_t* counts, std::int64_t* slots, double* top_logit, double* row_sum) {
  const unsigned lane = threadIdx.x & 31;
  for (std::size_t t = blockIdx.x * std::size_t{kWarps} + threadIdx.x / 32; t < tokens;
       t += std::size_t{gridDim.x} * kWarps) {
    const T* l = logits + t * E;
    T pv = 0, top = 0;
    std::size_t pj = 0;
    double z = 0;
    for (std::size_t s = 0; s < k; ++s) {
      int have = 0;
      T bv = 0;
      std::size_t bj = 0;
      for (std::size_t e = lane; e < E; e += 32) {
        const T v = l[e];
        if (s > 0 && !ranks_before(pv, pj, v, e)) continue;  // picked already
        if (!have || ranks_before(v, e, bv, bj)) have = 1, bv = v, bj = e;
      }
      for (int off = 16; off > 0; off >>= 1) {
        const T ov = __shfl_down_sync(kFull, bv, off);
        const auto oj = static_cast<std::size_t>(__shfl_down_sync(kFull, static_cast<unsigned long long>(bj), off));
        const int oh = __shfl_down_sync(kFull, have, off);
        if (oh && (!have || ranks_before(ov, oj, bv, bj))) have = 1, bv = ov, bj = oj;
      }
      pv = __shfl_sync(kFull, bv, 0);
      pj = static_cast<std::size_t>(__shfl_sync(kFull, static_cast<unsigned long long>(bj), 0));
      if (s == 0) top = pv;
      if (lane == 0) {
        ids[t * k + s] = static_cast<std::int64_t>(pj);
        slots[t * k + s] = static_cast<std::int64_t>(t * k + s);
        gates[t * k + s] = pv;  // the logit until z is known
        z += exp(static_cast<double>(pv) - static_cast<double>(top));
        atomicAdd(reinterpret_cast<unsigned long long*>(counts + pj), 1ull);
      }
    }
    if (lane == 0)
      for (std::size_t s = 0; s < k; ++s)
        gates[t * k + s] = static_cast<T>(exp(static_cast<double>(gates[t * k + s]) - static_cast<double>(top)) / z);
    double all = 0;  // the softmax over every expert, for importance
    for (std::size_t e = lane; e < E; e += 32) all += exp(static_cast<double>(l[e]) - static_cast<double>(top));
    for (int off = 16; off > 0; off >>= 1) all += __shfl_down_sync(kFull, all, off);
    if (lane == 0) {
      top_logit[t] = static_cast<double>(top);
      row_sum[t] = all;
    }
  }
}

// partial[c][e]: the probabilities of expert e summed over chunk c's tokens.
template <class T>
__global__ void importance_chunks(const T* logits, std::size_t tokens, std::size_t E, std::size_t chunk,
                                  const double* top_logit, const double* row_sum, double* partial) {
  __shared__ double acc[kTokenLanes][32];
  const std::size_t e = blockIdx.x * std::size_t{32} + threadIdx.x;
  const std::size_t t0 = blockIdx.y * chunk, t1 = min(tokens, t0 + chunk);
  double a = 0;
  if (e < E)
    for (std::size_t t = t0 + threadIdx.y; t < t1; t += kTokenLanes)
      a += exp(static_cast<double>(logits[t * E + e]) - top_logit[t]) / row_sum[t];
  acc[threadIdx.y][threadIdx.x] = a;
  __syncthreads();
  if (threadIdx.y == 0 && e < E) {
    for (int y = 1; y < kTokenLanes; ++y) a += acc[y][threadIdx.x];
    partial[blockIdx.y * E + e] = a;
  }
}

template <class T>
__global__ void importance_finish(const double* partial, std::size_t chunks, std::size_t E, std::size_t tokens,
                                  T* importance) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < E; e += std::size_t{gridDim.x} * blockDim.x) {
    double s = 0;
    for (std::size_t c = 0; c < chunks; ++c) s += partial[c * E + e];
    importance[e] = static_cast<T>(tokens ? s / static_cast<double>(tokens) : 0.0);
  }
}

unsigned grid_for(std::size_t n, std::size_t per_block) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + per_block - 1) / per_block, 1, 65535));
}

template <class T>
__global__ void gather_rows(const std::int64_t* order, std::size_t k, std::size_t d, const T* x, T* out,
                            std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t r = i / d;
    out[i] = x[static_cast<std::size_t>(order[r]) / k * d + (i - r * d)];
  }
}

__global__ void invert(const std::int64_t* order, std::size_t* row, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    row[static_cast<std::size_t>(order[i])] = i;
}

// out[t][c] = sum over s in order of gates[t][s] y[row[t k + s]][c], as the CPU adds them.
template <class T>
__global__ void combine_rows(const std::size_t* row, const T* gates, std::size_t k, std::size_t h, const T* y, T* out,
                             std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t t = i / h, c = i - t * h;
    T acc = 0;
    for (std::size_t s = 0; s < k; ++s) acc += gates[t * k + s] * y[row[t * k + s] * h + c];
    out[i] = acc;
  }
}

}  // namespace

template <class T>
void moe_route(CudaDevice& dev, const MoeShape& s, const T* logits, std::int64_t* ids, T* gates,
               std::int64_t* counts, std::int64_t* offsets, std::int64_t* order, T* importance, cudaStream_t stream) {
  const std::size_t E = s.experts, n = s.tokens * s.top_k;
  check(cudaMemsetAsync(counts, 0, E * sizeof(std::int64_t), stream), "cudaMemsetAsync (moe_route counts)");
  check(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t), stream), "cudaMemsetAsync (moe_route offsets)");
  const std::size_t chunks = std::min<std::size_t>((s.tokens + kChunkTokens - 1) / kChunkTokens, 65535);
  const std::size_t chunk = chunks ? (s.tokens + chunks - 1) / chunks : 0;
  const PoolBlock keys(dev.pool(), n * sizeof(std::int64_t) + 1, stream),
      slots(dev.pool(), n * sizeof(std::int64_t) + 1, stream),
      stats(dev.pool(), 2 * s.tokens * sizeof(double) + 1, stream),
      partial(dev.pool(), chunks * E * sizeof(double) + 1, stream);
  double* top_logit = stats.as<double>();
  double* row_sum = top_logit + s.tokens;
  if (s.tokens) {
    route<<<grid_for(s.tokens, kWarps), 32 * kWarps, 0, stream>>>(logits, s.tokens, E, s.top_k, ids, gates, counts,
                                                                  slots.as<std::int64_t>(), top_logit, row_sum);
    launched("moe_route kernel");
    importance_chunks<<<dim3(static_cast<unsigned>((E + 31) / 32), static_cast<unsigned>(chunks)),
                        dim3(32, kTokenLanes), 0, stream>>>(logits, s.tokens, E, chunk, top_logit, row_sum,
                                                            partial.as<double>());
    launched("moe_route importance kernel");
  }
  importance_finish<<<grid_for(E, 256), 256, 0, stream>>>(partial.as<double>(), chunks, E, s.tokens, importance);
  launched("moe_route importance sum");
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, bytes, counts, offsets + 1, static_cast<std::int64_t>(E), stream),
        "cub::DeviceScan (sizing)");
  {
    const PoolBlock temp(dev.pool(), bytes + 1, stream);
    launched(cub::DeviceScan::InclusiveSum(temp.get(), bytes, counts, offsets + 1, static_cast<std::int64_t>(E), stream),
             "cub::DeviceScan (moe_route offsets)");
  }
  if (n == 0) return;
  // A stable LSD radix sort over the bits an expert id can have.
  const int bits = std::max(1, static_cast<int>(std::bit_width(E - 1)));
  const auto count = static_cast<std::int64_t>(n);
  bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, ids, keys.as<std::int64_t>(), slots.as<std::int64_t>(), order,
                                        count, 0, bits, stream),
        "cub::DeviceRadixSort (sizing)");
  const PoolBlock temp(dev.pool(), bytes + 1, stream);
  launched(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, ids, keys.as<std::int64_t>(), slots.as<std::int64_t>(),
                                           order, count, 0, bits, stream),
           "cub::DeviceRadixSort (moe_route order)");
}

template <class T>
void moe_dispatch(const MoeShape& s, std::size_t d, const std::int64_t* order, const T* x, T* out, cudaStream_t stream) {
  const std::size_t n = s.tokens * s.top_k * d;
  if (n == 0) return;
  gather_rows<<<grid_for(n, 256), 256, 0, stream>>>(order, s.top_k, d, x, out, n);
  launched("moe_dispatch kernel");
}

template <class T>
void moe_combine(CudaDevice& dev, const MoeShape& s, std::size_t h, const std::int64_t* order, const T* gates,
                 const T* y, T* out, cudaStream_t stream) {
  const std::size_t assignments = s.tokens * s.top_k, n = s.tokens * h;
  if (n == 0) return;
  const PoolBlock row(dev.pool(), assignments * sizeof(std::size_t) + 1, stream);
  invert<<<grid_for(assignments, 256), 256, 0, stream>>>(order, row.as<std::size_t>(), assignments);
  launched("moe_combine inverse");
  combine_rows<<<grid_for(n, 256), 256, 0, stream>>>(row.as<std::size_t>(), gates, s.top_k, h, y, out, n);
  launched("moe_combine kernel");
}

#define VEDA_MOE_CUDA(T)                                                                                         \
  template void moe_dispatch<T>(const MoeShape&, std::size_t, const std::int64_t*, const T*, T*, cudaStream_t); \
  template void moe_combine<T>(CudaDevice&, const MoeShape&, std::size_t, const std::int64_t*, const T*, const T*, \
                               T*, cudaStream_t);
VEDA_MOE_CUDA(float)
VEDA_MOE_CUDA(double)
#undef VEDA_MOE_CUDA

template void moe_route<float>(CudaDevice&, const MoeShape&, const float*, std::int64_t*, float*, std::int64_t*,
                               std::int64_t*, std::int64_t*, float*, cudaStream_t);
template void moe_route<double>(CudaDevice&, const MoeShape&, const double*, std::int64_t*, double*, std::int64_t*,
                                std::int64_t*, std::int64_t*, double*, cudaStream_t);

}  // namespace veda::detail::cuda
