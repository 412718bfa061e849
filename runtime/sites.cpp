#include "runtime/sites.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>

#include "runtime/logging.hpp"
#include "veda/detail/settled_plans.hpp"

namespace veda::detail {

void TierSamples::add(double us, double n) {
  us_[next_] = static_cast<float>(us);
  n_[next_] = static_cast<float>(n);
  next_ = static_cast<std::uint8_t>((next_ + 1) % kRing);
  count_ = static_cast<std::uint8_t>(std::min<int>(count_ + 1, kRing));
}

double TierSamples::correction(double a, double b) const {
  if (count_ == 0) return 1.0;
  const int k = std::min<int>(count_, kRecent);
  std::array<double, kRing> r{};
  for (int j = 0; j < k; ++j) {  // the newest k, walking back from next_
    const auto i = static_cast<std::size_t>((next_ + kRing - 1 - j) % kRing);
    r[static_cast<std::size_t>(j)] = us_[i] / std::max(a + b * n_[i], 1e-3);
  }
  // The lower median: timing noise only ever adds (preemption, a wake-up, a
  // cold cache), so of two samples the smaller is the better guess.
  auto mid = r.begin() + (k - 1) / 2;
  std::nth_element(r.begin(), mid, r.begin() + k);
  return std::max(*mid, 1e-3);
}

template <class Value>
double TierSamples::lower_median(Value value) const {
  if (count_ == 0) return 0;
  const int k = std::min<int>(count_, kRecent);
  std::array<double, kRing> r{};
  for (int j = 0; j < k; ++j)
    r[static_cast<std::size_t>(j)] = value(static_cast<std::size_t>((next_ + kRing - 1 - j) % kRing));
  auto mid = r.begin() + (k - 1) / 2;
  std::nth_element(r.begin(), mid, r.begin() + k);
  return *mid;
}

double TierSamples::low_correction(double a, double b) const {
  if (count_ < 2) return 0;
  double lo = std::numeric_limits<double>::infinity(), second = lo;
  for_each([&](double us, double n) {
    const double r = us / std::max(a + b * n, 1e-3);
    if (r < lo) second = std::exchange(lo, r);
    else if (r < second) second = r;
  });
  return std::max(second, 1e-3);
}

double TierSamples::median_ns_per_elem() const {
  return lower_median([this](std::size_t i) { return 1e3 * us_[i] / std::max(n_[i], 1.0f); });
}

double TierSamples::median_us() const {
  return lower_median([this](std::size_t i) { return static_cast<double>(us_[i]); });
}

void BucketState::reset(std::uint64_t gen) {
  generation = gen;
  for (auto& s : samples) s.reset();
  books.fill({});
  other_devices_.clear();
  for (auto& c : cached_slot) c.store(0, std::memory_order_relaxed);
  wake_last_ns = wake_spacing_ns = 0;
  wake_regions = 0;
  busy_ns = 0;
  timed_mask.store(kTimeSome, std::memory_order_relaxed);
  redecide_mask.store(kRedecideMin, std::memory_order_relaxed);
  serial_sleeps.store(false, std::memory_order_relaxed);
  serial_refresh.store(false, std::memory_order_relaxed);
  for (auto& e : explanation) e.reset();
  clear_decisions();
  gpu_us.store(0, std::memory_order_relaxed);
  coexec_fraction.store(0, std::memory_order_relaxed);
  coexec_devices.store(1, std::memory_order_relaxed);
}

void BucketState::cache_decision(std::size_t mask, std::uint64_t packed) noexcept {
  const std::uint64_t old = cached_[mask].exchange(packed, std::memory_order_acq_rel);
  if (old != 0 && old != packed) invalidate_settled_plans();  // after the store: see offer_settled
}

void BucketState::clear_decisions() noexcept {
  for (auto& c : cached_) c.store(0, std::memory_order_relaxed);
  invalidate_settled_plans();
}

void BucketState::drop_decision(std::size_t mask) noexcept {
  const std::uint64_t old = cached_[mask].exchange(0, std::memory_order_acq_rel);
  if (old != 0 && decided_tier(old) == Tier::Serial) invalidate_settled_plans();
}

BucketState::OtherDevice& BucketState::other(std::size_t slot) {
  if (other_devices_.size() < slot) other_devices_.resize(slot);
  return other_devices_[slot - 1];
}

TierSamples& BucketState::samples_on(Tier t, std::size_t slot) {
  return (own(t, slot) ? samples : other(slot).samples)[static_cast<std::size_t>(t)];
}

const TierSamples& BucketState::samples_on(Tier t, std::size_t slot) const {
  static const TierSamples kNone;
  if (own(t, slot)) return samples[static_cast<std::size_t>(t)];
  return other_devices_.size() < slot ? kNone : other_devices_[slot - 1].samples[static_cast<std::size_t>(t)];
}

TierBook& BucketState::book_on(Tier t, std::size_t slot) {
  return (own(t, slot) ? books : other(slot).books)[static_cast<std::size_t>(t)];
}

const TierBook& BucketState::book_on(Tier t, std::size_t slot) const {
  static const TierBook kNone;
  if (own(t, slot)) return books[static_cast<std::size_t>(t)];
  return other_devices_.size() < slot ? kNone : other_devices_[slot - 1].books[static_cast<std::size_t>(t)];
}

bool TypeSlot::warm_up(std::uint64_t generation, Tier t) {
  const std::uint64_t bit = tier_device(t) == Device::Gpu ? std::uint64_t{1} << static_cast<int>(t) : kFirstRun;
  std::uint64_t old = warm_.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t cur = (old >> 32) == generation ? old : generation << 32;
    if ((cur & bit) && (cur & kFirstRun)) return false;
    const std::uint64_t next = cur | bit | kFirstRun;
    if (warm_.compare_exchange_weak(old, next, std::memory_order_relaxed)) return true;
  }
}

