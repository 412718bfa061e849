// Fuzz target: the decision-record parser behind VEDA_REPLAY
// (DecisionReplay, runtime/decision_log.cpp). Contract: any input either
// loads or is rejected with a veda::ConfigError that names the field
// ("replay") and, past the header, the line at fault; nothing else is
// thrown, nothing crashes; a record that loads holds exactly one recorded
// call per line after the header (none dropped, none invented: a size that
// overflows is an error, never 0).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/decision_log.hpp"
#include "veda/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const veda::detail::DecisionReplay r(veda::detail::DecisionReplay::FromText{}, text, "fuzz.rec", "replay");
    // Lines after the header, as the parser counts them (a last line needs no '\n').
    std::uint64_t lines = 0;
    for (std::size_t pos = text.find('\n'); pos != std::string_view::npos && pos + 1 < text.size();
         pos = text.find('\n', pos + 1))
      ++lines;
    if (r.remaining() != lines) __builtin_trap();
  } catch (const veda::ConfigError& e) {
    if (e.field() != "replay") __builtin_trap();
    const std::string what = e.what();
    if (what.find("fuzz.rec") == std::string::npos) __builtin_trap();  // the file is named
  }
  return 0;
}
