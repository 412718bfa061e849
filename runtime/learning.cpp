#include "runtime/learning.hpp"

#include <algorithm>
#include <bit>

namespace veda::detail {

HistoryView history_view(const BucketState& b, const std::vector<Estimate>& est, std::size_t n_elems,
                         std::int64_t now, std::size_t slot) {
  HistoryView hv{};
  const double n = static_cast<double>(std::max<std::size_t>(n_elems, 1));
  for (const auto& e : est) {
    const auto t = static_cast<std::size_t>(e.tier);
    auto& h = hv[t];
    const auto& s = b.samples_on(e.tier, slot);
    h.samples = s.count();
    const double a = e.overhead_us, per = (e.total_us - e.overhead_us) / n;
    h.correction = s.correction(a, per);
    const TierBook& book = b.book_on(e.tier, slot);
    h.explored = book.explored;
    h.seeded = book.seeded;
    const double age_ns = static_cast<double>(now - book.last_sample_ns);
    h.switched_only = book.switched_only;
    h.stale = h.samples >= kMinSamples && age_ns > stale_after_ns(h.samples, book, e.total_us * h.correction);
    h.refresh = book.refresh;
    h.busy_since_us = static_cast<double>(b.busy_ns - book.busy_at_sample) / 1e3;
    h.backoff = book.backoff;
    // (Read only to re-measure a tier: where it is stale or a re-measurement is under way.)
    if ((h.stale || h.refresh > 0) && h.samples >= kConfirmSamples && !book.seeded && !book.switched_only)
      h.best_kept = s.low_correction(a, per);
  }
  return hv;
}

double stale_after_ns(int samples, const TierBook& book, double measured_us) {
  if (samples < kConfirmSamples || book.seeded || book.switched_only) return static_cast<double>(kConfirmNs);
  return std::max<double>(kStaleNs, kStaleRuns * measured_us * 1e3);
}

void note_choice(BucketState& b, const Choice& c, std::int64_t now, std::size_t slot) {
  TierBook& book = b.book_on(c.tier, slot);
  if (c.refreshed) {
    if (book.refresh == 0 && book.backoff < kRefreshBackoffMax) ++book.backoff;
    // kRefreshRuns runs per refresh; the stamp keeps the next one at least kStaleNs away.
    book.refresh = static_cast<std::uint8_t>(book.refresh > 0 ? book.refresh - 1 : kRefreshRuns - 1);
    book.last_sample_ns = now;
    book.busy_at_sample = b.busy_ns;
  } else if (c.explored) {
    ++book.explored;
  } else {
    book.backoff = 0;  // the best: re-measured as a runner-up later, it starts afresh
  }
  if (!TypeSlot::for_sleeping_workers(b))
    b.serial_refresh.store(c.refreshed && c.tier == Tier::Serial && book.refresh > 0, std::memory_order_relaxed);
}

// Serial runs over cached data tell the model what one element costs here.
// A short run of many elements counts as it is; a long one (kLongCallNs:
// the call's fixed cost is noise, and 100 images blurred at 0.7 ms each
// must not look like 100 floats) counts through the median of its bucket's
// serial runs (at least two, and the typical run long as well), so one
// preempted call cannot teach that an element costs 20 us.
double add_run(BucketState& b, TypeSlot& slot, std::uint64_t generation, const Run& r) {
  auto& samples = b.samples_on(r.tier, r.slot);
  const std::int64_t stands_for = r.sampled ? b.timed_mask.load(std::memory_order_relaxed) + 1 : 1;
  std::int64_t t_each = r.t_ns;
  if (stands_for > 1 && samples.count() > 0)
    t_each = std::min<std::int64_t>(t_each, static_cast<std::int64_t>(kSampledCap * samples.median_us() * 1e3));
  b.busy_ns += t_each * stands_for;
  if (slot.warm_up(generation, r.tier)) return 0;
  const std::size_t n = r.n;
  const std::int64_t t_ns = r.t_ns;
  TierBook& book = b.book_on(r.tier, r.slot);
  // Run::switched: once the tier has runs of its own kind, a switched run
  // counts only where it was faster.
  const double ns_per_elem = static_cast<double>(t_ns) / static_cast<double>(std::max<std::size_t>(n, 1));
  if (r.switched && samples.count() > 0 && !book.switched_only && !book.seeded &&
      ns_per_elem >= samples.median_ns_per_elem())
    return 0;
  if (book.seeded || (book.switched_only && !r.switched)) {
    samples.reset();  // this run's measurements replace an earlier run's, or switched runs'
    book.seeded = false;
  }
  book.switched_only = r.switched && (book.switched_only || samples.count() == 0);
  const bool teaches = r.tier == Tier::Serial && !r.switched && n > 0 &&
                       static_cast<double>(n) * r.bytes_per_elem <= 8.0 * (1 << 20);
  double per_elem = teaches && n >= 1024 && t_ns < kLongCallNs ? static_cast<double>(t_ns) / static_cast<double>(n) : 0;
  samples.add(static_cast<double>(t_ns) / 1e3, static_cast<double>(n));
  book.last_sample_ns = r.end_ns;
  book.busy_at_sample = b.busy_ns;
  // (a sort of 8 samples: only when the answer may change)
  if (t_ns >= kLongCallNs || t_ns < kShortCallNs || b.timed_mask.load(std::memory_order_relaxed) != b.kTimeSome) {
    const double median_ns = samples.median_us() * 1e3;
    b.timed_mask.store(median_ns >= kLongCallNs   ? b.kTimeAll
                       : median_ns < kTinyCallNs  ? b.kTimeRare
                       : median_ns < kShortCallNs ? b.kTimeFew
                                                  : b.kTimeSome,
                       std::memory_order_relaxed);
  }
  if (teaches && t_ns >= kLongCallNs && samples.count() >= 2) {
    const double median = samples.median_ns_per_elem();
    if (median * static_cast<double>(n) >= kLongCallNs) per_elem = median;
  }
  return per_elem;
}

std::uint32_t redecide_mask(double typical_ns, bool confirmed, std::uint32_t mask) {
  if (typical_ns >= kRedecideEachNs) return 0;
  mask = confirmed ? std::min(2 * mask + 1, BucketState::kRedecideMax) : BucketState::kRedecideMin;
  if (typical_ns < kLongCallNs) return mask;
  const auto calls = static_cast<std::uint32_t>(static_cast<double>(kRedecideEachNs) / typical_ns);  // 1 to 50
  return std::min(mask, std::bit_floor(std::max<std::uint32_t>(calls, 2)) - 1);
}

void drop_overturned(BucketState& b, Tier t, std::size_t slot) {
  const TierSamples& ran = b.samples_on(t, slot);
  const Device d = tier_device(t);
  for (std::size_t m = 0; m < kMasks; ++m) {
    const std::uint64_t packed = b.cached(m, std::memory_order_relaxed);
    if (packed == 0) continue;
    const Tier settled = BucketState::decided_tier(packed);
    if (settled == t || (m == kCpuOnly && d != Device::Cpu) || (m == kGpuOnly && d != Device::Gpu)) continue;
    // Per element: a bucket spans sizes up to 2x apart.
    const TierSamples& kept = b.samples_on(settled, b.cached_slot[m].load(std::memory_order_relaxed));
    if (ran.count() > 0 && kept.count() > 0 && ran.median_ns_per_elem() * kOverturnGain < kept.median_ns_per_elem())
      b.drop_decision(m);
  }
}

void learn_per_elem(TypeSlot& slot, BucketState& b, double per_elem, std::int64_t t_ns, double profile_ns) {
  const auto sample = static_cast<float>(per_elem);
  const float old = slot.cpu_ns_per_elem.load(std::memory_order_relaxed);
  slot.cpu_ns_per_elem.store(old == 0 ? sample : 0.8f * old + 0.2f * sample, std::memory_order_relaxed);
  const float ref = old == 0 ? static_cast<float>(profile_ns) : old;
  if (t_ns >= kLongCallNs && (sample > 2 * ref || 2 * sample < ref))
    b.clear_decisions();
}

Tier wake_for_awake(BucketState& b, const AwakeBest& awake, double serial_us, std::int64_t now,
                    std::uint64_t regions, double wake_us) {
  if (!awake.worth_a_try(serial_us) || now < b.wake_last_ns + b.wake_spacing_ns) return Tier::Serial;
  const bool held =
      b.wake_last_ns == 0 || regions - b.wake_regions > kWakeHeldRegions || awake.us + wake_us < serial_us;
  b.wake_spacing_ns = held ? kWakeMinNs : std::min(2 * b.wake_spacing_ns, kWakeMaxNs);
  b.wake_last_ns = now;
  b.wake_regions = regions;
  return awake.tier;
}

}  // namespace veda::detail
