// The instruction sets veda's own CPU kernels may use: what the CPU has,
// capped by VEDA_MAX_CPU_ISA (as oneDNN's ONEDNN_MAX_CPU_ISA caps its
// kernels). The cap lets one machine run the code a smaller CPU runs: the
// tests run the determinism and kernel tests again under `avx2` and `sse2`,
// so on an AVX-512 CI machine the AVX2 and baseline paths run too, and on an
// AVX2 one the baseline path. It also masks CpuInfo (detect_cpu), so the
// calibration's peak and profile key follow it, and the OpenBLAS kernel set
// veda chooses (Haswell/Zen under avx2, Sandybridge under avx, Prescott,
// which needs SSE3, under sse2).
//
// The variable is read once per process, at the first call of either
// function. Thread-safety: both may be called from any thread.
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
// no level is a ConfigError naming the variable, thrown by every call (the
// runtime's start calls it first, so a bad value stops it before any work).
std::optional<Isa> isa_cap();

// Whether a kernel may use `isa` in this process: the CPU has it and the
// cap allows it. A bad value caps nothing here (kernels run only once the
// runtime has started, which refuses it).
bool cpu_has(Isa isa);

// Whether this CPU (and its OS) supports `isa`, whatever the cap.
bool hardware_has(Isa isa);

// Whether the cap hides `isa` from a CPU that has it.
bool cap_hides(Isa isa);

}  // namespace veda::detail
