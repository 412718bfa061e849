// A cache directory of the test's own (XDG_CACHE_HOME, so the profile
// cache and learned history land there) with learned history on (the test
// environment turns it off): removed, and the environment restored, at
// scope exit.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace veda_test {

struct PrivateCache {
  explicit PrivateCache(const std::string& prefix)
      : dir(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    if (const char* x = std::getenv("XDG_CACHE_HOME")) old_cache = x;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    unsetenv("VEDA_HISTORY");
  }
  ~PrivateCache() {
    std::filesystem::remove_all(dir);
    if (old_cache.empty()) unsetenv("XDG_CACHE_HOME");
    else setenv("XDG_CACHE_HOME", old_cache.c_str(), 1);
    setenv("VEDA_HISTORY", "0", 1);
  }
  PrivateCache(const PrivateCache&) = delete;
  PrivateCache& operator=(const PrivateCache&) = delete;
  const std::string dir;
  std::string old_cache;
};

}  // namespace veda_test
