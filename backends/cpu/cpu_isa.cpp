#include "backends/cpu/cpu_isa.hpp"

#include <strings.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "veda/error.hpp"

namespace veda::detail {
namespace {
constexpr std::pair<const char*, Isa> kLevels[] = {
    {"sse2", Isa::Sse2}, {"avx", Isa::Avx}, {"avx2", Isa::Avx2}, {"avx512", Isa::Avx512}};

// The one reading of the variable: its level, or the text that names none.
struct Cap {
  std::optional<Isa> level;
  std::string bad;
};
const Cap& cap() {
  static const Cap c = [] {
    Cap r;
    if (const char* v = std::getenv("VEDA_MAX_CPU_ISA"); v && *v) {
      r.level = parse_isa(v);
      if (!r.level) r.bad = v;
    }
    return r;
  }();
  return c;
}
}  // namespace

std::optional<Isa> parse_isa(std::string_view text) {
  for (const auto& [name, isa] : kLevels)
    if (text.size() == std::char_traits<char>::length(name) && strncasecmp(text.data(), name, text.size()) == 0)
      return isa;
  return std::nullopt;
}

const char* to_string(Isa isa) {
  for (const auto& [name, level] : kLevels)
    if (level == isa) return name;
  return "?";
}

std::optional<Isa> isa_cap() {
  if (!cap().bad.empty()) throw ConfigError("VEDA_MAX_CPU_ISA", cap().bad, "expected sse2, avx, avx2 or avx512");
  return cap().level;
}

bool cpu_has(Isa isa) { return isa <= cap().level.value_or(Isa::Avx512) && hardware_has(isa); }

bool hardware_has(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  switch (isa) {
    case Isa::Sse2: return true;
    case Isa::Avx: return __builtin_cpu_supports("avx");
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512: return __builtin_cpu_supports("avx512f");
  }
#endif
  (void)isa;
  return false;
}

bool cap_hides(Isa isa) { return hardware_has(isa) && !cpu_has(isa); }

}  // namespace veda::detail
