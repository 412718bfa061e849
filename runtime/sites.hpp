// The learning store: what veda has measured per call site.
//
// A Site is one wrapped function or op. Per element-type signature it keeps
// a TypeSlot; per (log2 size bucket, operand residency, workers idle or not)
// a BucketState with the measured history of each tier, the exploration
// count, the cached decision for each placement mask, and the explanation of
// the latest decision. Sites and buckets live for the whole process (they
// are keyed by runtime generation, so a new runtime starts learning afresh),
// which lets the thread's last-decision record hold plain pointers. Their
// number is bounded: past kMaxSites names, new names share a site per
// function (site_for), so memory stays under about 30 MB however names are made.
//
// Thread-safety: Site::slot and TypeSlot::bucket may be called from any
// thread (lock-free once created); a BucketState's history is guarded by its
// mutex, its cached decisions and flags are atomics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "veda/detail/dispatch.hpp"

namespace veda::detail {

// Distinct (function or op, name) sites kept; see site_for.
inline constexpr std::size_t kMaxSites = 4096;

// The last 16 measurements of one tier in one bucket.
class TierSamples {
 public:
  static constexpr int kRing = 16;
  void add(double us, double n);
  int count() const noexcept { return count_; }
  // Median of measured / (a + b * n) over the newest kRecent samples: how far
  // the analytic line is off now (one outlier cannot move a median).
  static constexpr int kRecent = 8;
  double correction(double a, double b) const;
  // The second lowest measured / (a + b * n) of all kept samples (0: fewer
  // than two): how fast the tier ran at its best, one outlier aside.
  double low_correction(double a, double b) const;
  // Lower median of nanoseconds per element over the newest kRecent samples
  // (0: none). Lower: noise only ever slows a run down.
  double median_ns_per_elem() const;
  // Lower median of the newest kRecent times in microseconds (0: none).
  double median_us() const;
  void reset() noexcept { *this = TierSamples{}; }
  // The kept samples, oldest first: f(us, n).
  template <class F>
  void for_each(F&& f) const {
    for (int j = count_ - 1; j >= 0; --j) {
      const auto i = static_cast<std::size_t>((next_ + kRing - 1 - j) % kRing);
      f(us_[i], n_[i]);
    }
  }

