// memory_pool: allocate+free pairs, veda's pool against the upstream it sits
// on, for 256 B ... 256 MiB. Host upstream always; cudaMalloc/cudaFree when a
// GPU is usable. Target: a pool hit pair under 1 us (median).
#include <cstdio>

#include "bench/memory_pool/contenders.hpp"

int main(int argc, char** argv) {
  using namespace bench;
  const Options opt = Options::parse(argc, argv);
  const int samples = opt.quick ? 7 : 21;
  std::printf("# memory_pool: allocate+free pair, median ns (min-max)\n%s\n", machine_line().c_str());
  std::vector<Table> tables;
  Table host("host upstream (aligned_alloc/free) vs veda pool over it",
             {"size", "upstream ns", "veda pool ns", "pool speed-up"});
  const bool gpu = memory_pool::gpu_available();
  Table dev("cudaMalloc/cudaFree vs veda pool over it",
            {"size", "cudaMalloc+cudaFree ns", "veda pool ns", "pool speed-up"});
  for (std::size_t b = 256; b <= (std::size_t{256} << 20); b *= opt.quick ? 16 : 4) {
    const Stats u = memory_pool::upstream_host(b, samples);
    const Stats v = memory_pool::veda_host(b, samples);
    host.add({fmt_bytes(b), fmt(u.median, 1) + " (" + fmt(u.min, 1) + "-" + fmt(u.max, 1) + ")",
              fmt(v.median, 1) + " (" + fmt(v.min, 1) + "-" + fmt(v.max, 1) + ")",
              fmt(u.median / v.median, 1) + "x"});
    if (gpu) {
      const Stats cu = memory_pool::upstream_cuda(b, samples);
      const Stats cv = memory_pool::veda_cuda(b, samples);
      dev.add({fmt_bytes(b), fmt(cu.median, 1), fmt(cv.median, 1), fmt(cu.median / cv.median, 1) + "x"});
    }
  }
  host.print();
  tables.push_back(host);
  if (gpu) {
    dev.print();
    tables.push_back(dev);
  } else {
    std::printf("\n(no usable GPU: cudaMalloc comparison skipped)\n");
  }
  write_json(opt.json_path, "memory_pool", tables);
  return 0;
}
