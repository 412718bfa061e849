#include "runtime/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace veda::detail {
namespace {

// Working sets up to this size are treated as cache-resident: no DRAM term,
// but a parallel tier pays to move the other threads' share between cores.
constexpr double kInCacheBytes = 8.0 * (1 << 20);
constexpr double kCallUs = 0.02;             // an inline call's own cost
constexpr double kStagedMin = 256.0 * 1024;  // smaller copies skip staging
constexpr double kChunkBytes = 4.0 * (1 << 20);
// A static partition gives each thread one fixed share: a worker that starts
// late (a wake-up, or a virtual machine running it on the caller's core)
// delays the whole call, while the auto partitioner rebalances. Static pays
// this risk on its parallel body; it still wins short loops, where its
// cheaper fork-join matters more.
constexpr double kStaticImbalance = 0.05;

double xfer_us(double bytes, double gbps) { return bytes <= 0 ? 0 : bytes / gbps * 1e-3; }

}  // namespace

double h2d_time_us(const GpuProfile& g, double bytes, bool pinned) {
  if (bytes <= 0) return 0;
  return xfer_us(bytes, pinned ? g.h2d_pinned_gbps : bytes <= kStagedMin ? g.h2d_pageable_gbps : g.h2d_staged_gbps);
}
double d2h_time_us(const GpuProfile& g, double bytes, bool pinned) {
  if (bytes <= 0) return 0;
  return xfer_us(bytes, pinned ? g.d2h_pinned_gbps : bytes <= kStagedMin ? g.d2h_pageable_gbps : g.d2h_staged_gbps);
}
double peer_time_us(const GpuProfile& to, double bytes, int from_slot) {
  const auto& in = to.peer_in_gbps;
  double rate = 0;
  if (from_slot >= 0) {
    if (static_cast<std::size_t>(from_slot) < in.size()) rate = in[static_cast<std::size_t>(from_slot)];
  } else {
    for (double r : in)
      if (r > 0 && (rate == 0 || r < rate)) rate = r;
  }
  if (rate > 0) return xfer_us(bytes, rate);
  return xfer_us(bytes, to.d2h_pinned_gbps) + xfer_us(bytes, to.h2d_pinned_gbps);
}
double copy_in_us(const GpuProfile& g, const CostRequest& r) {
  return h2d_time_us(g, static_cast<double>(r.h2d_bytes), r.host_pinned) +
         peer_time_us(g, static_cast<double>(r.peer_bytes));
}

