// Timing for contenders that consume their input (sorts, in-place scans):
// each sample first prepares its input (untimed: restored, or for sorts a
// fresh permutation), then times one call.
// Contenders run in rotation, so drift affects them alike.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"

namespace bench {

struct Fresh {
  std::string name;
  std::function<void()> reset;  // prepares the input; not timed
  std::function<void()> run;
};

// Nanoseconds per call of each contender, after one untimed round.
inline std::vector<Stats> time_fresh(const std::vector<Fresh>& cs, int samples) {
  std::vector<std::vector<double>> t(cs.size());
  for (int s = 0; s <= samples; ++s)
    for (std::size_t c = 0; c < cs.size(); ++c) {
      cs[c].reset();
      const auto t0 = std::chrono::steady_clock::now();
      cs[c].run();
      const auto t1 = std::chrono::steady_clock::now();
      if (s > 0) t[c].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
  std::vector<Stats> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v[v.size() / 2], v.front(), v.back()});
  }
  return out;
}

}  // namespace bench
