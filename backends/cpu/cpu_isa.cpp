#include "backends/cpu/cpu_isa.hpp"

#include <strings.h>

#include <cstdlib>
#include <string>

#include "veda/error.hpp"

namespace veda::detail {
namespace {
constexpr std::pair<const char*, Isa> kLevels[] = {
    {"sse2", Isa::Sse2}, {"avx", Isa::Avx}, {"avx2", Isa::Avx2}, {"avx512", Isa::Avx512}};

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
  const char* v = std::getenv("VEDA_MAX_CPU_ISA");
  if (!v || !*v) return std::nullopt;
  if (auto isa = parse_isa(v)) return isa;
  throw ConfigError("VEDA_MAX_CPU_ISA", v, "expected sse2, avx, avx2 or avx512");
}

bool cpu_has(Isa isa) {
  // Kernels ask while choosing, once each; a bad value was refused at start.
  static const Isa cap = [] {
    try {
      return isa_cap().value_or(Isa::Avx512);
    } catch (const ConfigError&) {
      return Isa::Avx512;
    }
  }();
  return isa <= cap && hardware_has(isa);
}

}  // namespace veda::detail
