// Contract: VEDA_MAX_CPU_ISA (sse2, avx, avx2, avx512; any case) caps the
// instruction sets of veda's own CPU kernels: cpu_has(level) is exactly
// "the CPU has it and the cap allows it"; CpuInfo shows no feature above
// the cap and keeps those below it; the OpenBLAS kernel set veda chooses
// stays within it (Haswell/Zen under avx2, Sandybridge under avx, Prescott
// under sse2); `veda info` says the cap is on; the kernels chosen under it
// compute right. A value that names no level is a ConfigError naming the
// variable, thrown at every start of the runtime, before any work. CTest
// runs this file uncapped, under each level in VEDA_ISAS
// (cpu_isa_test.avx2, cpu_isa_test.sse2) and with a bad value
// (cpu_isa_test.avx3).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/cpu_isa.hpp"
#include "veda/veda.hpp"

using veda::detail::hardware_has;
using veda::detail::Isa;

namespace {
const Isa kLevels[] = {Isa::Sse2, Isa::Avx, Isa::Avx2, Isa::Avx512};

// This run's VEDA_MAX_CPU_ISA names no level.
bool bad_value() {
  const char* v = std::getenv("VEDA_MAX_CPU_ISA");
  return v && *v && !veda::detail::parse_isa(v);
}
}  // namespace

TEST_CASE("the levels' names parse in any case; anything else does not") {
  CHECK(veda::detail::parse_isa("sse2") == Isa::Sse2);
  CHECK(veda::detail::parse_isa("AVX") == Isa::Avx);
  CHECK(veda::detail::parse_isa("Avx2") == Isa::Avx2);
  CHECK(veda::detail::parse_isa("avx512") == Isa::Avx512);
  for (const char* bad : {"", "avx3", "avx-512", "sse", "avx2 ", "native"}) CHECK_FALSE(veda::detail::parse_isa(bad));
  for (Isa i : kLevels) CHECK(veda::detail::parse_isa(veda::detail::to_string(i)) == i);
}

TEST_CASE("kernels, CpuInfo and the OpenBLAS kernel set see exactly what the cap allows") {
  if (bad_value()) return;  // cpu_isa_test.avx3's case is the next one
  const auto cap = veda::detail::isa_cap();
  const auto allowed = [&](Isa l) { return !cap || l <= *cap; };
  for (Isa l : kLevels) {
    CAPTURE(veda::detail::to_string(l));
    CHECK(veda::detail::cpu_has(l) == (hardware_has(l) && allowed(l)));
    CHECK(veda::detail::cap_hides(l) == (hardware_has(l) && !allowed(l)));
  }
  veda::init(veda::Config::builder().gpu(false).build());
  const veda::CpuInfo& cpu = veda::get_runtime().cpu();
  if (!allowed(Isa::Avx2)) CHECK_FALSE((cpu.avx2 || cpu.fma));
  if (!allowed(Isa::Avx512)) CHECK_FALSE((cpu.avx512 || cpu.avx512_bf16));
  if (allowed(Isa::Avx2) && hardware_has(Isa::Avx2)) CHECK((cpu.avx2 && cpu.fma));
  const std::string info = veda::get_runtime().describe();
  CAPTURE(info);
  if (!cap) {
    CHECK(info.find("VEDA_MAX_CPU_ISA") == std::string::npos);
  } else {
    CHECK(info.find(std::string("capped at ") + to_string(*cap) + " by VEDA_MAX_CPU_ISA") != std::string::npos);
    // veda's choice of OpenBLAS kernels, unless the caller made one.
    if (!std::getenv("OPENBLAS_CORETYPE") && info.find("BLAS: none") == std::string::npos &&
        hardware_has(Isa::Avx2)) {
      if (*cap == Isa::Avx2)
        CHECK((info.find("OPENBLAS_CORETYPE=Haswell") != std::string::npos ||
               info.find("OPENBLAS_CORETYPE=Zen") != std::string::npos));
      if (*cap == Isa::Avx) CHECK(info.find("OPENBLAS_CORETYPE=Sandybridge") != std::string::npos);
      if (*cap == Isa::Sse2) CHECK(info.find("OPENBLAS_CORETYPE=Prescott") != std::string::npos);
    }
  }
  // The kernels chosen under the cap compute right: a sum over the
  // contiguous kernel and a product on each CPU GEMM tier, exactly.
  std::vector<double> x(4099);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 17);
  double expect = 0;
  for (double v : x) expect += v;
  CHECK(veda::sum(x) == expect);
  const std::size_t n = 67;
  std::vector<float> a(n * n), p(n * n, 0.0f), ap(n * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) - 6.0f;
  for (std::size_t k = 0; k < n; ++k) p[k * n + (k + 1) % n] = 1.0f;  // a permutation, not symmetric
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) ap[r * n + c] = a[r * n + (c + n - 1) % n];
  for (const char* tier : {"cpu-tiled", "cpu-blas"}) {
    CAPTURE(tier);
    const auto c = veda::matmul(veda::Array<float>(n, n, a), veda::Array<float>(n, n, p), {.tier = tier});
    CHECK(std::vector<float>(c.host().begin(), c.host().end()) == ap);
  }
  veda::shutdown();
}

TEST_CASE("a value that names no level stops every start of the runtime") {
  if (!bad_value()) return;  // only in cpu_isa_test.avx3
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      veda::init(veda::Config::builder().gpu(false).build());
      FAIL("started with VEDA_MAX_CPU_ISA=" << std::getenv("VEDA_MAX_CPU_ISA"));
    } catch (const veda::ConfigError& e) {
      CHECK(e.field() == "VEDA_MAX_CPU_ISA");
      CHECK(e.value() == std::getenv("VEDA_MAX_CPU_ISA"));
      CHECK(std::string(e.what()).find("sse2, avx, avx2 or avx512") != std::string::npos);
    }
    CHECK_FALSE(veda::is_running());
  }
}
