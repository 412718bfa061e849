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
// cpu-blas samples also depend on the BLAS kernel set loaded (OpenBLAS
// picks one per process: a program that loads it before veda may get
// slower ones, see backends/cpu/blas.hpp), so each site records the set
// its cpu-blas samples were measured with, and samples measured with
// another set are not used (the tier is measured again).
//
// Thread-safety: seed() may be called from any thread (it only reads what
// was loaded); the constructor and save() by the runtime's start and end.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/sites.hpp"

namespace veda::detail {

class HistoryStore {
 public:
  // Loads `path` if it exists. blas_kernels names the kernel set cpu-blas
  // runs use in this process ("none" without a BLAS); it is asked only for
  // sites with cpu-blas samples, and may load the library.
  HistoryStore(std::string path, std::function<std::string()> blas_kernels);
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
  using Tiers = std::array<Samples, kTierCount>;
  struct Slot {
    float cpu_ns_per_elem = 0;
    std::string blas_kernels;  // what its cpu-blas samples were measured with
    // By (device slot, bucket index): slot 0 holds every tier's samples (the
    // first device's for GPU tiers), the other slots their GPU tiers' (the
    // devices are those of the profile, whose key names every one).
    std::map<std::pair<int, int>, Tiers> buckets;
  };
  static std::string key(const Site& site, const TypeSlot& slot);
  // The kernel set of this process, asked once.
  const std::string& blas_kernels() const;
  std::string path_;
  std::function<std::string()> ask_blas_;
  mutable std::once_flag blas_once_;
  mutable std::string blas_;
  bool enabled_ = false;  // a private cache directory holds the file
  std::string error_;
  std::map<std::string, Slot> slots_;
};

}  // namespace veda::detail
