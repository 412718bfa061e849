// Contract: decisions are a pure function of (profile, request, history).
// With synthetic profiles checked in under tests/data — this 2-core CPU, and
// the same CPU with an H100 from its datasheet — tiny maps run serially, mid
// sizes on oneTBB, large device-resident data on the GPU, large host-only
// but transfer-bound maps on the CPU, compute-heavy ones on the GPU despite
// transfers; forcing rules lead the reason; history outranks the model and
// exploration is bounded; deterministic mode never explores.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "runtime/cost_model.hpp"

using namespace veda::detail;

namespace {
MachineProfile profile(const char* file) {
  std::ifstream in(std::string(VEDA_TEST_DATA) + "/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return MachineProfile::from_json(ss.str());
}

constexpr std::uint32_t kMap = tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::TbbAuto) |
                               tier_bit(Tier::Cuda) | tier_bit(Tier::CudaStreamed);

// A saxpy-shaped map over host vectors: 2 float inputs, a float result.
CostRequest saxpy(std::size_t n, bool gpu) {
  CostRequest r;
  r.tiers = kMap;
  r.n = n;
  r.bytes_per_elem = 12;
  r.h2d_bytes = 8 * n;
  r.d2h_bytes = 4 * n;
  r.threads = 2;
  r.gpu_ok = gpu;
  r.gpu_note = gpu ? "" : "no usable GPU: no NVIDIA driver";
  return r;
}

Choice decide(const MachineProfile& p, const CostRequest& r, const ChoiceContext& ctx = {},
              const HistoryView* h = nullptr) {
  return choose(estimate(p, r), h, ctx);
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Stale, with the bucket's calls since its last run long enough to pay for
// re-measuring it (kRefreshShare).
void make_stale(TierHistory& h) {
  h.stale = true;
  h.busy_since_us = 1e12;
}
}  // namespace

TEST_CASE("tiny maps run serially, below the TBB break-even") {
  for (const char* f : {"profile_cpu_2core.json", "profile_h100.json"}) {
    const auto p = profile(f);
    for (std::size_t n : {0, 1, 16, 100, 1000}) {
      const Choice c = decide(p, saxpy(n, p.gpu.present));
      CHECK(c.tier == Tier::Serial);
      CHECK(starts(c.reason_text(), "below TBB break-even"));
      CHECK(c.settled);
    }
  }
}

TEST_CASE("a large map that more threads cannot speed up says it is memory-bound, not below the break-even") {
  auto p = profile("profile_cpu_2core.json");
  p.cpu.bw_all_gbps = p.cpu.bw_one_gbps;  // a second thread adds no bandwidth
  for (std::size_t n : {std::size_t{1} << 22, std::size_t{10'000'000}}) {
    CAPTURE(n);
    const Choice c = decide(p, saxpy(n, false));
    CHECK(c.tier == Tier::Serial);
    CHECK(starts(c.reason_text(), "memory-bound"));
  }
  // With the bandwidth a second thread does add, the same call goes parallel.
  CHECK(decide(profile("profile_cpu_2core.json"), saxpy(10'000'000, false)).tier != Tier::Serial);
}

TEST_CASE("mid sizes run on oneTBB") {
  const auto p = profile("profile_cpu_2core.json");
  const Choice c = decide(p, saxpy(std::size_t{1} << 22, false));
  CHECK(c.tier == Tier::TbbAuto);  // long loops: auto rebalances late workers
  CHECK(starts(c.reason_text(), "above TBB break-even"));
  CHECK(has(c.reason_text(), "no usable GPU"));
  // A short parallel loop: the static partitioner's cheaper fork-join wins.
  CostRequest short_loop = saxpy(std::size_t{1} << 14, false);
  short_loop.cpu_ns_per_elem = 2.0;
  CHECK(decide(p, short_loop).tier == Tier::TbbStatic);
}

TEST_CASE("large device-resident data runs on the GPU") {
  const auto p = profile("profile_h100.json");
  CostRequest r = saxpy(std::size_t{1} << 24, true);
  r.h2d_bytes = r.d2h_bytes = 0;  // inputs valid on the device, result stays there
  ChoiceContext ctx;
  ctx.all_on_device = true;
  const Choice c = decide(p, r, ctx);
  CHECK(c.tier == Tier::Cuda);
  CHECK(c.reason_text() == "data resident on device");
}

TEST_CASE("operands on another device count their copy: data resident elsewhere is not free") {
  // A call asking for device 0 over data on device 1 moves it first; until
  // device-to-device rates are calibrated, at the host links' rates.
  const auto p = profile("profile_h100.json");
  CostRequest r = saxpy(std::size_t{1} << 24, true);
  r.h2d_bytes = r.d2h_bytes = 0;
  auto cuda = [&](const CostRequest& q) {
    for (const auto& e : estimate(p, q))
      if (e.tier == Tier::Cuda) return e;
    return Estimate{};
  };
  const Estimate here = cuda(r);
  r.peer_bytes = 8 << 24;  // both inputs on the other device
  const Estimate there = cuda(r);
  const double moved = 8.0 * (1 << 24);
  CHECK(there.transfer_us == doctest::Approx(here.transfer_us + peer_time_us(p.gpu, moved)));
  CHECK(peer_time_us(p.gpu, moved) > h2d_time_us(p.gpu, moved, true));  // through the host: both links
}

TEST_CASE("large host-only but transfer-bound maps stay on the CPU") {
  const auto p = profile("profile_h100.json");
  const Choice c = decide(p, saxpy(std::size_t{1} << 24, true));
  CHECK(tier_device(c.tier) == veda::Device::Cpu);
  CHECK(has(c.reason_text(), "transfer-bound"));
}

TEST_CASE("compute-heavy host maps go to the GPU despite transfers") {
  const auto p = profile("profile_h100.json");
  CostRequest r = saxpy(std::size_t{1} << 24, true);
  r.flops_per_elem = 200;
  const Choice c = decide(p, r);
  CHECK(tier_device(c.tier) == veda::Device::Gpu);
  CHECK(starts(c.reason_text(), "GPU fastest including transfers"));
}

TEST_CASE("without a usable GPU the GPU tiers are ineligible and say why") {
  const auto p = profile("profile_h100.json");
  CostRequest r = saxpy(std::size_t{1} << 24, false);
  r.flops_per_elem = 200;
  const Choice c = decide(p, r);
  CHECK(tier_device(c.tier) == veda::Device::Cpu);
  for (const auto& e : c.estimates)
    if (tier_device(e.tier) == veda::Device::Gpu) {
      CHECK_FALSE(e.eligible);
      CHECK(e.note == "no usable GPU: no NVIDIA driver");
    }
  CHECK(has(c.reason_text(), "no usable GPU: no NVIDIA driver"));
}

TEST_CASE("forcing rules lead the reason") {
  const auto p = profile("profile_h100.json");
  SUBCASE("forced to CPU") {
    CostRequest r = saxpy(std::size_t{1} << 24, false);
    r.flops_per_elem = 200;  // the GPU would win
    r.gpu_note = "CPU placement forced";
    ChoiceContext ctx;
    ctx.forced = "forced to CPU by config (gpu(false))";
    const Choice c = decide(p, r, ctx);
    CHECK(tier_device(c.tier) == veda::Device::Cpu);
    CHECK(starts(c.reason_text(), "forced to CPU by config (gpu(false)); above TBB break-even"));
  }
  SUBCASE("forced to GPU") {
    CostRequest r = saxpy(16, true);  // the CPU would win
    r.cpu_ok = false;
    r.cpu_note = "GPU placement forced";
    ChoiceContext ctx;
    ctx.forced = "forced to GPU by placement option";
    const Choice c = decide(p, r, ctx);
    CHECK(c.tier == Tier::Cuda);
    CHECK(starts(c.reason_text(), "forced to GPU by placement option"));
  }
}

TEST_CASE("one CPU thread: the TBB tiers are ineligible") {
  const auto p = profile("profile_cpu_2core.json");
  CostRequest r = saxpy(std::size_t{1} << 22, false);
  r.threads = 1;
  const Choice c = decide(p, r);
  CHECK(c.tier == Tier::Serial);
  CHECK(starts(c.reason_text(), "serial (one CPU thread)"));
}

TEST_CASE("workers gone idle: the wake-up moves the break-even up") {
  const auto p = profile("profile_cpu_2core.json");
  CostRequest r = saxpy(std::size_t{1} << 14, false);
  r.bytes_per_elem = 12;
  r.cpu_ns_per_elem = 2.0;  // a heavier element: parallel wins when warm
  CHECK(decide(p, r).tier == Tier::TbbStatic);
  r.idle_us = 50000;  // slept for 50 ms
  CHECK(decide(p, r).tier == Tier::Serial);
}

TEST_CASE("history outranks the analytic estimate") {
  const auto p = profile("profile_cpu_2core.json");
  const CostRequest r = saxpy(std::size_t{1} << 22, false);
  HistoryView h{};
  h[static_cast<int>(Tier::Serial)] = {4, 1.0, 0};
  h[static_cast<int>(Tier::TbbStatic)] = {4, 3.0, 0};  // measured 3x slower than predicted
  h[static_cast<int>(Tier::TbbAuto)] = {4, 3.0, 0};
  const Choice c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::Serial);
  CHECK(has(c.reason_text(), "(measured)"));
  CHECK(c.settled);
}