namespace {

// Compute cost of one element on one CPU thread, data in cache.
double cpu_elem_ns(const MachineProfile& p, const CostRequest& r) {
  if (r.cpu_ns_per_elem > 0) return r.cpu_ns_per_elem;
  // A scalar user function rarely runs at FMA peak; a quarter is typical.
  if (r.flops_per_elem > 0) return r.flops_per_elem / (0.25 * p.cpu.fma_gflops_per_thread);
  return p.cpu.map_ns_per_elem * std::max(1.0, r.bytes_per_elem / 12.0);
}

// The same element on the GPU: the CPU cost converted to flops when no hint
// says otherwise, at half the device's FP32 rate, or its bandwidth.
double gpu_elem_ns(const MachineProfile& p, const CostRequest& r, double cpu_ns) {
  const double flops = r.flops_per_elem > 0 ? r.flops_per_elem : cpu_ns * 0.25 * p.cpu.fma_gflops_per_thread;
  return std::max(flops / (0.5 * p.gpu.fp32_gflops), r.bytes_per_elem / p.gpu.device_bw_gbps);
}

struct Parts {
  double overhead = 0, transfer = 0, body = 0;
};

Estimate make(Tier t, const Parts& parts) {
  Estimate e;
  e.tier = t;
  e.transfer_us = parts.transfer;
  e.overhead_us = parts.overhead;
  e.total_us = parts.overhead + parts.transfer + parts.body;
  return e;
}

void element_wise(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out) {
  const double n = static_cast<double>(r.n);
  const double ws = n * r.bytes_per_elem;
  const bool in_cache = ws <= kInCacheBytes;
  const double c = cpu_elem_ns(p, r);
  const double T = std::max(1, r.threads);
  const double back = p.gpu.present ? d2h_time_us(p.gpu, static_cast<double>(r.cpu_d2h_bytes), r.host_pinned) : 0;
  const double wake = r.idle_us > p.cpu.tbb_idle_us ? p.cpu.tbb_wake_us : 0;
  const double serial_mem = (in_cache ? 0 : ws / p.cpu.bw_one_gbps) * 1e-3;
  const double par_mem = ws / p.cpu.bw_all_gbps * (in_cache ? (T - 1) / T : 1.0) * 1e-3;
  const double serial_body = std::max(n * c * 1e-3, serial_mem);
  const double par_body = std::max(n * c / T * 1e-3, par_mem);
  for (Tier t : {Tier::Serial, Tier::TbbStatic, Tier::TbbAuto, Tier::CpuImpl}) {
    if (!(r.tiers & tier_bit(t))) continue;
    const bool parallel = t == Tier::TbbStatic || t == Tier::TbbAuto;
    Parts parts;
    parts.transfer = back;
    parts.overhead = parallel ? (t == Tier::TbbStatic ? p.cpu.tbb_static_us : p.cpu.tbb_auto_us) + wake : kCallUs;
    parts.body = parallel ? par_body * (t == Tier::TbbStatic ? 1 + kStaticImbalance : 1.0) : serial_body;
    Estimate e = make(t, parts);
    e.memory_us = parallel ? par_mem : serial_mem;
    e.wake_us = parallel ? wake : 0;
    if (parallel && r.threads <= 1) {
      e.eligible = false;
      e.note = "one CPU thread";
    }
    out.push_back(e);
  }
  const double g_elem = gpu_elem_ns(p, r, c);
  // Host memory the transfers touch: pageable data is read and written once
  // more by the staging copy.
  const double host_traffic = xfer_us(static_cast<double>(r.h2d_bytes + r.d2h_bytes) * (r.host_pinned ? 1 : 2),
                                      p.cpu.bw_all_gbps);
  const double in = copy_in_us(p.gpu, r);
  const double back_out = d2h_time_us(p.gpu, static_cast<double>(r.d2h_bytes), r.host_pinned);
  for (Tier t : {Tier::Cuda, Tier::CudaImpl}) {
    if (!(r.tiers & tier_bit(t))) continue;
    out.push_back(make(t, {p.gpu.launch_us + r.gpu_setup_us, in + back_out, n * g_elem * 1e-3}));
    out.back().host_traffic_us = host_traffic;
  }
  if (r.tiers & tier_bit(Tier::CoExec)) {
    Estimate e;  // filled in by choose(), once history has corrected both sides
    e.tier = Tier::CoExec;
    e.n = n;
    e.gpu_devices = std::max(1, r.gpu_devices);
    e.eligible = false;
    out.push_back(e);
  }
  if (r.tiers & tier_bit(Tier::CudaStreamed)) {
    // Chunks overlap: the slowest of copy-in, kernel and copy-out dominates,
    // plus one chunk's trip to fill the pipeline.
    const double moved = static_cast<double>(r.h2d_bytes + r.d2h_bytes);
    const double in_s = xfer_us(static_cast<double>(r.h2d_bytes), p.gpu.h2d_staged_gbps);
    const double out_s = xfer_us(static_cast<double>(r.d2h_bytes), p.gpu.d2h_staged_gbps);
    const double fill = xfer_us(kChunkBytes, p.gpu.h2d_staged_gbps) + xfer_us(kChunkBytes, p.gpu.d2h_staged_gbps);
    // (operands on another device come to the host first: the chunks are read there)
    const double pull = d2h_time_us(p.gpu, static_cast<double>(r.peer_bytes), false);
    Estimate e = make(Tier::CudaStreamed, {p.gpu.launch_us + fill, pull + std::max(in_s, out_s),
                                           std::max(0.0, n * g_elem * 1e-3 - std::max(in_s, out_s))});
    e.host_traffic_us = host_traffic;
    if (r.d2h_bytes == 0 || moved < 4 * kChunkBytes) {
      e.eligible = false;
      e.note = "too little host data to stream";
    }
    out.push_back(e);
  }
}

// Co-execution, from the best CPU and the best GPU tier (after history
// corrections): split n so both finish together. With t = a + b*n per side,
// the GPU share f solves a_g + b_g*f*n = a_c + b_c*(1-f)*n. With k devices
// of one kind sharing the GPU part equally, each with its own link and
// SMs, b_g is one device's over k; then the devices alone (f = 1) may be
// the split, when the CPU's share would not pay for joining it.
void add_coexec(std::vector<Estimate>& est, bool deterministic) {
  auto co = std::find_if(est.begin(), est.end(), [](const Estimate& e) { return e.tier == Tier::CoExec; });
  if (co == est.end()) return;
  const Estimate *cpu = nullptr, *gpu = nullptr;
  for (const auto& e : est) {
    if (!e.eligible || e.tier == Tier::CoExec) continue;
    const bool on_gpu = tier_device(e.tier) == Device::Gpu;
    if (on_gpu && co->coexec_gpu != Tier::Count && e.tier != co->coexec_gpu) continue;
    const Estimate*& side = on_gpu ? gpu : cpu;
    if (!side || e.total_us < side->total_us) side = &e;
  }
  co->eligible = false;
  if (deterministic) {
    co->note = "off in deterministic mode";
    return;
  }
  if (!cpu || !gpu) {
    co->note = "needs both a CPU and a GPU tier";
    return;
  }
  const double n = std::max(co->n, 1.0);
  const double ac = cpu->overhead_us, bc = (cpu->total_us - ac) / n;
  const int k = co->gpu_devices;
  const double ag = gpu->overhead_us, bg = (gpu->total_us - ag) / n / k;
  double f = (ac - ag + bc * n) / ((bg + bc) * n);
  f = std::clamp(f, 0.0, 1.0);
  if (k > 1 && f >= 0.95) f = 1;
  // Both parts share host memory: the CPU part's traffic plus the GPU part's
  // transfers cannot go faster than the memory system allows.
  const double shared = cpu->memory_us * (1 - f) + gpu->host_traffic_us * f;
  const double cpu_us = f < 1 ? ac + bc * (1 - f) * n : 0;
  const double t = std::max({ag + bg * f * n, cpu_us, shared}) + kCoExecJoinUs + co->join_us;
  co->total_us = t;
  co->overhead_us = ag + kCoExecJoinUs;
  co->transfer_us = gpu->transfer_us * f / k;
  co->gpu_fraction = f;
  if (t < kCoExecGain * std::min(cpu->total_us, gpu->total_us) && f > 0.05 && (f < 0.95 || k > 1)) {
    co->eligible = true;
  } else {
    co->note = "one side alone is predicted faster";
  }
}

// Deterministic mode: one CPU GEMM whatever the thread count, and the one
// whose summation order does not depend on it: cpu-tiled splits only rows and
// columns among threads. OpenBLAS gives other bits with another thread count
// or kernel set (seen with 1 vs 2 threads on an AVX2 EPYC).
void one_cpu_gemm(std::vector<Estimate>& est) {
  const bool tiled = std::any_of(est.begin(), est.end(), [](const Estimate& e) { return e.tier == Tier::CpuTiled && e.eligible; });
  if (!tiled) return;
  for (auto& e : est)
    if (e.tier == Tier::CpuBlas && e.eligible) {
      e.eligible = false;
      e.note = "deterministic mode: cpu-tiled for every thread count";
    }
}

}  // namespace

