#include "runtime/telemetry.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/clock.hpp"

namespace veda::detail {

const char* fallback_text(FallbackKind k) noexcept {
  switch (k) {
    case FallbackKind::OutOfMemory: return "device out of memory";
    case FallbackKind::PlacementGpu: return "placement Gpu without a usable GPU";
    case FallbackKind::ForcedGpuTier: return "GPU tier forced without a usable GPU";
    case FallbackKind::DeviceFault: return "device fault (launch or copy failed)";
    default: return "none";
  }
}

int trace_thread_id() noexcept {
  static std::atomic<int> next{1};
  thread_local const int id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

double predicted_us_of(const CallRecord& c) {
  if (!c.explanation || c.forced_tier) return -1;
  for (const auto& e : c.explanation->estimates)
    if (e.tier == c.tier) return e.total_us;
  return -1;
}

namespace {
int latency_bin(double ns) {
  if (ns < 1) return 0;
  return std::clamp(static_cast<int>(4 * std::log2(ns)), 0, Telemetry::kLatencyBins - 1);
}

// The bin holding quantile q of `h`, or -1 when empty.
template <std::size_t N>
int quantile_bin(const std::array<std::uint64_t, N>& h, double q) {
  std::uint64_t total = 0;
  for (auto c : h) total += c;
  if (total == 0) return -1;
  const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < N; ++i) {
    seen += h[i];
    if (seen >= std::max<std::uint64_t>(want, 1)) return static_cast<int>(i);
  }
  return static_cast<int>(N) - 1;
}
}  // namespace

Telemetry::Telemetry() : start_ns_(now_ns()) {}

void Telemetry::on_call(const CallRecord& c, std::int64_t t0, std::int64_t t1, FallbackKind fb) {
  calls_[static_cast<std::size_t>(c.tier)].fetch_add(1, std::memory_order_relaxed);
  if (fb != FallbackKind::None) fallbacks_[static_cast<std::size_t>(fb)].fetch_add(1, std::memory_order_relaxed);
  if (c.explored) on_exploration();
  const double predicted = predicted_us_of(c);
  const bool timed = c.measured_us >= 0;
  std::lock_guard lock(mu_);
  OpAgg& op = ops_[c.site->name()];
  ++op.calls;
  ++op.by_tier[static_cast<std::size_t>(c.tier)];
  if (timed) {
    ++op.timed;
    op.sum_us += c.measured_us;
    ++op.latency[static_cast<std::size_t>(latency_bin(c.measured_us * 1e3))];
    if (predicted > 0 && c.measured_us > 0) {
      ++op.predicted;
      op.sum_abs_err += std::abs(c.measured_us - predicted) / c.measured_us;
      const int b = std::clamp(static_cast<int>(std::floor(8 * std::log2(c.measured_us / predicted))) + 64, 0, 127);
      ++op.ratio[static_cast<std::size_t>(b)];
    }
  }
  ring_.push_back({c, t0, predicted, fb});
  if (ring_.size() > kRing) ring_.pop_front();
  if (spans_.size() >= kMaxSpans) {
    ++dropped_spans_;
    return;
  }
  Span s;
  s.begin_ns = t0;
  s.end_ns = std::max(t1, t0);
  s.kind = SpanKind::Call;
  s.track = trace_thread_id();
  s.call = c;
  s.predicted_us = predicted;
  spans_.push_back(std::move(s));
}

void Telemetry::on_transfer(SpanKind dir, std::size_t bytes) noexcept {
  if (dir == SpanKind::H2D) {
    bytes_h2d_.fetch_add(bytes, std::memory_order_relaxed);
    n_h2d_.fetch_add(1, std::memory_order_relaxed);
  } else if (dir == SpanKind::D2H) {
    bytes_d2h_.fetch_add(bytes, std::memory_order_relaxed);
    n_d2h_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Telemetry::add_span(Span s) {
  std::lock_guard lock(mu_);
  if (spans_.size() >= kMaxSpans) {
    ++dropped_spans_;
    return;
  }
  spans_.push_back(std::move(s));
}

void Telemetry::on_worker_active(int slot, std::int64_t begin_ns, std::int64_t end_ns) {
  Span s;
  s.begin_ns = begin_ns;
  s.end_ns = end_ns;
  s.kind = SpanKind::Worker;
  s.track = slot;
  add_span(std::move(s));
}

void Telemetry::reset() {
  for (auto& c : calls_) c.store(0, std::memory_order_relaxed);
  for (auto& f : fallbacks_) f.store(0, std::memory_order_relaxed);
  for (auto* a : {&bytes_h2d_, &bytes_d2h_, &n_h2d_, &n_d2h_, &explorations_}) a->store(0, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  ops_.clear();
  ring_.clear();
  spans_.clear();
  dropped_spans_ = 0;
}

telemetry::Snapshot Telemetry::snapshot(std::uint64_t pool_hits, std::uint64_t pool_misses) const {
  telemetry::Snapshot s;
  s.enabled = true;
  s.uptime_s = static_cast<double>(now_ns() - start_ns_) / 1e9;
  for (int t = 0; t < kTierCount; ++t)
    if (auto n = calls_[static_cast<std::size_t>(t)].load(std::memory_order_relaxed))
      s.calls[std::string(to_string(tier_device(static_cast<Tier>(t)))) + "/" + tier_name(static_cast<Tier>(t))] = n;
  s.bytes_h2d = bytes_h2d_.load(std::memory_order_relaxed);
  s.bytes_d2h = bytes_d2h_.load(std::memory_order_relaxed);
  s.transfers_h2d = n_h2d_.load(std::memory_order_relaxed);
  s.transfers_d2h = n_d2h_.load(std::memory_order_relaxed);
  for (int k = 1; k < static_cast<int>(FallbackKind::Count); ++k)
    if (auto n = fallbacks_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed))
      s.fallbacks[fallback_text(static_cast<FallbackKind>(k))] = n;
  s.pool_hits = pool_hits;
  s.pool_misses = pool_misses;
  s.explorations = explorations_.load(std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  auto bin_us = [](int b) { return std::exp2((b + 0.5) / 4.0) / 1e3; };
  for (const auto& [name, a] : ops_) {
    telemetry::OpStats o;
    o.name = name;
    o.calls = a.calls;
    for (int t = 0; t < kTierCount; ++t)
      if (a.by_tier[static_cast<std::size_t>(t)])
        o.by_tier[std::string(to_string(tier_device(static_cast<Tier>(t)))) + "/" + tier_name(static_cast<Tier>(t))] =
            a.by_tier[static_cast<std::size_t>(t)];
    o.timed = a.timed;
    if (a.timed) {
      o.mean_us = a.sum_us / static_cast<double>(a.timed);
      o.p50_us = bin_us(quantile_bin(a.latency, 0.50));
      o.p95_us = bin_us(quantile_bin(a.latency, 0.95));
      o.p99_us = bin_us(quantile_bin(a.latency, 0.99));
    }
    o.predicted = a.predicted;
    if (a.predicted) {
      o.median_measured_over_predicted = std::exp2((quantile_bin(a.ratio, 0.5) - 64 + 0.5) / 8.0);
      o.mean_abs_error = a.sum_abs_err / static_cast<double>(a.predicted);
    }
    s.ops.push_back(std::move(o));
  }
  for (const auto& r : ring_) {
    const Decision d = decision_of(r.call);
    telemetry::DecisionRecord x;
    x.t_us = static_cast<double>(r.t_ns - start_ns_) / 1e3;
    x.name = d.name;
    x.sizes = d.sizes;
    x.device = d.device;
    x.tier = d.tier;
    x.reason = d.reason;
    x.predicted_us = r.predicted_us;
    x.measured_us = d.measured_us;
    x.explored = r.call.explored;
    x.fallback = r.fallback != FallbackKind::None;
    if (x.fallback && r.fallback != FallbackKind::OutOfMemory) x.reason = std::string(fallback_text(r.fallback)) + "; " + x.reason;
    s.recent.push_back(std::move(x));
  }
  return s;
}

}  // namespace veda::detail