TEST_CASE("exploration: unmeasured tiers within 30% are tried a bounded number of times") {
  const auto p = profile("profile_cpu_2core.json");
  const CostRequest r = saxpy(std::size_t{1} << 22, false);  // tbb-auto best, tbb-static close
  HistoryView h{};
  h[static_cast<int>(Tier::TbbAuto)] = {3, 1.0, 0};
  h[static_cast<int>(Tier::Serial)] = {3, 1.0, 0};
  Choice c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbStatic);
  CHECK(c.explored);
  CHECK_FALSE(c.settled);
  CHECK(starts(c.reason_text(), "exploring tbb-static"));
  h[static_cast<int>(Tier::TbbStatic)].explored = kMaxExplore;  // budget spent
  c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbAuto);
  CHECK_FALSE(c.explored);
}

TEST_CASE("a measured runner-up is re-measured when its history is stale") {
  const auto p = profile("profile_cpu_2core.json");
  const CostRequest r = saxpy(std::size_t{1} << 22, false);
  HistoryView h{};
  h[static_cast<int>(Tier::TbbAuto)] = {4, 1.0, 0};
  h[static_cast<int>(Tier::TbbStatic)] = {4, 1.02, 0};  // close behind
  h[static_cast<int>(Tier::Serial)] = {4, 1.0, 0};
  Choice c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbAuto);
  CHECK(c.settled);
  make_stale(h[static_cast<int>(Tier::TbbStatic)]);
  c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbStatic);
  CHECK(c.refreshed);
  CHECK(starts(c.reason_text(), "re-measuring tbb-static"));
  h[static_cast<int>(Tier::Serial)] = {4, 2.0, 0};  // measured far behind...
  make_stale(h[static_cast<int>(Tier::Serial)]);     // ...so never re-measured
  h[static_cast<int>(Tier::TbbStatic)].stale = false;
  c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbAuto);
}