std::vector<Estimate> estimate(const MachineProfile& p, const CostRequest& r) {
  std::vector<Estimate> out;
  if (r.op == OpClass::Gemm) gemm_estimates(p, r, out);
  else if (r.op == OpClass::Spmv) spmv_estimates(p, r, out);
  else if (r.op == OpClass::Attention) attention_estimates(p, r, out);
  else if (r.op == OpClass::Sort || r.op == OpClass::Scan || r.op == OpClass::Transpose)
    sort_scan_transpose_estimates(p, r, out);
  else element_wise(p, r, out);  // Map, Kernel, Reduce share the element-wise shape
  for (auto& e : out) {
    const Device d = tier_device(e.tier);
    if (d == Device::Gpu && (!r.gpu_ok || !p.gpu.present)) {
      e.eligible = false;
      e.note = r.gpu_note.empty() ? "no usable GPU" : r.gpu_note;
    } else if (d == Device::Cpu && !r.cpu_ok) {
      e.eligible = false;
      e.note = r.cpu_note;
    } else if (d == Device::Gpu && e.eligible && e.tier != Tier::CudaStreamed && r.device_need > r.device_room) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "needs %.0f MiB of device memory, %.0f MiB free", r.device_need / 1048576.0,
                    r.device_room / 1048576.0);
      e.eligible = false;
      e.note = buf;
    }
  }
  return out;
}

