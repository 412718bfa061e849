// Contract (gpu): gpu_kernel with a real CUDA implementation runs it on the
// device when placed there, moves host and Array operands, and gives the
// same results as the CPU implementation.
#include <doctest/doctest.h>

#include <numeric>

#include "support/device_work.hpp"
#include "veda/gpu_kernel.hpp"

namespace {
__global__ void axpy(const float* x, float* y, float a, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] += a * x[i];
}
auto make() {
  return veda::gpu_kernel(
      [](std::span<const float> x, std::span<float> y, float a) {
        for (std::size_t i = 0; i < x.size(); ++i) y[i] += a * x[i];
      },
      [](std::span<const float> x, std::span<float> y, float a, veda::cuda_stream_t s) {
        axpy<<<128, 256, 0, s>>>(x.data(), y.data(), a, x.size());
      },
      {.placement = veda::Placement::Gpu, .strict = true, .name = "axpy-kernel"});
}
}  // namespace

TEST_CASE("forced onto the GPU: host vectors and Arrays") {
  veda::init();
  auto k = make();
  for (std::size_t n : {std::size_t{1}, std::size_t{4099}, std::size_t{1} << 22}) {
    std::vector<float> x(n), y(n, 1.0f);
    std::iota(x.begin(), x.end(), 0.0f);
    const veda_test::DeviceWork w;
    k(x, y, 2.0f);
    CHECK(veda::last_decision().device == veda::Device::Gpu);
    CHECK(w.launches() > 0);
    bool ok = true;
    for (std::size_t i = 0; i < n && ok; ++i) ok = y[i] == 1.0f + 2.0f * x[i];
    CHECK(ok);
    veda::Array<float> ax(x), ay(std::vector<float>(n, 0.0f));
    const veda_test::DeviceWork wa;
    k(std::as_const(ax), ay, 1.0f);
    CHECK(wa.launches() > 0);
    CHECK(ay.valid_on_device());
    CHECK_FALSE(ay.valid_on_host());
    CHECK(ay.to_vector() == x);
  }
  veda::shutdown();
}