 private:
  template <class Value>
  double lower_median(Value value) const;  // of value(i) over the newest kRecent samples
  std::array<float, kRing> us_{}, n_{};
  std::uint8_t next_ = 0, count_ = 0;
};

struct Explanation;  // scheduler.hpp: what a decision weighed and why

// Placement masks: which devices a call may use.
enum Mask : std::uint8_t { kAnyDevice = 0, kCpuOnly = 1, kGpuOnly = 2, kMasks = 3 };

class TypeSlot;
class Site;

// What exploration and re-measurement have done with one tier on one device.
struct TierBook {
  std::uint8_t explored = 0;        // exploration runs spent
  std::uint8_t refresh = 0;         // re-measurement runs left
  std::int64_t last_sample_ns = 0;  // when it was last measured
  std::int64_t busy_at_sample = 0;  // the bucket's busy_ns then
  std::uint8_t backoff = 0;         // re-measurements begun since it was last chosen as the best
  bool seeded = false;              // its samples only from stored history (an earlier run)
  bool switched_only = false;       // its samples only from runs right after another tier's (Run::switched)
};

class BucketState {
 public:
  int index = 0;  // in its TypeSlot: (log2 size, residency, idle)
  TypeSlot* slot = nullptr;  // its owner (a Plan carries only the bucket)
  std::mutex mu;
  std::uint64_t generation = 0;                 // guarded by mu
  std::array<TierSamples, kTierCount> samples;  // guarded by mu; on several devices, the first's
  // A tier's samples on device `slot`: `samples` for slot 0 and the CPU
  // tiers, the device's own for a GPU tier on another (devices can differ:
  // one's times must not decide another's calls). Guarded by mu.
  TierSamples& samples_on(Tier t, std::size_t slot);
  const TierSamples& samples_on(Tier t, std::size_t slot) const;
  // Each tier's exploration bookkeeping, kept per device like its samples
  // (a tier explored on one device is still unexplored on another).
  std::array<TierBook, kTierCount> books{};  // guarded by mu; on several devices, the first's
  TierBook& book_on(Tier t, std::size_t slot);
  const TierBook& book_on(Tier t, std::size_t slot) const;
  // Slots 1 .. other_devices() may hold GPU-tier samples of their own.
  std::size_t other_devices() const noexcept { return other_devices_.size(); }
  // The last call that woke the workers from this bucket of sleeping ones,
  // the parallel regions ended before it (WorkerActivity::regions), and the
  // spacing before the next may (wake_for_awake). Guarded by mu.
  std::int64_t wake_last_ns = 0, wake_spacing_ns = 0;
  std::uint64_t wake_regions = 0;
  // How long this bucket's calls have taken in all, estimated from the
  // timed ones (a sampled one, Run::sampled, stands for timed_mask + 1 of
  // its thread's calls): what re-measuring a runner-up is weighed against
  // (choose). Guarded by mu.
  std::int64_t busy_ns = 0;
  std::array<std::shared_ptr<const Explanation>, kMasks> explanation;
  // (generation << 8) | (tier + 1) of a settled decision, 0 when unsettled.
  static constexpr std::uint64_t pack_decision(std::uint64_t generation, Tier t) noexcept {
    return (generation << 8) | (static_cast<std::uint64_t>(t) + 1);
  }
  static constexpr Tier decided_tier(std::uint64_t packed) noexcept { return static_cast<Tier>((packed & 0xff) - 1); }
  static constexpr std::uint64_t decided_generation(std::uint64_t packed) noexcept { return packed >> 8; }
  // Private, written only through the three below: replacing or clearing a
  // settled decision bumps g_settled_epoch, which the threads' settled plans
  // check instead of it (a trial that stored 0 directly left a serial plan
  // serving calls after the bucket had re-decided).
  std::uint64_t cached(std::size_t mask, std::memory_order o = std::memory_order_acquire) const noexcept {
    return cached_[mask].load(o);
  }
  void cache_decision(std::size_t mask, std::uint64_t packed) noexcept;
  void clear_decisions() noexcept;
  // Clears one mask's settled decision; the threads' settled plans only where
  // it was serial (their tables hold serial plans alone).
  void drop_decision(std::size_t mask) noexcept;
  // The device slot a settled GPU decision was made for (several devices).
  std::array<std::atomic<std::uint8_t>, kMasks> cached_slot{};
  std::atomic<double> coexec_fraction{0};  // of the latest CoExec decision
  std::atomic<std::uint8_t> coexec_devices{1};  // ... and how many devices share its GPU part
  // What a GPU call of this bucket keeps its device busy for, in us: the
  // latest GPU decision's prediction, or a GPU call's measured time. With
  // several devices it is queued on the call's device (DeviceApi::queue_work).
  std::atomic<float> gpu_us{0};
  // Which calls of a settled decision are timed for the learning: those
  // where the thread's call count & timed_mask is 0. Every 16th; every call
  // where calls typically take 20 us or more (a clock read is noise next to
  // them); every 256th where they take under 1 us (a timed call's clock
  // reads and bookkeeping, 0.2-1 us with the call's data having pushed
  // veda's out of the L1 cache, cost more than the call: every 64th put 2-4%
  // on a 4096-float saxpy), every 4096th where under 250 ns (learning.hpp).
  // Typically: the median of the tier's recent runs, so one preempted call
  // does not count.
  static constexpr std::uint32_t kTimeSome = 15, kTimeAll = 0, kTimeFew = 255, kTimeRare = 4095;
  std::atomic<std::uint32_t> timed_mask{kTimeSome};
  // A settled decision is re-made when the thread's call count & this mask is
  // 0: every 64th call, doubling up to every 4096th while re-decisions of
  // short calls keep confirming it (a re-decision costs microseconds);
  // every call where calls take a millisecond or more (kRedecideEachNs).
  static constexpr std::uint32_t kRedecideMin = 63, kRedecideMax = 4095;
  std::atomic<std::uint32_t> redecide_mask{kRedecideMin};
  // Set on a bucket of awake workers once its serial runs outlast the time
  // after which the workers count as asleep (the profile's tbb_idle_us):
  // each serial call then puts them to sleep itself, so the calls keep one
  // history (plan_call).
  std::atomic<bool> serial_sleeps{false};
  // Set on a bucket of awake workers while a re-measurement of serial is
  // under way (TierBook::refresh): its runs, back to back, let the workers
  // sleep, and the calls stay here until it is done (plan_call). Moved to
  // the sleeping workers' bucket after two of its five runs, a 2^16-float
  // where() took serial there for ~1 ms of calls at 2x the awake tbb-static
  // time, and the re-measurement resumed on each later visit.
  std::atomic<bool> serial_refresh{false};
  void reset(std::uint64_t generation);

