#include "runtime/history_store.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "runtime/clock.hpp"
#include "runtime/file_io.hpp"
#include "runtime/logging.hpp"
#include "runtime/profile.hpp"

namespace veda::detail {
namespace {
using nlohmann::json;
constexpr int kFormat = 1;

int tier_by_name(const std::string& name) {
  for (int t = 0; t < kTierCount; ++t)
    if (name == tier_name(static_cast<Tier>(t))) return t;
  return -1;
}

bool valid(double us, double n) { return std::isfinite(us) && us > 0 && std::isfinite(n) && n >= 0; }

// Samples of one device's GPU tiers: only those are kept per device.
bool kept_for(std::size_t device, Tier t) { return device == 0 || tier_device(t) == Device::Gpu; }
constexpr int kMaxDeviceSlot = 63;
}  // namespace

constexpr auto kBlas = static_cast<std::size_t>(Tier::CpuBlas);

HistoryStore::HistoryStore(std::string path, std::function<std::string()> blas_kernels)
    : path_(std::move(path)), ask_blas_(std::move(blas_kernels)) {
  // The history lives in the profile cache, under the same rules: no cache
  // directory, or one that is not private, means nothing kept.
  const std::string dir = profile_cache_dir();
  std::string why;
  if (dir.empty()) {
    log().info("no cache directory (neither XDG_CACHE_HOME nor HOME is set): learned history is not kept");
    return;
  }
  const std::size_t slash = path_.rfind('/');
  if (!ensure_private_dir(slash == std::string::npos ? std::string(".") : path_.substr(0, slash), why)) {
    log().warn("learned history {} is not kept: its directory is not usable ({})", path_, why);
    return;
  }
  enabled_ = true;
  FileText f = read_file(path_, kHistoryMaxBytes, Owner::Me);
  if (!f.ok) {
    if (!f.missing) log().warn("learned history {} is unusable ({}); starting afresh", path_, f.error);
    return;
  }
  try {
    const json j = json::parse(f.text);
    if (j.at("format").get<int>() != kFormat) throw std::runtime_error("unknown format");
    for (const auto& [k, s] : j.at("slots").items()) {
      Slot& slot = slots_[k];
      slot.cpu_ns_per_elem = s.value("cpu_ns_per_elem", 0.0f);
      slot.blas_kernels = s.value("blas_kernels", std::string());
      auto read = [&slot](int device, const json& buckets) {
        for (const auto& [index, tiers] : buckets.items()) {
          auto& bucket = slot.buckets[{device, std::stoi(index)}];
          for (const auto& [name, samples] : tiers.items()) {
            const int t = tier_by_name(name);
            // A tier this build does not have, or a CPU tier under another device.
            if (t < 0 || !kept_for(static_cast<std::size_t>(device), static_cast<Tier>(t))) continue;
            for (const auto& p : samples) {
              const double us = p.at(0).get<double>(), n = p.at(1).get<double>();
              if (valid(us, n)) bucket[static_cast<std::size_t>(t)].emplace_back(static_cast<float>(us), static_cast<float>(n));
            }
          }
        }
      };
      read(0, s.at("buckets"));
      if (s.contains("devices"))
        for (const auto& [device, buckets] : s.at("devices").items()) {
          const int d = std::stoi(device);
          if (d < 1 || d > kMaxDeviceSlot) throw std::runtime_error("device slot " + device + " out of range");
          read(d, buckets);
        }
    }
  } catch (const std::exception& e) {
    log().warn("learned history {} is unusable ({}); starting afresh", path_, e.what());
    slots_.clear();
  }
}

const std::string& HistoryStore::blas_kernels() const {
  std::call_once(blas_once_, [&] { blas_ = ask_blas_ ? ask_blas_() : std::string("none"); });
  return blas_;
}

std::string HistoryStore::key(const Site& site, const TypeSlot& slot) {
  return site.name() + "|" + std::to_string(static_cast<int>(site.op())) + "|" + slot.key->name();
}

void HistoryStore::seed(const Site& site, TypeSlot& slot, BucketState& b) const {
  const auto s = slots_.find(key(site, slot));
  if (s == slots_.end()) return;
  float none = 0;
  slot.cpu_ns_per_elem.compare_exchange_strong(none, s->second.cpu_ns_per_elem, std::memory_order_relaxed);
  // Stored samples place the first calls, but count as unconfirmed until
  // this run measures the tier, whose runs then replace them
  // (TierBook::seeded): the earlier run may have measured on a busy
  // machine, so a runner-up they keep out is re-measured kConfirmNs into
  // this run, judged by its analytic time too.
  const std::int64_t stamp = now_ns();
  for (const auto& [key, tiers] : s->second.buckets) {
    if (key.second != b.index) continue;
    const auto device = static_cast<std::size_t>(key.first);
    for (std::size_t t = 0; t < tiers.size(); ++t) {
      const auto tier = static_cast<Tier>(t);
      if (tiers[t].empty()) continue;  // (read and save keep only kept_for tiers)
      if (t == kBlas && s->second.blas_kernels != blas_kernels()) {
        log().debug("learned history: cpu-blas samples of '{}' were measured with BLAS kernels '{}', this process "
                    "uses '{}': measuring again", site.name(), s->second.blas_kernels, blas_kernels());
        continue;
      }
      TierSamples& samples = b.samples_on(tier, device);
      for (const auto& [us, n] : tiers[t]) samples.add(us, n);
      TierBook& book = b.book_on(tier, device);
      book.last_sample_ns = stamp;
      book.seeded = true;
    }
  }
}

bool HistoryStore::save(std::uint64_t generation) {
  if (!enabled_) return true;  // said once at start: nothing to keep it in
  Site::for_each([&](Site& site) {
    site.for_each_slot([&](TypeSlot& slot) {
      Slot* stored = nullptr;
      slot.for_each_bucket([&](int index, BucketState& b) {
        std::lock_guard lock(b.mu);
        if (b.generation != generation) return;
        if (!stored) stored = &slots_[key(site, slot)];
        if (b.samples[kBlas].count() > 0 && stored->blas_kernels != blas_kernels()) {
          // This run measured cpu-blas with other kernels than the file's
          // samples of this site: those are dropped, not mixed.
          for (auto& [k, tiers] : stored->buckets) tiers[kBlas].clear();
          stored->blas_kernels = blas_kernels();
        }
        for (std::size_t device = 0; device <= b.other_devices(); ++device) {
          auto& bucket = stored->buckets[{static_cast<int>(device), index}];
          for (std::size_t t = 0; t < bucket.size(); ++t) {
            const auto tier = static_cast<Tier>(t);
            if (!kept_for(device, tier)) continue;
            bucket[t].clear();
            b.samples_on(tier, device).for_each([&](float us, float n) { bucket[t].emplace_back(us, n); });
          }
        }
      });
      if (stored) stored->cpu_ns_per_elem = slot.cpu_ns_per_elem.load(std::memory_order_relaxed);
    });
  });
  json j;
  j["format"] = kFormat;
  j["slots"] = json::object();
  for (const auto& [k, slot] : slots_) {
    json& s = j["slots"][k];
    s["cpu_ns_per_elem"] = slot.cpu_ns_per_elem;
    if (!slot.blas_kernels.empty()) s["blas_kernels"] = slot.blas_kernels;
    s["buckets"] = json::object();
    for (const auto& [key, tiers] : slot.buckets)
      for (std::size_t t = 0; t < tiers.size(); ++t)
        for (const auto& [us, n] : tiers[t]) {
          json& bucket = key.first == 0 ? s["buckets"][std::to_string(key.second)]
                                        : s["devices"][std::to_string(key.first)][std::to_string(key.second)];
          bucket[tier_name(static_cast<Tier>(t))].push_back({us, n});
        }
  }
  error_.clear();
  return replace_file(path_, j.dump(), 0600, error_);
}

}  // namespace veda::detail