Choice choose(std::vector<Estimate> est, const HistoryView* hist, const ChoiceContext& ctx) {
  Choice c;
  c.why.forced = ctx.forced;
  const bool learn = hist && !ctx.deterministic;
  auto h = [&](Tier t) -> const TierHistory& { return (*hist)[static_cast<std::size_t>(t)]; };
  if (learn)
    for (auto& e : est)
      if (e.eligible && h(e.tier).samples >= kMinSamples) {
        e.total_us *= h(e.tier).correction;
        e.overhead_us *= h(e.tier).correction;
        e.transfer_us *= h(e.tier).correction;
        e.from_history = true;
      }
  add_coexec(est, ctx.deterministic);
  if (ctx.deterministic) one_cpu_gemm(est);
  const Estimate* best = nullptr;
  for (const auto& e : est)
    if (e.eligible && (!best || e.total_us < best->total_us)) best = &e;
  if (!best) {  // nothing eligible cannot happen for real requests; stay safe
    c.tier = Tier::Serial;
    c.settled = true;
    c.estimates = std::move(est);
    return c;
  }
  c.tier = best->tier;
  c.gpu_fraction = best->gpu_fraction;
  c.gpu_devices = best->gpu_devices;
  const Estimate* explore = nullptr;
  // An unmeasured tier's time as exploration judges it: without waking the
  // workers where the work outweighs the fork-join (see worth_trying).
  auto judged = [](const Estimate& e) {
    const double fork = e.overhead_us - e.wake_us, awake = e.total_us - e.wake_us;
    return awake - fork >= fork ? awake : e.total_us;
  };
  // How far behind the best a tier may be tried: kProfileDoubt when its
  // `runs` runs (one exploration, or a re-measurement's kRefreshRuns) cost
  // under kCheapExploreUs more than the best, else 1.
  auto cheap = [&](const Estimate& e, int runs) {
    return (e.total_us - best->total_us) * runs <= kCheapExploreUs ? kProfileDoubt : 1.0;
  };
  if (learn) {
    // How far off the model is here, by what this bucket has measured.
    double off = 1;
    for (const auto& e : est)
      if (e.eligible && h(e.tier).samples > 0) off = std::max({off, h(e.tier).correction, 1 / h(e.tier).correction});
    // Judged without waking the workers where the work outweighs the
    // fork-join: serial calls keep them asleep, so counting the wake-up
    // would keep a parallel tier unmeasured for good, while in a stream only
    // the first call pays it (the scheduler then runs a trial, back to back:
    // follow_trial in scheduler.cpp). Where it does not, no stream would pay.
    auto worth_trying = [&](const Estimate& e) {
      return judged(e) <= kExploreBand * std::max(cheap(e, 1), std::min(off, kProfileDoubt)) * best->total_us;
    };
    for (const auto& e : est)
      if (e.eligible && &e != best && h(e.tier).samples < kMinSamples && h(e.tier).explored < kMaxExplore &&
          worth_trying(e) && (!explore || e.total_us < explore->total_us))
        explore = &e;
  }
  // A measured runner-up whose samples are old is re-measured: the machine
  // may have changed (load, frequency, other runtimes' threads), and history
  // loaded from an earlier run may have been measured on a busy machine.
  // An unconfirmed one (few samples, or an earlier run's only) is judged by
  // the better of its measured and analytic times, so that one slow run, or
  // a busy earlier process, cannot keep it out for good.
  // A tier whose newest runs are much slower than its earlier ones (a burst
  // of load while it ran: the calls moved to another tier, and it has not
  // run since) is judged by its earlier runs, so that however slow the
  // burst made it, it is re-measured; within kProfileDoubt of the best by
  // its newest runs, which bounds what re-measuring it can cost.
  bool refresh = false;
  auto slowed = [&](const Estimate& e) {
    const TierHistory& th = h(e.tier);
    return th.best_kept > 0 && th.best_kept * kExploreBand < th.correction;
  };
  auto unconfirmed = [&](const Estimate& e) {
    const TierHistory& th = h(e.tier);
    return th.samples < kConfirmSamples || th.seeded || th.switched_only;
  };
  auto reach = [&](const Estimate& e) {
    const TierHistory& th = h(e.tier);
    if (unconfirmed(e)) return th.correction > 1 ? e.total_us / th.correction : e.total_us;
    return slowed(e) ? e.total_us / th.correction * th.best_kept : e.total_us;
  };
  // An earlier run's samples keep a tier out only beyond what a profile may
  // be off by (kProfileDoubt): that run may have been disturbed throughout.
  auto doubt = [&](const Estimate& e) { return h(e.tier).seeded ? kProfileDoubt : cheap(e, kRefreshRuns); };
  auto within = [&](const Estimate& e) {
    return reach(e) <= kExploreBand * doubt(e) * best->total_us &&
           (!slowed(e) || e.total_us <= kExploreBand * kProfileDoubt * best->total_us);
  };
  // A re-measurement under way goes first: its runs must come back to back,
  // or each would be one right after another tier's, which confirms nothing
  // (two such tiers took turns for good, each run after the other's).
  auto before = [&](const Estimate& a, const Estimate& b) {
    const bool a_due = h(a.tier).refresh > 0, b_due = h(b.tier).refresh > 0;
    return a_due != b_due ? a_due : reach(a) < reach(b);
  };
  // A stale runner-up is re-measured once the bucket's calls since its last
  // run outweigh what that costs (kRefreshShare, halved for each
  // re-measurement since it was last the best); an unconfirmed one
  // whatever the cost, as its figures may be one disturbed run's, which
  // would make that cost look larger than it is.
  auto paid = [&](const Estimate& e, double t) {
    const TierHistory& th = h(e.tier);
    return (t - best->total_us) * kRefreshRuns * (1 << th.backoff) <= kRefreshShare * th.busy_since_us;
  };
  // An unconfirmed one that the model puts clearly ahead of the best is
  // also re-measured before it is stale, once that is paid for at its
  // measured time: one slow serial run of a short call (0.74 us; 0.09 a
  // call back to back) left a bucket on tbb-static at 0.5 us a call for all
  // of kConfirmNs, as tbb-static's runs kept the workers awake.
  auto contradicted = [&](const Estimate& e) {
    return unconfirmed(e) && h(e.tier).samples >= kMinSamples && reach(e) * kExploreBand < best->total_us &&
           paid(e, e.total_us);
  };
  auto due = [&](const Estimate& e) {
    const TierHistory& th = h(e.tier);
    return th.refresh > 0 || (th.stale && (unconfirmed(e) || paid(e, reach(e)))) || contradicted(e);
  };
  if (learn && !explore)
    for (const auto& e : est)
      if (e.eligible && &e != best && due(e) && within(e) &&
          (!explore || before(e, *explore))) {
        explore = &e;
        refresh = true;
      }
  if (explore) {
    c.tier = explore->tier;
    c.gpu_fraction = explore->gpu_fraction;
    c.gpu_devices = explore->gpu_devices;
    c.explored = true;
    c.refreshed = refresh;
    const TierHistory& th = h(explore->tier);
    c.why.kind = refresh ? Reason::Kind::Refresh : Reason::Kind::Explore;
    c.why.tier = explore->tier;
    c.why.best = best->tier;
    c.why.ratio = static_cast<float>((refresh ? reach(*explore) : judged(*explore)) / std::max(best->total_us, 1e-9));
    c.why.doubt = th.seeded                      ? Reason::Doubt::EarlierRun
                  : th.switched_only             ? Reason::Doubt::AfterAnother
                  : th.samples < kConfirmSamples ? Reason::Doubt::FewRuns
                  : slowed(*explore)             ? Reason::Doubt::Slowed
                                                 : Reason::Doubt::Old;
    c.why.wake_aside = !refresh && judged(*explore) < explore->total_us;
  } else {
    c.settled = !learn || h(best->tier).samples >= kMinSamples;
    c.why.kind = Reason::Kind::Fastest;
    c.why.tier = best->tier;
    c.why.all_on_device = ctx.all_on_device;
  }
  c.estimates = std::move(est);
  return c;
}

}  // namespace veda::detail