TEST_CASE("a stale runner-up waits until the bucket's calls since its last run outweigh re-measuring it") {
  // By wall time alone a rarely called bucket was re-measured however
  // little it ran: a confirmed runner-up's re-measurements cost at most
  // kRefreshShare of the bucket's calls' time.
  std::vector<Estimate> est(3);
  est[0].tier = Tier::Serial, est[0].total_us = 20;
  est[1].tier = Tier::TbbStatic, est[1].total_us = 11;
  est[2].tier = Tier::TbbAuto, est[2].total_us = 10;
  HistoryView h{};
  for (Tier t : {Tier::Serial, Tier::TbbStatic, Tier::TbbAuto}) h[static_cast<int>(t)] = {4, 1.0, 0};
  TierHistory& st = h[static_cast<int>(Tier::TbbStatic)];
  st.stale = true;
  const double cost_us = (11 - 10) * kRefreshRuns;  // what its runs take over the best's
  st.busy_since_us = 0.9 * cost_us / kRefreshShare;
  Choice c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbAuto);
  CHECK_FALSE(c.explored);
  st.busy_since_us = 1.1 * cost_us / kRefreshShare;
  c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
  CHECK(c.refreshed);
  st.backoff = 2;  // two re-measurements since it was last the best: four times as long
  CHECK(choose(est, &h, {}).tier == Tier::TbbAuto);
  st.busy_since_us = 4.4 * cost_us / kRefreshShare;
  CHECK(choose(est, &h, {}).refreshed);
  st.backoff = 0;
  st.busy_since_us = 0;  // once begun, its runs come back to back
  st.refresh = 3;
  c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
  CHECK(c.refreshed);
  st.refresh = 0;  // an unconfirmed one goes by wall time: its figures may be one disturbed run's
  st.samples = 1;
  c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
  CHECK(c.refreshed);
}

