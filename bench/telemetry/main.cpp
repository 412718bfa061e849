// telemetry: what recording costs per call. Tiny calls (veda::sum over 16
// floats, a 3-stage par_iter pipeline over 64) with telemetry off and on,
// in alternating runtimes (init/shutdown between blocks, 7 blocks each),
// next to the plain loop. Target: off costs nothing measurable, i.e. the
// off column matches the veda overhead of bench_dispatch.
#include <cstdio>
#include <numeric>
#include <vector>

#include "bench/common/bench.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;

float plain_sum(const std::vector<float>& x) { return std::accumulate(x.begin(), x.end(), 0.0f); }
}  // namespace

int main(int argc, char** argv) {
  const Options opt = Options::parse(argc, argv);
  std::printf("# telemetry: per-call cost of recording\n%s\n", machine_line().c_str());
  std::vector<float> x16(16, 1.0f), x64(64, 0.5f);
  volatile float sink = 0;
  auto sum_call = [&] { sink = veda::sum(x16); };
  auto pipe_call = [&] {
    sink = veda::par_iter(x64).map([](float v) { return v * 2.0f; }).filter([](float v) { return v > 0.5f; }).sum();
  };
  auto plain = [&] { sink = plain_sum(x16); };
  const int blocks = opt.quick ? 3 : 7;
  std::vector<double> off_sum, on_sum, off_pipe, on_pipe, base;
  for (int b = 0; b < blocks; ++b)
    for (bool on : {false, true}) {
      veda::init(veda::Config::builder().telemetry(on).build());
      for (int i = 0; i < 2000; ++i) {
        sum_call();
        pipe_call();
      }
      (on ? on_sum : off_sum).push_back(measure(sum_call, 9, 20000).median);
      (on ? on_pipe : off_pipe).push_back(measure(pipe_call, 9, 5000).median);
      if (!on) base.push_back(measure(plain, 9, 20000).median);
      veda::shutdown();
    }
  Table t("median ns per call (median of per-block medians)",
          {"call", "plain loop", "telemetry off", "telemetry on", "on - off"});
  t.add({"sum, 16 floats", fmt(median_of(base), 1), fmt(median_of(off_sum), 1), fmt(median_of(on_sum), 1),
         fmt(median_of(on_sum) - median_of(off_sum), 1)});
  t.add({"par_iter map/filter/sum, 64 floats", "-", fmt(median_of(off_pipe), 1), fmt(median_of(on_pipe), 1),
         fmt(median_of(on_pipe) - median_of(off_pipe), 1)});
  t.print();
  write_json(opt.json_path, "telemetry", {t});
  return 0;
}
