#include "backends/cuda/reduce_axis.hpp"

#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_check.hpp"
#include "veda/detail/axis_ops.hpp"
#include "veda/error.hpp"

namespace veda::detail::cuda {
namespace {
constexpr unsigned kWarp = 32, kRowBlock = 256;  // rows: 8 warps a block, a warp per (row, segment)
constexpr unsigned kColRows = 8;                 // strided: a 32 x 8 block per (32 columns, segment)
constexpr std::size_t kMaxSegs = 1024;
constexpr std::size_t kStateBytes = 16;  // the largest state: an arg op's (value, index)

// How the axis is cut into segments: enough independent work for a large
// GPU, at least a few thousand elements per segment. It depends only on the
// shape, so the merge order (and a sum's bits) does too.
struct Split {
  bool rows;                 // inner == 1: a contiguous axis
  std::size_t groups;        // rows: outer; strided: outer x column groups of 32
  std::size_t segs, seg_len; // segments along the axis, elements (rows) in each
};

Split split(std::size_t outer, std::size_t len, std::size_t inner) {
  Split sp{};
  sp.rows = inner == 1;
  sp.groups = sp.rows ? outer : outer * ((inner + kWarp - 1) / kWarp);
  const std::size_t per_seg = sp.rows ? 2048 : 256, target = sp.rows ? 8192 : 2048;
  const std::size_t want = (len + per_seg - 1) / per_seg, room = std::max<std::size_t>(1, target / std::max<std::size_t>(sp.groups, 1));
  sp.segs = std::clamp<std::size_t>(std::min(want, room), 1, kMaxSegs);
  sp.seg_len = (len + sp.segs - 1) / sp.segs;
  if (sp.seg_len) sp.segs = (len + sp.seg_len - 1) / sp.seg_len;  // no empty segments
  return sp;
}

template <class S>
__device__ S shfl_down(const S& s, int offset) {
  if constexpr (requires { s.i; }) return {__shfl_down_sync(~0u, s.v, offset), __shfl_down_sync(~0u, s.i, offset)};
  else return __shfl_down_sync(~0u, s, offset);
}

template <class Op, class T>
__global__ void rows_kernel(const T* in, typename Op::State* partial, const typename Op::Center* center,
                            std::size_t outer, std::size_t len, std::size_t segs, std::size_t seg_len) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (warp >= outer * segs) return;  // a whole warp leaves: the shuffles below stay full
  const std::size_t o = warp / segs, seg = warp % segs;
  const std::size_t j0 = seg * seg_len, j1 = std::min(len, j0 + seg_len);
  typename Op::Center c{};
  if constexpr (Op::kCentered) c = center[o];
  typename Op::State s = Op::identity();
  const T* x = in + o * len;
#pragma unroll 4
  for (std::size_t j = j0 + lane; j < j1; j += kWarp) Op::add(s, x[j], static_cast<std::int64_t>(j), c);
  for (int off = kWarp / 2; off > 0; off /= 2) {
    const typename Op::State right = shfl_down(s, off);
    Op::merge(s, right);
  }
  if (lane == 0) partial[o * segs + seg] = s;
}

template <class Op, class T>
__global__ void cols_kernel(const T* in, typename Op::State* partial, const typename Op::Center* center,
                            std::size_t len, std::size_t inner, std::size_t col_groups, std::size_t segs,
                            std::size_t seg_len) {
  __shared__ typename Op::State part[kColRows][kWarp];
  const std::size_t b = blockIdx.x, seg = b % segs, g = b / segs;
  const std::size_t o = g / col_groups, k = g % col_groups * kWarp + threadIdx.x;
  typename Op::State s = Op::identity();
  if (k < inner) {
    typename Op::Center c{};
    if constexpr (Op::kCentered) c = center[o * inner + k];
    const T* x = in + o * len * inner + k;
    const std::size_t j1 = std::min(len, (seg + 1) * seg_len);
    for (std::size_t j = seg * seg_len + threadIdx.y; j < j1; j += kColRows)
      Op::add(s, x[j * inner], static_cast<std::int64_t>(j), c);
  }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || k >= inner) return;
  for (unsigned y = 1; y < kColRows; ++y) Op::merge(s, part[y][threadIdx.x]);
  partial[(o * inner + k) * segs + seg] = s;
}

// Each output merges its segments left to right and is finished.
template <class Op, class R>
__global__ void finish_kernel(const typename Op::State* partial, R* out, std::size_t outputs, std::size_t segs,
                              AxisOp op, std::int64_t len, int ddof) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < outputs;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    typename Op::State s = partial[i * segs];
    for (std::size_t t = 1; t < segs; ++t) Op::merge(s, partial[i * segs + t]);
    out[i] = axis::finish<R>(op, s, len, ddof);
  }
}

unsigned grid(std::size_t blocks) {
  if (blocks > 0x7fffffffu) throw InvalidArgument("veda: reduction along an axis too large for one GPU launch");
  return static_cast<unsigned>(std::max<std::size_t>(blocks, 1));
}

template <class Op, class T, class R>
void pass(AxisOp op, const T* in, R* out, const typename Op::Center* center, void* temp, std::size_t outer,
          std::size_t len, std::size_t inner, int ddof, cudaStream_t s) {
  const Split sp = split(outer, len, inner);
  auto* partial = static_cast<typename Op::State*>(temp);
  if (sp.rows) {
    const std::size_t threads = outer * sp.segs * kWarp;
    rows_kernel<Op><<<grid((threads + kRowBlock - 1) / kRowBlock), kRowBlock, 0, s>>>(in, partial, center, outer, len,
                                                                                      sp.segs, sp.seg_len);
  } else {
    cols_kernel<Op><<<grid(sp.groups * sp.segs), dim3(kWarp, kColRows), 0, s>>>(
        in, partial, center, len, inner, sp.groups / outer, sp.segs, sp.seg_len);
  }
  const std::size_t outputs = outer * inner;
  finish_kernel<Op><<<grid(std::min<std::size_t>((outputs + 255) / 256, 1 << 16)), 256, 0, s>>>(
      partial, out, outputs, sp.segs, op, static_cast<std::int64_t>(len), ddof);
  launched("veda: reduction along an axis (kernel launch)");
}

}  // namespace

std::size_t reduce_axis_temp_bytes(std::size_t outer, std::size_t len, std::size_t inner) {
  return outer * inner * split(outer, len, inner).segs * kStateBytes;
}

void reduce_axis_device(AxisOp op, ScalarType type, const void* in, void* out, void* temp, std::size_t outer,
                        std::size_t len, std::size_t inner, int ddof, cudaStream_t s) {
  if (outer * inner == 0) return;
  axis::with_type(type, [&]<class T>(T) {
    using S = sum_t<T>;
    if (op == AxisOp::Sum && len == 0) {
      launched(cudaMemsetAsync(out, 0, outer * inner * sizeof(S), s), "veda: sum of an empty axis");
      return;
    }
    axis::for_each_pass<T>(op, out, [&]<class Op, class R>(AxisOp fin, R* o, const typename Op::Center* centers) {
      pass<Op>(fin, static_cast<const T*>(in), o, centers, temp, outer, len, inner, ddof, s);
    });
  });
}

}  // namespace veda::detail::cuda