TEST_CASE("an unconfirmed tier the model puts well ahead of the best is re-measured once the bucket's calls pay for it") {
  // bench_small_calls, 10^3 floats: serial's one run took 0.74 us (0.09 a
  // call back to back), tbb-static's 0.5 us; tbb-static's runs kept the
  // workers awake, so the calls stayed in that bucket, on tbb-static, until
  // serial went stale (kConfirmNs, the benchmark's whole measured window).
  std::vector<Estimate> est(2);
  est[0].tier = Tier::Serial, est[0].total_us = 0.09;  // predicted
  est[1].tier = Tier::TbbStatic, est[1].total_us = 0.5;
  HistoryView h{};
  TierHistory& serial = h[static_cast<int>(Tier::Serial)];
  serial = {1, 0.74 / 0.09, 0};  // its one run: 0.74 us
  h[static_cast<int>(Tier::TbbStatic)] = {16, 1.0, 0};
  const double cost_us = (0.74 - 0.5) * kRefreshRuns;  // at its measured time
  serial.busy_since_us = 0.9 * cost_us / kRefreshShare;
  Choice c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
  CHECK_FALSE(c.explored);
  serial.busy_since_us = 1.1 * cost_us / kRefreshShare;  // not stale, but paid for
  c = choose(est, &h, {});
  INFO(c.reason_text());
  CHECK(c.tier == Tier::Serial);
  CHECK(c.refreshed);
  CHECK(starts(c.reason_text(), "re-measuring serial: measured too few times to trust"));
  est[0].total_us = 0.4;  // predicted near the best: waits until stale
  serial.correction = 0.74 / 0.4;
  c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
  est[0].total_us = 0.09;
  serial = {kConfirmSamples, 0.74 / 0.09, 0};  // confirmed that slow: waits until stale
  serial.busy_since_us = 1e12;
  c = choose(est, &h, {});
  CHECK(c.tier == Tier::TbbStatic);
}

TEST_CASE("one slow run does not keep a tier out: an unconfirmed tier is judged by its prediction too") {
  // Seen on a Zen 4: the first serial sum of 4 floats took 1.5 us (25x its
  // usual time), tbb-auto then measured 0.22 us, and the bucket stayed on
  // tbb-auto (0.3 us a call against 0.03) for good, in later processes too.
  const auto p = profile("profile_cpu_2core.json");
  const CostRequest r = saxpy(4, false);
  const Choice model = decide(p, r, {}, nullptr);
  REQUIRE(model.tier == Tier::Serial);
  double serial = 0, tbb_static = 0, tbb_auto = 0;
  for (const auto& e : model.estimates) {
    if (e.tier == Tier::Serial) serial = e.total_us;
    if (e.tier == Tier::TbbStatic) tbb_static = e.total_us;
    if (e.tier == Tier::TbbAuto) tbb_auto = e.total_us;
  }
  HistoryView h{};
  h[static_cast<int>(Tier::Serial)] = {1, 1.5 / serial, 0};      // one run, far slower than predicted
  h[static_cast<int>(Tier::TbbStatic)] = {kConfirmSamples, 1.6 / tbb_static, 0};
  h[static_cast<int>(Tier::TbbAuto)] = {6, 0.22 / tbb_auto, 0};  // measured faster than that run
  Choice c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbAuto);  // not yet stale: the measurement stands
  make_stale(h[static_cast<int>(Tier::Serial)]);
  c = decide(p, r, {}, &h);
  INFO(c.reason_text());
  CHECK(c.tier == Tier::Serial);
  CHECK(c.refreshed);
  CHECK(starts(c.reason_text(), "re-measuring serial: measured too few times to trust"));
  h[static_cast<int>(Tier::Serial)].samples = kConfirmSamples;  // confirmed that slow: left out
  c = decide(p, r, {}, &h);
  CHECK(c.tier == Tier::TbbAuto);
}