TypeSlot::~TypeSlot() {
  for (auto& b : buckets_) delete b.load();
}

BucketState& TypeSlot::create_bucket(std::atomic<BucketState*>& cell) {
  BucketState* b = nullptr;
  auto* fresh = new BucketState;
  fresh->index = static_cast<int>(&cell - buckets_.data());
  fresh->slot = this;
  if (cell.compare_exchange_strong(b, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread won
  return *b;
}

Site::~Site() {
  for (auto& s : slots_) delete s.load();
}

TypeSlot& Site::add_slot(const TypeKey* key) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < kSlots; ++i) {
    auto& k = keys_[static_cast<std::size_t>(i)];
    if (k.load() == key) return *slots_[static_cast<std::size_t>(i)].load();
    if (k.load() == nullptr) {
      slots_[static_cast<std::size_t>(i)].store(new TypeSlot(*this, key), std::memory_order_release);
      k.store(key, std::memory_order_release);
      return *slots_[static_cast<std::size_t>(i)].load();
    }
  }
  return *slots_[kSlots - 1].load();  // more signatures than slots: share the last
}

namespace {
struct SiteKeyHash {
  std::size_t operator()(const std::pair<const void*, std::string>& k) const noexcept {
    return std::hash<const void*>{}(k.first) * 31 + std::hash<std::string>{}(k.second);
  }
};
// Sites outlive every runtime (last-decision records point at them), so the
// registry is never destroyed. Names are meant to label call sites; a
// program that makes one per call (say "layer-" + i) would grow it without
// bound, so past kMaxSites every new name of a function or op shares one
// overflow site (its history then mixes those names).
struct Registry {
  std::mutex mu;
  std::unordered_map<std::pair<const void*, std::string>, std::unique_ptr<Site>, SiteKeyHash> sites;
  std::unordered_map<const void*, std::unique_ptr<Site>> overflow;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

Site* site_for_locked(const void* identity, std::string_view name, OpClass op, std::uint32_t tiers,
                      const CostHint& hint) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto key = std::make_pair(identity, std::string(name));
  if (auto it = r.sites.find(key); it != r.sites.end()) return it->second.get();
  if (r.sites.size() >= kMaxSites) {
    auto& s = r.overflow[identity];
    if (!s) {
      if (r.overflow.size() == 1)
        log().warn("more than {} distinct call-site names: '{}' and later new names share one site per function "
                   "(name call sites, not calls)", kMaxSites, name);
      s = std::make_unique<Site>("(names past " + std::to_string(kMaxSites) + ")", op, tiers, hint);
    }
    return s.get();
  }
  auto& s = r.sites[std::move(key)];
  s = std::make_unique<Site>(std::string(name), op, tiers, hint);
  return s.get();
}

// A call with a name (an op's `name` option) looks its site up on every
// call; the registry's lock and string hash were half the cost of a named
// 16-float veda::sum. Each thread keeps the sites it found in a small
// direct-mapped cache (sites are never freed, so a cached pointer stays
// valid; a name longer than an entry holds always takes the registry).
// Trivially destructible, so calls from late thread_local destructors work.
struct CachedSite {
  static constexpr std::size_t kName = 44;
  const void* identity = nullptr;
  Site* site = nullptr;
  std::uint32_t len = 0;
  char name[kName]{};
};
static_assert(sizeof(CachedSite) == 64);
constexpr std::size_t kCachedSites = 16;

std::size_t cache_index(const void* identity, std::string_view name) noexcept {
  auto h = reinterpret_cast<std::uintptr_t>(identity) >> 4;
  h ^= name.size() * 0x9E3779B1u;
  if (!name.empty()) h ^= static_cast<unsigned char>(name.back()) * 0x85EBCA77u;
  return static_cast<std::size_t>((h ^ (h >> 7)) % kCachedSites);
}

// Call-site names are short: comparing inline, a word at a time, costs less
// than the call to memcmp (a third of a cache hit's cost).
bool same_name(const CachedSite& e, std::string_view name) noexcept {
  const std::size_t n = name.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t a, b;
    std::memcpy(&a, name.data() + i, 8);
    std::memcpy(&b, e.name + i, 8);
    if (a != b) return false;
  }
  for (; i < n; ++i)
    if (name[i] != e.name[i]) return false;
  return true;
}
}  // namespace

Site* site_for(const void* identity, std::string_view name, OpClass op, std::uint32_t tiers,
               const CostHint& hint) {
  thread_local CachedSite cache[kCachedSites];
  CachedSite& e = cache[cache_index(identity, name)];
  if (e.identity == identity && e.len == name.size() && same_name(e, name))
    return e.site;
  Site* s = site_for_locked(identity, name, op, tiers, hint);
  if (name.size() <= CachedSite::kName) {
    e.identity = identity;
    e.site = s;
    e.len = static_cast<std::uint32_t>(name.size());
    name.copy(e.name, name.size());
  }
  return s;
}

void Site::for_each(const std::function<void(Site&)>& f) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (auto& [key, site] : r.sites) f(*site);
  for (auto& [key, site] : r.overflow) f(*site);
}

}  // namespace veda::detail
