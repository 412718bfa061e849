// Decision record and replay (Config::record / VEDA_RECORD, Config::replay /
// VEDA_REPLAY).
//
// A record is a text file: a header line, then one line per placement
// decision in the order the runtime made them:
//
//   <op class> TAB <n> TAB <tier> TAB <site name>
//
// Replay groups the lines by site (name and op class) and hands each call of
// a site the tier recorded for the same call of that site, in order; the
// call then runs on that tier as if forced (a GPU tier without a usable GPU
// runs on the CPU and says so, as a forced one does). Per-site order is what
// a program that calls a site from one thread at a time reproduces exactly.
// A call whose site has no more recorded calls, or whose size differs from
// the recorded one, throws veda::ReplayMismatch naming the site, the call's
// position and both sizes: that file is from another program or input.
//
// Thread-safety: both classes lock internally; calls may come from any thread.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "veda/detail/dispatch.hpp"

namespace veda::detail {

class Site;

class DecisionRecorder {
 public:
  // Creates (truncates) the file; ConfigError naming `field` if it cannot.
  DecisionRecorder(const std::string& path, const std::string& field);
  void add(const Site& site, std::size_t n, Tier tier);

 private:
  std::mutex mu_;
  std::ofstream out_;
  std::uint64_t count_ = 0;
};

class DecisionReplay {
 public:
  // Reads the whole file; ConfigError naming `field` if it cannot be read or
  // is not a decision record (with the line at fault).
  DecisionReplay(const std::string& path, const std::string& field);
  // The recorded tier of this call (ReplayMismatch if the file has none).
  Tier next(const Site& site, std::size_t n);
  // Recorded calls that this run has not made (yet).
  std::uint64_t remaining() const;

 private:
  struct Entry {
    std::size_t n;
    Tier tier;
  };
  struct Queue {
    std::vector<Entry> calls;
    std::size_t taken = 0;
  };
  mutable std::mutex mu_;
  std::string path_;
  std::map<std::pair<int, std::string>, Queue> sites_;  // (op class, name)
};

}  // namespace veda::detail