TEST_CASE("a re-measurement under way goes on before another tier's, so that its runs come back to back") {
  // Two unconfirmed runners-up, each measured only right after the other
  // (Run::switched): choosing by reach alone, they took turns for good (a
  // 10^7-element pipeline: serial 21 ms and tbb-static 11 ms every other
  // call against tbb-auto's 10.3 ms), and no run was ever back to back.
  auto est = [] {
    std::vector<Estimate> e(3);
    e[0].tier = Tier::Serial, e[0].total_us = 20;
    e[1].tier = Tier::TbbStatic, e[1].total_us = 11;
    e[2].tier = Tier::TbbAuto, e[2].total_us = 10;
    return e;
  };
  HistoryView h{};
  h[static_cast<int>(Tier::TbbAuto)] = {kConfirmSamples, 1.0, 0};
  for (Tier t : {Tier::Serial, Tier::TbbStatic}) {
    TierHistory& th = h[static_cast<int>(t)];
    th = {1, 1.0, 0};
    make_stale(th);
    th.switched_only = true;
  }
  Choice c = choose(est(), &h, {});
  CHECK(c.tier == Tier::TbbStatic);  // the nearer one first
  CHECK(c.refreshed);
  h[static_cast<int>(Tier::Serial)].refresh = 2;  // serial's re-measurement began
  c = choose(est(), &h, {});
  CHECK(c.tier == Tier::Serial);
  CHECK(starts(c.reason_text(), "re-measuring serial"));
}

TEST_CASE("a reason is kept as facts and formatted when read") {
  // The scheduler's own kinds (a wake-up, its re-measurement, a trial),
  // with the forcing rule leading as it does for the cost model's.
  Reason r;
  r.kind = Reason::Kind::Wake;
  r.tier = Tier::TbbStatic;
  r.us = 4.6f;
  r.serial_us = 5.8f;
  CHECK(starts(reason_text(r, {}), "waking oneTBB's workers: awake, tbb-static measured 4.6 us against serial 5.8 us"));
  r.kind = Reason::Kind::WakeRetry;
  CHECK(starts(reason_text(r, {}), "waking oneTBB's workers to re-measure tbb-static awake: its 4.6 us"));
  r.kind = Reason::Kind::Trial;
  r.forced = "forced to CPU by ScopedPlacement";
  CHECK(reason_text(r, {}) ==
        "forced to CPU by ScopedPlacement; trying tbb-static in a stream after waking oneTBB's workers (the first "
        "runs after a wake-up are slow)");
  r.kind = Reason::Kind::NoEligible;
  CHECK(reason_text(r, {}) == "forced to CPU by ScopedPlacement");
}

TEST_CASE("a stale runner-up is re-measured further behind only when its re-measurement's runs together cost little") {
  const auto p = profile("profile_cpu_2core.json");
  bool seen_cheap = false, seen_costly = false, seen_one_run_cheap = false;
  for (int lg = 14; lg <= 26; ++lg) {
    const CostRequest r = saxpy(std::size_t{1} << lg, false);
    const Choice model = decide(p, r, {}, nullptr);
    double best = 1e30, stat = 0;
    for (const auto& e : model.estimates)
      if (e.eligible) {
        best = std::min(best, e.total_us);
        if (e.tier == Tier::TbbStatic) stat = e.total_us;
      }
    REQUIRE(stat > 0);
    if (stat <= best) continue;  // tbb-static is the best here
    HistoryView h{};
    for (Tier t : {Tier::Serial, Tier::TbbStatic, Tier::TbbAuto}) h[static_cast<int>(t)] = {4, 1.0, 0};
    h[static_cast<int>(Tier::TbbStatic)].correction = 2.5 * best / stat;  // measured 2.5x behind the best
    make_stale(h[static_cast<int>(Tier::TbbStatic)]);
    const Choice c = decide(p, r, {}, &h);
    INFO("2^" << lg << ": " << c.reason_text());
    // 2.5x of a few microseconds is cheap to check again; of milliseconds it
    // is not, nor where one run is cheap but the kRefreshRuns runs are not.
    const double extra = 1.5 * best;
    const bool cheap = extra * kRefreshRuns <= kCheapExploreUs;
    seen_cheap |= cheap;
    seen_costly |= !cheap;
    seen_one_run_cheap |= !cheap && extra <= kCheapExploreUs;
    CHECK(c.refreshed == cheap);
    CHECK((c.tier == Tier::TbbStatic) == cheap);
  }
  CHECK(seen_cheap);
  CHECK(seen_costly);
  CHECK(seen_one_run_cheap);
}

TEST_CASE("tiers far from the best are never explored") {
  const auto p = profile("profile_cpu_2core.json");
  HistoryView h{};
  h[static_cast<int>(Tier::Serial)] = {3, 1.0, 0};
  const Choice c = decide(p, saxpy(16, false), {}, &h);  // TBB predicted >> serial
  CHECK(c.tier == Tier::Serial);
  CHECK_FALSE(c.explored);
  CHECK(c.settled);
}

