// Fuzz target: the machine-profile loader (MachineProfile::from_json, what
// reads ~/.cache/veda and Config::profile files). Contract: any input either
// loads or is rejected with an exception that load_profile() turns into "re-
// measure" (std::exception); nothing crashes; a profile that loads writes
// JSON that loads again to the same text.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "runtime/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = veda::detail::MachineProfile::from_json(text);
    const std::string once = p.to_json();
    if (veda::detail::MachineProfile::from_json(once).to_json() != once) __builtin_trap();
  } catch (const std::exception&) {
  }
  return 0;
}
