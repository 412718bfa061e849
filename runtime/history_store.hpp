// HistoryStore: the scheduler's measurements kept across processes, as
// StarPU keeps its history-based performance models: one JSON file per
// machine (named by the profile's key, next to the cached profile). Loaded
// when the runtime starts; a bucket starts from its stored samples, so a
// program's first call is placed from what earlier runs measured. Written
// back at shutdown over what the file held (sites this run did not call keep
// theirs). A file that cannot be read is ignored with a warning and replaced.
// The file follows runtime/file_io.hpp's rules: read only if it is a regular
// file of ours under kHistoryMaxBytes, in a private cache directory; with no
// cache directory (profile_cache_dir() empty) or an unusable one nothing is
// loaded or written.
//
// A site is found by its name, op class and element-type signature
// (TypeKey's type name), so a rebuilt program keeps its history as long as
// those stay the same.
//
// Thread-safety: seed() may be called from any thread (it only reads what
// was loaded); the constructor and save() by the runtime's start and end.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/sites.hpp"

namespace veda::detail {

class HistoryStore {
 public:
  explicit HistoryStore(std::string path);  // loads `path` if it exists
  const std::string& path() const noexcept { return path_; }
  // Fills bucket `b` of `slot`, just reset for this runtime, from the stored
  // samples (the caller holds b.mu), and the slot's per-element cost.
  void seed(const Site& site, TypeSlot& slot, BucketState& b) const;
  // Writes every bucket measured in runtime `generation`, merged over the
  // loaded file; atomically (temporary file + rename). False on I/O failure,
  // with the reason in save_error(); true without writing when disabled.
  bool save(std::uint64_t generation);
  const std::string& save_error() const noexcept { return error_; }
  bool enabled() const noexcept { return enabled_; }
  std::size_t slots() const noexcept { return slots_.size(); }

 private:
  using Samples = std::vector<std::pair<float, float>>;  // (us, n), oldest first
  struct Slot {
    float cpu_ns_per_elem = 0;
    std::map<int, std::array<Samples, kTierCount>> buckets;
  };
  static std::string key(const Site& site, const TypeSlot& slot);
  std::string path_;
  bool enabled_ = false;  // a private cache directory holds the file
  std::string error_;
  std::map<std::string, Slot> slots_;
};

}  // namespace veda::detail