TEST_CASE("deterministic mode ignores history and never explores") {
  const auto p = profile("profile_cpu_2core.json");
  HistoryView h{};
  h[static_cast<int>(Tier::TbbStatic)] = {4, 100.0, 0};
  ChoiceContext ctx;
  ctx.deterministic = true;
  const Choice c = decide(p, saxpy(std::size_t{1} << 22, false), ctx, &h);
  CHECK(c.tier == Tier::TbbAuto);  // the model's choice, as if no history
  CHECK_FALSE(c.explored);
  CHECK(c.settled);
}

// A map of 2^24 floats from pinned host memory on a 16-core server host
// for the H100, at 74 flops an element: the 16 threads and one device over
// the pinned link take about as long.
MachineProfile coexec_host() {
  auto p = profile("profile_h100.json");
  p.cpu.bw_all_gbps = 120;
  return p;
}
CostRequest coexec_map() {
  CostRequest r;
  r.tiers = kMap | tier_bit(Tier::CoExec);
  r.n = std::size_t{1} << 24;
  r.bytes_per_elem = 8;
  r.h2d_bytes = 4 * r.n;
  r.d2h_bytes = 4 * r.n;
  r.host_pinned = true;
  r.threads = 16;
  r.gpu_ok = true;
  r.flops_per_elem = 74;
  return r;
}

TEST_CASE("co-execution: chosen when CPU and GPU are comparable, off when one side wins alone") {
  const auto p = coexec_host();
  CostRequest r = coexec_map();
  Choice c = decide(p, r);
  CHECK(c.tier == Tier::CoExec);
  CHECK(c.gpu_fraction > 0.3);
  CHECK(c.gpu_fraction < 0.7);
  CHECK(starts(c.reason_text(), "CPU and GPU together fastest"));
  r.flops_per_elem = 5000;  // compute-heavy: the GPU alone wins
  c = decide(p, r);
  CHECK(tier_device(c.tier) == veda::Device::Gpu);
  CHECK(c.tier != Tier::CoExec);
  c = decide(p, r);
  CHECK(c.tier != Tier::CoExec);
  const auto co = std::find_if(c.estimates.begin(), c.estimates.end(), [](const Estimate& e) { return e.tier == Tier::CoExec; });
  REQUIRE(co != c.estimates.end());
  CHECK_FALSE(co->eligible);
  ChoiceContext det;
  det.deterministic = true;
  r.flops_per_elem = 74;
  CHECK(decide(p, r, det).tier != Tier::CoExec);  // off in deterministic mode
  // This 2-core host: memory-bound work shares 34 GB/s with the staging copies.
  auto small = profile("profile_h100.json");
  r.threads = 2;
  r.host_pinned = false;
  r.flops_per_elem = 0;
  CHECK(decide(small, r).tier != Tier::CoExec);
}

TEST_CASE("a split GEMM is predicted by C's rows from gpu-cublas (not TF32); two devices share a large one whole") {
  const auto p = coexec_host();
  CostRequest r;
  r.op = OpClass::Gemm;
  r.tiers = tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) | tier_bit(Tier::GpuCublas) |
            tier_bit(Tier::GpuCublasTf32) | tier_bit(Tier::CoExec);
  r.m = r.k = r.cols = 8192;
  r.n = r.m * r.k * r.cols;
  r.elem_bytes = 4;
  r.h2d_bytes = 2 * r.m * r.k * 4;
  r.d2h_bytes = r.m * r.cols * 4;
  r.threads = 16;
  r.gpu_ok = true;
  r.allow_tf32 = r.tensor_cores = true;
  r.gpu_devices = 2;
  const Choice c = decide(p, r);
  auto find = [&](Tier t) {
    const auto it = std::find_if(c.estimates.begin(), c.estimates.end(), [&](const Estimate& e) { return e.tier == t; });
    REQUIRE(it != c.estimates.end());
    return *it;
  };
  const Estimate co = find(Tier::CoExec), cublas = find(Tier::GpuCublas), tf32 = find(Tier::GpuCublasTf32);
  CHECK(tf32.total_us < cublas.total_us);  // TF32 is faster, but rounds: the split keeps FP32
  CHECK(co.n == 8192);
  CHECK(co.gpu_fraction == 1);  // the 16 threads' share would not pay for joining it
  CHECK(co.total_us == doctest::Approx(cublas.overhead_us + (cublas.total_us - cublas.overhead_us) / 2 + kCoExecJoinUs));
  CHECK(co.eligible);
  r.gpu_devices = 1;  // one device: the GPU alone is faster than any split
  const Choice one = decide(p, r);
  CHECK(one.tier == Tier::GpuCublasTf32);
}

