// Fuzz target: the environment and Config parsing. The input is a list of
// lines NAME=value; every VEDA_* variable it names is applied on top of a
// default Config (apply_environment), and the fault spec and the tier names
// go through their own parsers. Contract: a bad value is a veda::ConfigError
// (or InvalidArgument for a tier) naming what was wrong; nothing else is
// thrown, nothing crashes, and an accepted Config validates again.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "runtime/fault_injection.hpp"
#include "veda/config.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string, std::less<>> env;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, nl - pos);
    if (const std::size_t eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    pos = nl + 1;
  }
  auto get = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  try {
    const veda::Config c = veda::apply_environment(veda::Config::builder().build(), get);
    (void)veda::apply_environment(c, [](std::string_view) { return std::optional<std::string>(); });
    (void)c.to_string();
  } catch (const veda::ConfigError& e) {
    if (e.field().empty()) __builtin_trap();  // an error must name its field
  }
  try {
    (void)veda::detail::parse_fault_plan(text, "faults");
  } catch (const veda::ConfigError&) {
  }
  try {
    (void)veda::detail::parse_tier(text);
  } catch (const veda::InvalidArgument&) {
  }
  return 0;
}
