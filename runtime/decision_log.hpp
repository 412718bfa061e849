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
// A call whose site has no more recorded calls, whose size differs from
// the recorded one, or whose recorded tier the site does not offer, throws
// veda::ReplayMismatch naming the site, the call's position and both sizes
// (or the tier): that file is from another program or input.
//
// Files (runtime/file_io.hpp): the record is opened without following a
// symbolic link and must be a regular file (a FIFO or device is a
// ConfigError at start); a failed write (a full disk) is logged as an error
// once, and at shutdown, so a truncated record is never silent. The replay
// file must be a regular file of at most kRecordMaxBytes.
//
// Thread-safety: both classes lock internally; calls may come from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/file_io.hpp"
#include "veda/detail/dispatch.hpp"

namespace veda::detail {

class Site;

class DecisionRecorder {
 public:
  // Creates (truncates) the file; ConfigError naming `field` if it cannot,
  // or if it is not a regular file.
  DecisionRecorder(const std::string& path, const std::string& field);
  // Closes the file; logs an error if any write or the close failed.
  ~DecisionRecorder();
  void add(const Site& site, std::size_t n, Tier tier);

 private:
  void report_failure();  // once; the caller holds mu_
  std::mutex mu_;
  std::string path_;
  FileWriter out_;
  bool reported_ = false;
  std::uint64_t count_ = 0;
};

class DecisionReplay {
 public:
  // Reads the whole file; ConfigError naming `field` if it cannot be read or
  // is not a decision record (with the line at fault).
  DecisionReplay(const std::string& path, const std::string& field);
  // Parses `text` as if read from `path` (the fuzz target's entry point).
  struct FromText {};
  DecisionReplay(FromText, std::string_view text, const std::string& path, const std::string& field);
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
  void parse(std::string_view text, const std::string& field);
  mutable std::mutex mu_;
  std::string path_;
  std::map<std::pair<int, std::string>, Queue> sites_;  // (op class, name)
};

}  // namespace veda::detail