TEST_CASE("a split sort counts the merge of its parts on the host: worth it across devices, not beside one") {
  const auto p = coexec_host();
  CostRequest r;
  r.op = OpClass::Sort;
  r.tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda) | tier_bit(Tier::CoExec);
  r.n = 100'000'000;
  r.elem_bytes = 4;
  r.value_bytes = 4;
  r.h2d_bytes = r.d2h_bytes = r.n * 8;
  r.threads = 16;
  r.gpu_ok = true;
  auto co_of = [](const Choice& c) {
    const auto it = std::find_if(c.estimates.begin(), c.estimates.end(), [](const Estimate& e) { return e.tier == Tier::CoExec; });
    REQUIRE(it != c.estimates.end());
    return *it;
  };
  // A merge round: 5 ns per element on each of the 16 threads (here more
  // than reading and writing every key and value); a copy back: the traffic.
  const double merge_us = 1e8 * 5e-3 / 16, copy_us = 2.0 * 8e8 / p.cpu.bw_all_gbps * 1e-3;
  REQUIRE(merge_us > copy_us);
  const Choice one = decide(p, r);  // two parts: one round and the copy back
  const Estimate co1 = co_of(one);
  CHECK(co1.join_us == doctest::Approx(merge_us + copy_us));
  CHECK(co1.total_us >= co1.join_us + kCoExecJoinUs);
  CHECK_FALSE(co1.eligible);  // the merge costs more than the CPU's share saves
  CHECK(one.tier == Tier::Cuda);
  r.gpu_devices = 3;  // four parts: two rounds
  const Choice three = decide(p, r);
  const Estimate co3 = co_of(three);
  CHECK(co3.join_us == doctest::Approx(2 * merge_us));
  CHECK(three.tier == Tier::CoExec);
  CHECK(three.gpu_fraction > 0.9);  // the 16 threads' sort is much slower: a small share
  CHECK(starts(three.reason_text(), "CPU and 3 GPUs together fastest"));
}

TEST_CASE("co-execution over several devices of one kind: each takes an equal share, and the devices alone may split a call") {
  const auto p = coexec_host();
  CostRequest r = coexec_map();
  const Choice one = decide(p, r);
  REQUIRE(one.tier == Tier::CoExec);
  CHECK(one.gpu_devices == 1);
  r.gpu_devices = 2;
  const Choice two = decide(p, r);
  REQUIRE(two.tier == Tier::CoExec);
  CHECK(two.gpu_devices == 2);
  CHECK(two.gpu_fraction > one.gpu_fraction);  // twice the GPU throughput takes more of the range
  CHECK(starts(two.reason_text(), "CPU and 2 GPUs together fastest"));
  auto co_us = [](const Choice& c) {
    return std::find_if(c.estimates.begin(), c.estimates.end(), [](const Estimate& e) { return e.tier == Tier::CoExec; })
        ->total_us;
  };
  CHECK(co_us(two) < co_us(one));
  // Compute-heavy: one device alone beats sharing with the CPU; two devices
  // split the call between them and leave the CPU out.
  r.flops_per_elem = 5000;
  r.gpu_devices = 1;
  CHECK(decide(p, r).tier != Tier::CoExec);
  r.gpu_devices = 2;
  const Choice gpus = decide(p, r);
  REQUIRE(gpus.tier == Tier::CoExec);
  CHECK(gpus.gpu_fraction == 1.0);
  CHECK(starts(gpus.reason_text(), "2 GPUs together fastest"));
  ChoiceContext det;
  det.deterministic = true;
  CHECK(decide(p, r, det).tier != Tier::CoExec);  // still off in deterministic mode
}

