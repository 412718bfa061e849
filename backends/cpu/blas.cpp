#include "backends/cpu/blas.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <cstdlib>
#include <mutex>

#include "backends/cpu/cpu_isa.hpp"
#include "runtime/logging.hpp"

namespace veda::detail {

std::string preferred_coretype(const CpuInfo& cpu) {
  if (cpu.avx512) return cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  if (cpu.avx2 && cpu.fma) return cpu.vendor == "AuthenticAMD" ? "Zen" : "Haswell";
  return {};
}

namespace {
// What each x86 kernel set needs, in CpuInfo's terms. The pre-AVX2 sets
// need less than AVX2, but CpuInfo cannot tell an old CPU's SSE level, so
// they are trusted only where AVX2 (which implies all of it) is present.
// SapphireRapids's extras (AMX, AVX512-FP16) serve only bf16/fp16 GEMM,
// which veda does not call; its sgemm/dgemm are the AVX-512 kernels.
enum class Needs { Avx2, Avx2Fma, Avx512, Avx512Bf16 };
struct KnownCore {
  const char* name;
  Needs needs;
};
constexpr KnownCore kKnownCores[] = {
    {"SapphireRapids", Needs::Avx512Bf16}, {"Cooperlake", Needs::Avx512Bf16}, {"SkylakeX", Needs::Avx512},
    {"Zen", Needs::Avx2Fma},              {"Haswell", Needs::Avx2Fma},       {"Sandybridge", Needs::Avx2},
    {"Nehalem", Needs::Avx2},             {"Penryn", Needs::Avx2},           {"Core2", Needs::Avx2},
    {"Prescott", Needs::Avx2},
};

const KnownCore* known_core(std::string_view core) {
  for (const KnownCore& k : kKnownCores)
    if (core.size() == std::char_traits<char>::length(k.name) &&
        strncasecmp(core.data(), k.name, core.size()) == 0)  // OpenBLAS matches the name in any case
      return &k;
  return nullptr;
}
}  // namespace

std::string coretype_missing(const CpuInfo& cpu, std::string_view core) {
  const KnownCore* k = known_core(core);
  if (!k) return "a kernel set veda does not know (so cannot check)";
  switch (k->needs) {
    case Needs::Avx2: return cpu.avx2 ? "" : "AVX2";
    case Needs::Avx2Fma: return cpu.avx2 && cpu.fma ? "" : "AVX2 and FMA";
    case Needs::Avx512: return cpu.avx512 ? "" : "AVX-512";
    case Needs::Avx512Bf16: return cpu.avx512 && cpu.avx512_bf16 ? "" : "AVX-512 with BF16";
  }
  return "an unknown feature";
}

CoreChoice choose_coretype(const CpuInfo& cpu, const std::string& wanted) {
  CoreChoice c;
  std::string replaced;  // why `wanted` was not taken
  if (!wanted.empty()) {
    if (const std::string missing = coretype_missing(cpu, wanted); missing.empty()) {
      c.core = known_core(wanted)->name;
      c.origin = "OPENBLAS_CORETYPE=" + c.core + " set by veda (fastest when calibrating)";
      return c;
    } else {
      c.rejected = true;
      replaced = "the machine profile's " + wanted + " needs " + missing + ", which this CPU (" +
                 (cpu.model.empty() ? std::string("unknown") : cpu.model) + ") lacks";
    }
  }
  c.core = preferred_coretype(cpu);
  if (!c.core.empty())
    c.origin = "OPENBLAS_CORETYPE=" + c.core + " set by veda (from the CPU's features" +
               (replaced.empty() ? std::string() : "; " + replaced) + ")";
  else
    c.origin = "chosen by OpenBLAS" + (replaced.empty() ? std::string() : " (" + replaced + ")");
  return c;
}

namespace {
void* loaded_handle() {
  void* h = dlopen(VEDA_OPENBLAS_PATH, RTLD_NOW | RTLD_NOLOAD);
  return h ? h : dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
}

Blas load(const CpuInfo& cpu, const std::string& measured) {
  Blas b;
  b.library = VEDA_OPENBLAS_PATH;
  // Already in the process (linked by the program)? Then its kernels are chosen.
  void* h = loaded_handle();
  if (h) {
    b.origin = "chosen by OpenBLAS when the program loaded it";
  } else {
    if (const char* env = std::getenv("OPENBLAS_CORETYPE"); env && *env) {
      b.origin = std::string("OPENBLAS_CORETYPE=") + env + " from the environment";  // the user's choice
    } else {
      // The profile is trusted for speeds, not for what this CPU can execute.
      CoreChoice c = choose_coretype(cpu, measured);
      if (c.rejected) log().warn("OpenBLAS kernels: {}", c.origin);
      if (c.core.empty() && cap_hides(Isa::Avx2)) {  // OpenBLAS itself would see what the cap hides
        c.core = cpu_has(Isa::Avx) ? "Sandybridge" : "Prescott";
        c.origin = "OPENBLAS_CORETYPE=" + c.core + " set by veda (VEDA_MAX_CPU_ISA hides AVX2" +
                   (c.rejected ? "; " + c.origin : std::string()) + ")";
      }
      if (!c.core.empty()) setenv("OPENBLAS_CORETYPE", c.core.c_str(), 0);
      b.origin = c.origin;
    }
    h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      b.library = "libopenblas.so.0";
      h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!h) {
    b.why_not = std::string("OpenBLAS not found: ") + dlerror();
    return b;
  }
  b.sgemm = reinterpret_cast<decltype(b.sgemm)>(dlsym(h, "cblas_sgemm"));
  b.dgemm = reinterpret_cast<decltype(b.dgemm)>(dlsym(h, "cblas_dgemm"));
  b.sgemv = reinterpret_cast<decltype(b.sgemv)>(dlsym(h, "cblas_sgemv"));  // optional: gemm serves without
  b.dgemv = reinterpret_cast<decltype(b.dgemv)>(dlsym(h, "cblas_dgemv"));
  b.set_threads = reinterpret_cast<decltype(b.set_threads)>(dlsym(h, "openblas_set_num_threads"));
  b.get_threads = reinterpret_cast<decltype(b.get_threads)>(dlsym(h, "openblas_get_num_threads"));
  auto corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
  auto config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  if (!b.sgemm || !b.dgemm) {
    b.why_not = "the BLAS library has no cblas_sgemm/cblas_dgemm";
    return b;
  }
  if (corename) b.core = corename();
  if (config) b.config = config();
  b.available = true;
  return b;
}
}  // namespace

const Blas& blas(const CpuInfo& cpu, const std::string& core) {
  static const Blas b = load(cpu, core);
  return b;
}

bool blas_loaded() {
  void* h = loaded_handle();
  if (h) dlclose(h);  // RTLD_NOLOAD took a reference
  return h != nullptr;
}

}  // namespace veda::detail
