// Co-execution (the cpu+gpu tier) of one call over an index range, shared by
// veda::gpu maps and par_iter phases (nvcc-compiled files only).
//
// Contract: coexec_parts runs [0, g) in equal shares on the devices
// gpu_bridge::share_devices gives the plan (the calling thread's first),
// each share on a helper thread holding its device, and [g, n) on the
// calling thread with the CPU's workers. A share whose device fails
// recoverably (out of memory, a fault) is redone on the CPU after the
// others; any other exception reaches the caller once every helper has
// joined. Returns the parts' results in source order: the devices' shares,
// then the CPU's (each present only when its range was not empty; at least
// one part).
//
// Thread-safety: on_device runs on several helper threads at once, each
// with its own disjoint range; on_cpu runs on the calling thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "veda/detail/dispatch.hpp"
#include "veda/detail/gpu_bridge.hpp"
#include "veda/runtime.hpp"

namespace veda::detail {

// The CPU's part of a co-executed call: len elements split statically among
// the workers (the devices' shares are already sized to finish with it).
inline Plan coexec_cpu_plan(Runtime& rt, Plan p, std::size_t len) {
  const auto threads = static_cast<std::size_t>(std::max(1, rt.config().threads()));
  p.tier = threads > 1 ? Tier::TbbStatic : Tier::Serial;
  p.grain = std::max<std::size_t>(1, (len + threads - 1) / threads);
  return p;
}

// on_device(lo, hi) and on_cpu(lo, hi) compute [lo, hi) and return a Part.
template <class Part, class OnDevice, class OnCpu>
std::vector<Part> coexec_parts(Runtime& rt, const Plan& p, std::size_t g, std::size_t n, const OnDevice& on_device,
                               const OnCpu& on_cpu) {
  const std::vector<DeviceShare> shares = gpu_bridge::share_devices(rt, p);
  struct Release {
    Runtime& rt;
    const std::vector<DeviceShare>& shares;
    ~Release() { gpu_bridge::shares_done(rt, shares); }
  } release{rt, shares};
  const std::size_t k = shares.size();  // at least one: the calling thread's device
  auto lo = [&](std::size_t i) { return g * i / k; };
  std::vector<std::optional<Part>> device_parts(k);
  std::vector<std::exception_ptr> errors(k);
  std::vector<std::thread> helpers;
  struct Join {
    std::vector<std::thread>& ts;
    ~Join() {
      for (auto& t : ts)
        if (t.joinable()) t.join();
    }
  } join{helpers};
  for (std::size_t i = 0; i < k; ++i)
    if (lo(i + 1) > lo(i))
      helpers.emplace_back([&, i] {
        copy_without_workers();  // the CPU part holds the workers
        gpu_bridge::set_thread_device(shares[i].slot);
        try {
          device_parts[i].emplace(on_device(lo(i), lo(i + 1)));
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
  std::optional<Part> cpu_part;
  if (g < n || helpers.empty()) cpu_part.emplace(on_cpu(g, n));
  for (auto& t : helpers) t.join();
  for (std::size_t i = 0; i < k; ++i)
    if (errors[i]) {
      if (!recoverable_device_error(errors[i])) std::rethrow_exception(errors[i]);
      device_parts[i].emplace(on_cpu(lo(i), lo(i + 1)));  // the CPU takes this share too
    }
  std::vector<Part> parts;
  parts.reserve(k + 1);
  for (auto& d : device_parts)
    if (d) parts.push_back(std::move(*d));
  if (cpu_part) parts.push_back(std::move(*cpu_part));
  return parts;
}

// The GPU's count of a co-executed call's n elements, from the plan's share.
inline std::size_t coexec_gpu_count(const Plan& p, std::size_t n) {
  return std::min(n, static_cast<std::size_t>(std::llround(p.gpu_fraction * static_cast<double>(n))));
}

}  // namespace veda::detail