TEST_CASE("matmul's BF16 tensor-core tier: only for FP32 under Precision::AllowFP16, and then the fastest") {
  const auto p = profile("profile_h100.json");
  CostRequest r;
  r.op = OpClass::Gemm;
  r.tiers = tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) | tier_bit(Tier::GpuTiled) |
            tier_bit(Tier::GpuCublas) | tier_bit(Tier::GpuCublasTf32) | tier_bit(Tier::GpuCublasBf16);
  r.m = r.k = r.cols = 8192;
  r.n = r.m * r.k * r.cols;
  r.threads = 2;
  r.gpu_ok = true;
  r.tensor_cores = true;
  r.allow_tf32 = true;
  ChoiceContext ctx;
  ctx.all_on_device = true;
  auto bf16 = [](const Choice& c) {
    for (const auto& e : c.estimates)
      if (e.tier == Tier::GpuCublasBf16) return e;
    FAIL("no gpu-cublas-bf16 estimate");
    return Estimate{};
  };
  const Choice tf32 = decide(p, r, ctx);
  CHECK(tf32.tier == Tier::GpuCublasTf32);
  CHECK_FALSE(bf16(tf32).eligible);
  CHECK(has(bf16(tf32).note, "AllowFP16"));
  r.allow_fp16 = true;
  CHECK(decide(p, r, ctx).tier == Tier::GpuCublasBf16);
  r.double_precision = true;
  const Choice dbl = decide(p, r, ctx);
  CHECK(dbl.tier == Tier::GpuCublas);
  CHECK(has(bf16(dbl).note, "FP32"));
  r.double_precision = false;
  r.tensor_cores = false;
  CHECK(has(bf16(decide(p, r, ctx)).note, "tensor cores"));
}

TEST_CASE("the GEMM ladder: gpu-naive and gpu-vectorized only when forced, gpu-wmma only where BF16 is allowed") {
  const auto p = profile("profile_h100.json");
  CostRequest r;
  r.op = OpClass::Gemm;
  r.tiers = tier_bit(Tier::CpuBlas) | tier_bit(Tier::GpuCublas) | tier_bit(Tier::GpuNaive) |
            tier_bit(Tier::GpuVectorized) | tier_bit(Tier::GpuWmma);
  r.threads = 2;
  r.gpu_ok = true;
  r.tensor_cores = true;
  ChoiceContext ctx;
  ctx.all_on_device = true;
  auto eligible = [](const Choice& c, Tier t) {
    for (const auto& e : c.estimates)
      if (e.tier == t) return e.eligible;
    FAIL("no estimate for " << tier_name(t));
    return false;
  };
  for (std::size_t n : {1, 97, 4096}) {
    r.m = r.k = r.cols = n;
    r.n = n * n * n;
    r.allow_fp16 = false;
    Choice c = decide(p, r, ctx);
    CHECK_FALSE(eligible(c, Tier::GpuNaive));
    CHECK_FALSE(eligible(c, Tier::GpuVectorized));
    CHECK_FALSE(eligible(c, Tier::GpuWmma));
    r.allow_fp16 = true;
    c = decide(p, r, ctx);
    CHECK(eligible(c, Tier::GpuWmma));
    CHECK(c.tier != Tier::GpuNaive);
    CHECK(c.tier != Tier::GpuVectorized);
    if (n == 4096) CHECK(c.tier == Tier::GpuWmma);  // the only BF16 tier offered here
    r.double_precision = true;
    CHECK_FALSE(eligible(decide(p, r, ctx), Tier::GpuWmma));
    r.double_precision = false;
  }
}

TEST_CASE("a call whose operands do not fit in free device memory is placed elsewhere before it runs") {
  const auto p = profile("profile_h100.json");
  // Compute-heavy enough that the GPU wins with the copies (as above).
  CostRequest r = saxpy(std::size_t{1} << 26, true);
  r.flops_per_elem = 2000;
  r.device_need = r.h2d_bytes + r.d2h_bytes;  // 768 MiB
  const Choice roomy = decide(p, r);
  CHECK(tier_device(roomy.tier) == veda::Device::Gpu);
  r.device_room = std::size_t{512} << 20;
  const Choice tight = decide(p, r);
  CHECK(tight.tier != Tier::Cuda);
  bool streamed_eligible = false;
  for (const auto& e : tight.estimates) {
    if (e.tier == Tier::Cuda) {
      CHECK_FALSE(e.eligible);
      CHECK(has(e.note, "needs 768 MiB of device memory, 512 MiB free"));
    }
    if (e.tier == Tier::CudaStreamed) streamed_eligible = e.eligible;
  }
  CHECK(streamed_eligible);  // chunks need only staging-sized device buffers
}
