// Contract: VEDA_MAX_CPU_ISA (sse2, avx, avx2, avx512; any case) caps the
// instruction sets of veda's own CPU kernels and what CpuInfo reports, so
// the OpenBLAS kernel set veda chooses follows it too; `veda info` says the
// cap is on. A value that names no level is a ConfigError naming the
// variable, thrown at the runtime's start, before any work; the runtime
// then starts with a good value. CTest runs this file uncapped and under
// each level in VEDA_ISAS (cpu_isa_test.avx2, cpu_isa_test.sse2).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/cpu_isa.hpp"
#include "veda/veda.hpp"

using veda::detail::Isa;

TEST_CASE("the levels' names parse in any case; anything else does not") {
  CHECK(veda::detail::parse_isa("sse2") == Isa::Sse2);
  CHECK(veda::detail::parse_isa("AVX") == Isa::Avx);
  CHECK(veda::detail::parse_isa("Avx2") == Isa::Avx2);
  CHECK(veda::detail::parse_isa("avx512") == Isa::Avx512);
  for (const char* bad : {"", "avx3", "avx-512", "sse", "avx2 ", "native"}) CHECK_FALSE(veda::detail::parse_isa(bad));
  for (Isa i : {Isa::Sse2, Isa::Avx, Isa::Avx2, Isa::Avx512})
    CHECK(veda::detail::parse_isa(veda::detail::to_string(i)) == i);
}

TEST_CASE("kernels and CpuInfo see nothing above the cap") {
  const auto cap = veda::detail::isa_cap();
  veda::init(veda::Config::builder().gpu(false).build());
  const veda::CpuInfo& cpu = veda::get_runtime().cpu();
  const std::string info = veda::get_runtime().describe();
  if (!cap) {
    CHECK(info.find("VEDA_MAX_CPU_ISA") == std::string::npos);
  } else {
    CHECK(info.find(std::string("capped at ") + to_string(*cap) + " by VEDA_MAX_CPU_ISA") != std::string::npos);
    for (Isa above : {Isa::Avx, Isa::Avx2, Isa::Avx512})
      if (above > *cap) CHECK_FALSE(veda::detail::cpu_has(above));
    if (*cap < Isa::Avx2) CHECK_FALSE((cpu.avx2 || cpu.fma));
    if (*cap < Isa::Avx512) CHECK_FALSE((cpu.avx512 || cpu.avx512_bf16));
    // OpenBLAS gets a kernel set within the cap (unless the caller chose one).
    if (!std::getenv("OPENBLAS_CORETYPE") && info.find("BLAS: none") == std::string::npos) {
      if (*cap < Isa::Avx2) CHECK(info.find("Prescott") != std::string::npos);
      if (*cap < Isa::Avx512) CHECK(info.find("SkylakeX kernels") == std::string::npos);
    }
  }
#if defined(__x86_64__)
  CHECK(veda::detail::cpu_has(Isa::Sse2));  // the x86-64 baseline, under any cap
#endif
  // The kernels chosen under the cap compute right: a sum over the
  // contiguous kernel and a matmul on each CPU GEMM tier, exactly.
  std::vector<double> x(4099);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 17);
  double expect = 0;
  for (double v : x) expect += v;
  CHECK(veda::sum(x) == expect);
  const std::size_t n = 67;
  std::vector<float> a(n * n), id(n * n, 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) - 6.0f;
  for (std::size_t i = 0; i < n; ++i) id[i * n + i] = 1.0f;
  for (const char* tier : {"cpu-tiled", "cpu-blas"}) {
    CAPTURE(tier);
    const auto c = veda::matmul(veda::Array<float>(n, n, a), veda::Array<float>(n, n, id), {.tier = tier});
    CHECK(std::vector<float>(c.host().begin(), c.host().end()) == a);
  }
  veda::shutdown();
}

TEST_CASE("a value that names no level stops the runtime's start, which then starts with a good one") {
  const char* before = std::getenv("VEDA_MAX_CPU_ISA");
  const std::string saved = before ? before : "";
  setenv("VEDA_MAX_CPU_ISA", "avx3", 1);
  try {
    veda::init(veda::Config::builder().gpu(false).build());
    FAIL("started with VEDA_MAX_CPU_ISA=avx3");
  } catch (const veda::ConfigError& e) {
    CHECK(e.field() == "VEDA_MAX_CPU_ISA");
    CHECK(e.value() == "avx3");
    CHECK(std::string(e.what()).find("sse2, avx, avx2 or avx512") != std::string::npos);
  }
  CHECK_FALSE(veda::is_running());
  if (saved.empty())
    unsetenv("VEDA_MAX_CPU_ISA");
  else
    setenv("VEDA_MAX_CPU_ISA", saved.c_str(), 1);
  veda::init(veda::Config::builder().gpu(false).build());
  CHECK(veda::is_running());
  std::vector<float> y(5, 2.0f);
  CHECK(veda::sum(y) == 10.0f);
  veda::shutdown();
}
