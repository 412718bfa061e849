// Shared by the examples: time a call once veda has settled on a tier, and
// print where the latest call ran and why.
#pragma once

#include <veda/veda.hpp>

#include <chrono>
#include <cstdio>

namespace example {

// Prints the calling thread's latest decision (and a plan's segments).
inline void report(const char* what, double us) {
  const veda::Decision d = veda::last_decision();
  std::printf("%-36s %-4s %-18s %12.1f us  %s\n", what, veda::to_string(d.device).c_str(), d.tier.c_str(), us,
              d.reason.c_str());
  if (d.segments.size() > 1)
    for (const auto& s : d.segments)
      std::printf("%-36s   segment: %s/%s  %s\n", "", veda::to_string(s.device).c_str(), s.tier.c_str(),
                  s.reason.c_str());
}

// Runs f `warm` times so veda has measured its candidates, then times one call.
template <class F>
double settled_us(F&& f, int warm = 20) {
  for (int i = 0; i < warm; ++i) f();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace example
