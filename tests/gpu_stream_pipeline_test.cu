// Contract (gpu): pipelined_map (chunked, overlapped through pinned staging)
// gives exactly the serial copy-compute-copy result, in order, for sizes
// 1, fewer than one chunk, a prime and 10^7+3 elements.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/stream_pipeline.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/runtime.hpp"
#include "veda/telemetry.hpp"

using namespace veda::detail::cuda;

namespace {
__global__ void axpb(const float* x, const float* y, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = 2.0f * x[i] + y[i];
}
void launch(void*, const void* const* in, void* out, std::size_t n, cudaStream_t s) {
  axpb<<<256, 256, 0, s>>>(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                           static_cast<float*>(out), n);
}
}  // namespace

TEST_CASE("pipelined map equals serial map and the CPU") {
  veda::init();
  auto* dev = dynamic_cast<CudaDevice*>(veda::get_runtime().state().device());
  REQUIRE(dev);
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1048583}, std::size_t{10000003}}) {
    CAPTURE(n);
    std::vector<float> x(n), y(n), a(n, -1), b(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 1000);
      y[i] = static_cast<float>(i % 7);
    }
    const PipelineInput in[] = {{x.data(), sizeof(float)}, {y.data(), sizeof(float)}};
    pipelined_map(*dev, in, a.data(), sizeof(float), n, launch, nullptr);
    serial_map(*dev, in, b.data(), sizeof(float), n, launch, nullptr);
    bool ok = true;
    for (std::size_t i = 0; i < n && ok; ++i) ok = a[i] == 2.0f * x[i] + y[i] && b[i] == a[i];
    CHECK(ok);
  }
  CHECK(dev->staging().in_use() == 0);
  veda::shutdown();
}

// Finding 19 of the GPU review: GPU spans of streamed work were recorded on
// the caller's stream (idle meanwhile). Each chunk's kernel is now a span on
// the pipeline stream that ran it: tracks after the four per-thread streams.
TEST_CASE("with telemetry, each streamed chunk's kernel is a span on its pipeline stream") {
  veda::init(veda::Config::builder().telemetry(true).build());
  auto* dev = dynamic_cast<CudaDevice*>(veda::get_runtime().state().device());
  REQUIRE(dev);
  const std::size_t n = 10000003;
  std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
  const PipelineInput in[] = {{x.data(), sizeof(float)}, {y.data(), sizeof(float)}};
  pipelined_map(*dev, in, out.data(), sizeof(float), n, launch, nullptr);
  CHECK(out[n - 1] == 4.0f);
  const std::string trace = veda::telemetry::chrome_trace();
  std::size_t chunks = 0;
  for (std::size_t at = trace.find("streamed chunk"); at != std::string::npos;
       at = trace.find("streamed chunk", at + 1))
    ++chunks;
  CHECK(chunks >= 2);  // 10^7 floats need several 4 MiB chunks
  veda::shutdown();
}
