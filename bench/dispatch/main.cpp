// dispatch: what a veda call costs over the plain loop on tiny inputs
// (1, 16, 256 floats): a wrapped function, and the same as an expression
// over Arrays, next to a raw oneTBB call. Target: a settled wrapped call
// (into, or returning a new vector) within 25 ns of the plain loop.
#include <algorithm>
#include <cstdio>

#include "bench/common/bench.hpp"
#include "bench/dispatch/contenders.hpp"
#include "veda/runtime.hpp"

int main(int argc, char** argv) {
  using namespace bench;
  const Options opt = Options::parse(argc, argv);
  std::printf("# dispatch: per-call overhead on tiny inputs\n%s\n", machine_line().c_str());
  veda::init();
  Table t("per-call time, median ns (interleaved samples)",
          {"n", "plain loop", "veda into", "overhead", "plain + new vector", "veda returning", "overhead",
           "veda expression", "overhead", "raw oneTBB static"});
  double worst_overhead = 0;  // ns
  for (std::size_t n : {1, 16, 256}) {
    dispatch::Data d(n);
    for (int i = 0; i < 2000; ++i) {  // settle the decisions
      dispatch::veda_into(d);
      dispatch::veda_assign(d);
    }
    using Fn = void (*)(dispatch::Data&);
    const std::vector<Fn> fns{dispatch::plain,       dispatch::veda_into,   dispatch::plain_return,
                              dispatch::veda_return, dispatch::veda_assign, dispatch::tbb_static};
    std::vector<std::function<void()>> runners;
    std::vector<int> batch;
    for (Fn f : fns) {
      runners.push_back([f, &d] { f(d); });
      batch.push_back(calibrate_batch(runners.back(), 2e6));
    }
    const auto s = measure_interleaved(runners, opt.quick ? 7 : 21, batch);
    worst_overhead = std::max({worst_overhead, s[1].median - s[0].median, s[3].median - s[2].median});
    t.add({std::to_string(n), fmt(s[0].median, 1), fmt(s[1].median, 1), fmt(s[1].median - s[0].median, 1),
           fmt(s[2].median, 1), fmt(s[3].median, 1), fmt(s[3].median - s[2].median, 1), fmt(s[4].median, 1),
           fmt(s[4].median - s[0].median, 1), fmt(s[5].median, 1)});
  }
  t.print();
  write_json(opt.json_path, "dispatch", {t}, {},
             {{"settled wrapped-call overhead over a plain loop (worst of into and returning, 1, 16, 256 floats)",
               fmt(worst_overhead, 1) + " ns", "<= 25 ns", worst_overhead <= 25}});
  dispatch::veda_release();
  veda::shutdown();
  return 0;
}
