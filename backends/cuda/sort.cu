#include "backends/cuda/sort.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace veda::detail::cuda {
namespace {

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535)); }

// Keys (and values) from `in` to `out` by CUB, in either direction.
template <class K, class V>
void radix(CudaDevice& dev, const K* kin, K* kout, const V* vin, V* vout, std::size_t n, bool descending,
           cudaStream_t s) {
  const auto count = static_cast<std::int64_t>(n);
  std::size_t bytes = 0;
  auto call = [&](void* temp) {
    if constexpr (std::is_void_v<V>) {
      return descending ? cub::DeviceRadixSort::SortKeysDescending(temp, bytes, kin, kout, count, 0, int(8 * sizeof(K)), s)
                        : cub::DeviceRadixSort::SortKeys(temp, bytes, kin, kout, count, 0, int(8 * sizeof(K)), s);
    } else {
      return descending
                 ? cub::DeviceRadixSort::SortPairsDescending(temp, bytes, kin, kout, vin, vout, count, 0,
                                                             int(8 * sizeof(K)), s)
                 : cub::DeviceRadixSort::SortPairs(temp, bytes, kin, kout, vin, vout, count, 0, int(8 * sizeof(K)), s);
    }
  };
  check(call(nullptr), "cub::DeviceRadixSort (sizing)");
  PoolBlock temp(dev.pool(), bytes, s);
  launched(call(temp.as<void>()), "cub::DeviceRadixSort");
}

// The unsigned image of a float whose order is the sort's: -0.0 as +0.0,
// NaN (either sign) last in the sort's direction.
template <class F, class U>
__global__ void make_images(const F* keys, U* images, std::uint64_t* pos, std::size_t n, bool descending) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    F x = keys[i];
    U u;
    if (x != x) {
      u = descending ? U(0) : ~U(0);
    } else {
      if (x == F(0)) x = F(0);
      memcpy(&u, &x, sizeof u);
      constexpr U sign = U(1) << (8 * sizeof(U) - 1);
      u = (u & sign) ? ~u : (u | sign);
    }
    images[i] = u;
    pos[i] = i;
  }
}

template <class W>
__global__ void gather(const W* in, W* out, const std::uint64_t* pos, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[pos[i]];
}

// `scratch` holds n elements of W; the caller allocates it before the first
// in-place write, so that no allocation can fail between the keys' gather
// and the values' (a CPU fallback would then see sorted keys, unsorted values).
template <class W>
void gather_in_place(W* data, void* scratch, const std::uint64_t* pos, std::size_t n, cudaStream_t s) {
  auto* tmp = static_cast<W*>(scratch);
  gather<<<blocks_for(n), 256, 0, s>>>(data, tmp, pos, n);
  launched("gather kernel");
  check(cudaMemcpyAsync(data, tmp, n * sizeof(W), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
}

template <class F>
void sort_floats(CudaDevice& dev, F* keys, void* values, std::size_t value_bytes, std::size_t n, bool descending,
                 cudaStream_t s) {
  using U = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
  PoolBlock img(dev.pool(), n * sizeof(U), s), img_sorted(dev.pool(), n * sizeof(U), s);
  PoolBlock pos(dev.pool(), n * sizeof(std::uint64_t), s), pos_sorted(dev.pool(), n * sizeof(std::uint64_t), s);
  PoolBlock scratch(dev.pool(), n * std::max(sizeof(F), value_bytes), s);
  make_images<<<blocks_for(n), 256, 0, s>>>(keys, img.as<U>(), pos.as<std::uint64_t>(), n, descending);
  launched("key image kernel");
  radix<U, std::uint64_t>(dev, img.as<U>(), img_sorted.as<U>(), pos.as<std::uint64_t>(),
                          pos_sorted.as<std::uint64_t>(), n, descending, s);
  const auto* p = pos_sorted.as<std::uint64_t>();
  gather_in_place(keys, scratch.get(), p, n, s);
  if (values && value_bytes == 4) gather_in_place(static_cast<std::uint32_t*>(values), scratch.get(), p, n, s);
  if (values && value_bytes == 8) gather_in_place(static_cast<std::uint64_t*>(values), scratch.get(), p, n, s);
}

template <class K>
void sort_integers(CudaDevice& dev, K* keys, void* values, std::size_t value_bytes, std::size_t n, bool descending,
                   cudaStream_t s) {
  PoolBlock kout(dev.pool(), n * sizeof(K), s);
  auto pairs = [&](auto* v) {
    using V = std::remove_pointer_t<decltype(v)>;
    PoolBlock vout(dev.pool(), n * sizeof(V), s);
    radix<K, V>(dev, keys, kout.as<K>(), v, vout.as<V>(), n, descending, s);
    check(cudaMemcpyAsync(v, vout.as<V>(), n * sizeof(V), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
  };
  if (!values) radix<K, void>(dev, keys, kout.as<K>(), nullptr, nullptr, n, descending, s);
  else if (value_bytes == 4) pairs(static_cast<std::uint32_t*>(values));
  else pairs(static_cast<std::uint64_t*>(values));
  check(cudaMemcpyAsync(keys, kout.as<K>(), n * sizeof(K), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
}

}  // namespace

void sort_device(CudaDevice& dev, ScalarType key_type, void* keys, void* values, std::size_t value_bytes,
                 std::size_t n, bool descending, cudaStream_t s) {
  if (n < 2) return;
  dev.make_current();
  switch (key_type) {
    case ScalarType::F32: return sort_floats(dev, static_cast<float*>(keys), values, value_bytes, n, descending, s);
    case ScalarType::F64: return sort_floats(dev, static_cast<double*>(keys), values, value_bytes, n, descending, s);
    case ScalarType::I32: return sort_integers(dev, static_cast<std::int32_t*>(keys), values, value_bytes, n, descending, s);
    case ScalarType::I64: return sort_integers(dev, static_cast<std::int64_t*>(keys), values, value_bytes, n, descending, s);
    case ScalarType::U32: return sort_integers(dev, static_cast<std::uint32_t*>(keys), values, value_bytes, n, descending, s);
    case ScalarType::U64: return sort_integers(dev, static_cast<std::uint64_t*>(keys), values, value_bytes, n, descending, s);
    default: throw InvalidArgument("veda: no GPU sort for this key type");
  }
}

}  // namespace veda::detail::cuda
