// transfer (GPU): host<->device bandwidth for pageable memory copied
// directly, pageable memory staged through veda's pinned buffers, and pinned
// memory; then a bandwidth-bound map over host data done serially
// (copy in, kernel, copy out) against veda's chunked, overlapped pipeline.
// Targets: staged >= 80% of pinned from 64 MiB; overlapped >= 1.5x serial
// from 256 MiB.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/stream_pipeline.hpp"
#include "bench/common/bench.hpp"
#include "veda/detail/buffer.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/runtime.hpp"

namespace bench::transfer {
void launch_axpy(void*, const void* const* in, void* out, std::size_t n, cudaStream_t s);
}

int main(int argc, char** argv) {
  using namespace bench;
  using namespace veda::detail;
  const Options opt = Options::parse(argc, argv);
  std::printf("# transfer\n%s\n", machine_line().c_str());
  veda::init();
  auto* dev = dynamic_cast<cuda::CudaDevice*>(veda::get_runtime().state().device());
  if (!dev) {
    std::printf("skipped: no usable GPU (%s)\n", veda::get_runtime().gpu().reason.c_str());
    return 0;
  }
  const int samples = opt.quick ? 5 : 11;
  const auto s = dev->stream();
  auto gbps = [](std::size_t bytes, const Stats& st) { return bytes / st.median; };  // B/ns = GB/s
  std::vector<Table> tables;
  for (bool to_device : {true, false}) {
    Table t(to_device ? "H2D GB/s" : "D2H GB/s",
            {"size", "pageable direct", "pageable staged (veda)", "pinned", "staged / pinned"});
    for (std::size_t mib = 1; mib <= 1024; mib *= opt.quick ? 16 : 4) {
      const std::size_t bytes = mib << 20;
      std::vector<char> host(bytes, 1);
      auto pinned = make_pinned_storage(bytes);
      std::memset(pinned->data, 1, bytes);
      void* d = dev->pool().allocate(bytes, s);
      auto direct = [&] {
        cudaMemcpy(to_device ? d : host.data(), to_device ? static_cast<const void*>(host.data()) : d, bytes,
                   to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
      };
      auto staged = [&] {
        if (to_device) {
          dev->copy_to_device(d, host.data(), bytes, s, false);
          dev->synchronize(s);
        } else {
          dev->copy_to_host(host.data(), d, bytes, s, false);
        }
      };
      auto pin = [&] {
        if (to_device) {
          dev->copy_to_device(d, pinned->data, bytes, s, true);
          dev->synchronize(s);
        } else {
          dev->copy_to_host(pinned->data, d, bytes, s, true);
        }
      };
      const Stats a = measure(direct, samples), b = measure(staged, samples), c = measure(pin, samples);
      t.add({fmt_bytes(bytes), fmt(gbps(bytes, a)), fmt(gbps(bytes, b)), fmt(gbps(bytes, c)),
             fmt(100.0 * c.median / b.median, 0) + "%"});
      dev->pool().deallocate(d, s);
    }
    t.print();
    tables.push_back(t);
  }
  Table ov("map out = 2x + y over host data (float): serial vs overlapped",
           {"elements", "bytes moved", "serial ms", "overlapped ms", "speed-up"});
  for (std::size_t mib : {64, 256, 1024}) {
    if (opt.quick && mib == 1024) continue;
    const std::size_t n = (mib << 20) / sizeof(float);
    std::vector<float> x(n, 1.f), y(n, 2.f), out(n);
    const cuda::PipelineInput in[] = {{x.data(), sizeof(float)}, {y.data(), sizeof(float)}};
    auto serial = [&] { cuda::serial_map(*dev, in, out.data(), sizeof(float), n, transfer::launch_axpy, nullptr); };
    auto overlapped = [&] { cuda::pipelined_map(*dev, in, out.data(), sizeof(float), n, transfer::launch_axpy, nullptr); };
    const Stats a = measure(serial, samples), b = measure(overlapped, samples);
    ov.add({std::to_string(n), fmt_bytes(3 * n * sizeof(float)), fmt(a.median / 1e6), fmt(b.median / 1e6),
            fmt(a.median / b.median) + "x"});
  }
  ov.print();
  tables.push_back(ov);
  write_json(opt.json_path, "transfer", tables);
  veda::shutdown();
  return 0;
}