 private:
  std::array<std::atomic<std::uint64_t>, kMasks> cached_{};
  struct OtherDevice {
    std::array<TierSamples, kTierCount> samples;
    std::array<TierBook, kTierCount> books{};
  };
  std::vector<OtherDevice> other_devices_;  // slot 1.. (GPU tiers), guarded by mu
  // Kept in the bucket's own arrays: the first device's and the CPU tiers'.
  static bool own(Tier t, std::size_t slot) { return slot == 0 || tier_device(t) != Device::Gpu; }
  OtherDevice& other(std::size_t slot);  // created on first use
};

class TypeSlot {
 public:
  static constexpr int kBuckets = 64, kResidency = 3, kIdle = 2;
  TypeSlot(Site& site, const TypeKey* key) : site(site), key(key) {}
  ~TypeSlot();
  // Inline: on every call; creating the bucket is the out-of-line part.
  BucketState& bucket(int log2n, int residency, int idle) {
    return bucket_at(static_cast<std::size_t>((log2n * kResidency + residency) * kIdle + idle));
  }
  // Whether `b` is a bucket of sleeping workers (idle is the index's last digit).
  static bool for_sleeping_workers(const BucketState& b) { return b.index % kIdle == 1; }
  // The bucket of the same size and residency with the workers awake
  // (created on first use); `b` is one of this slot's buckets of sleeping workers.
  BucketState& awake_twin(const BucketState& b) { return bucket_at(static_cast<std::size_t>(b.index - 1)); }
  // Every bucket created so far, with its index (for persisting history).
  template <class F>
  void for_each_bucket(F&& f) {
    for (std::size_t i = 0; i < buckets_.size(); ++i)
      if (auto* b = buckets_[i].load(std::memory_order_acquire)) f(static_cast<int>(i), *b);
  }
  Site& site;
  const TypeKey* const key;
  std::atomic<float> cpu_ns_per_elem{0};  // learned from serial runs on cached data
  // Whether a run of tier t is a warm-up whose time says nothing about the
  // tier: the first run at this slot in this runtime (cold code, lazy
  // binding, the data's first trip through the caches) and a GPU tier's
  // first (module loading, the first launch). Later runs in any size bucket
  // count, so a new bucket learns from its first call.
  bool warm_up(std::uint64_t generation, Tier t);

 private:
  static constexpr std::uint64_t kFirstRun = std::uint64_t{1} << 31;  // tier bits below, the generation above
  static_assert(kTierCount < 31);
  std::atomic<std::uint64_t> warm_{0};
  std::array<std::atomic<BucketState*>, kBuckets * kResidency * kIdle> buckets_{};
  BucketState& bucket_at(std::size_t index) {
    auto& cell = buckets_[index];
    if (BucketState* b = cell.load(std::memory_order_acquire)) return *b;
    return create_bucket(cell);
  }
  BucketState& create_bucket(std::atomic<BucketState*>& cell);
};

class Site {
 public:
  Site(std::string name, OpClass op, std::uint32_t tiers, CostHint hint)
      : name_(std::move(name)), op_(op), tiers_(tiers), hint_(hint) {
    for (int t = 0; t < kTierCount; ++t)
      offers_gpu_ |= (tiers & tier_bit(static_cast<Tier>(t))) && tier_device(static_cast<Tier>(t)) == Device::Gpu;
  }
  ~Site();
  const std::string& name() const noexcept { return name_; }
  OpClass op() const noexcept { return op_; }
  std::uint32_t tiers() const noexcept { return tiers_; }
  // Every site created so far in this process.
  static void for_each(const std::function<void(Site&)>& f);
  const CostHint& hint() const noexcept { return hint_; }
  bool offers_gpu() const noexcept { return offers_gpu_; }
  // Inline: on every call; a new signature is the out-of-line part.
  TypeSlot& slot(const TypeKey* type_key) {
    for (int i = 0; i < kSlots; ++i)
      if (keys_[static_cast<std::size_t>(i)].load(std::memory_order_acquire) == type_key)
        return *slots_[static_cast<std::size_t>(i)].load(std::memory_order_acquire);
    return add_slot(type_key);
  }
  // Every signature seen here (for persisting history).
  template <class F>
  void for_each_slot(F&& f) {
    for (int i = 0; i < kSlots; ++i)
      if (auto* s = slots_[static_cast<std::size_t>(i)].load(std::memory_order_acquire)) f(*s);
  }

 private:
  static constexpr int kSlots = 8;
  TypeSlot& add_slot(const TypeKey* type_key);
  std::string name_;
  OpClass op_;
  std::uint32_t tiers_;
  CostHint hint_;
  bool offers_gpu_ = false;
  std::mutex mu_;
  std::array<std::atomic<const TypeKey*>, kSlots> keys_{};
  std::array<std::atomic<TypeSlot*>, kSlots> slots_{};
};

}  // namespace veda::detail
