// The instruction sets veda's own CPU kernels may use: what the CPU has,
// capped by VEDA_MAX_CPU_ISA (as oneDNN's ONEDNN_MAX_CPU_ISA caps its
// kernels). The cap lets one machine run the code a smaller CPU runs: CI
// runs the determinism and kernel tests under `avx2` and `sse2` on an
// AVX-512 machine, so an AVX2-only CPU's path is not first met by a user.
// It also masks CpuInfo (detect_cpu), so the OpenBLAS kernel set veda
// chooses and the calibration's peak follow it.
//
// Read once per process. Thread-safety: both functions may be called from
// any thread.
#pragma once

#include <optional>
#include <string_view>

namespace veda::detail {

enum class Isa { Sse2, Avx, Avx2, Avx512 };  // Avx2 includes FMA; Avx512 is AVX-512F

// The level that `text` names ("sse2", "avx", "avx2", "avx512", any case);
// nullopt for anything else.
std::optional<Isa> parse_isa(std::string_view text);
const char* to_string(Isa isa);  // the name parse_isa reads

// VEDA_MAX_CPU_ISA's level; nullopt when unset or empty. A value that names
// no level is a ConfigError naming the variable (the runtime's start reads
// it first, so a bad value stops it before any work).
std::optional<Isa> isa_cap();

// Whether a kernel may use `isa` in this process: the CPU has it and the
// cap allows it.
bool cpu_has(Isa isa);

}  // namespace veda::detail
