// Contract: Config::builder() defaults, chained setters, and build()'s
// validation — every bad field is a ConfigError naming the field and value.
#include <doctest/doctest.h>
#include <tbb/info.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "veda/config.hpp"
#include "veda/error.hpp"

using veda::Config;
using veda::ConfigError;

namespace {
// Runs f, expects a ConfigError, returns it for inspection.
template <class F>
ConfigError config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected veda::ConfigError");
  return ConfigError("", "", "");
}
}  // namespace

TEST_CASE("builder defaults") {
  const Config c = Config::builder().build();
  CHECK(c.gpu());
  CHECK(c.gpu_source() == veda::Source::Default);
  CHECK(c.threads() == tbb::info::default_concurrency());
  CHECK(c.device() == 0);
  CHECK(c.memory_pool_limit().is_fraction());
  CHECK(c.memory_pool_limit().fraction_value() == doctest::Approx(0.9));
  CHECK(c.pinned_staging() == (std::size_t{64} << 20));
  CHECK(c.precision() == veda::Precision::Strict);
  CHECK(c.calibration() == veda::CalibrationMode::Auto);
  CHECK_FALSE(c.deterministic());
  CHECK_FALSE(c.telemetry());
  CHECK(c.log_level() == veda::LogLevel::Warn);
  CHECK(c.pin_workers() == veda::Pinning::Auto);
  CHECK(c.learned_history());
}

TEST_CASE("chained setters are kept") {
  const Config c = Config::builder()
                       .gpu(false)
                       .threads(3)
                       .device(1)
                       .memory_pool_limit(std::uint64_t{1} << 30)
                       .pinned_staging(1 << 20)
                       .precision(veda::Precision::AllowTF32)
                       .calibration(veda::CalibrationMode::Off)
                       .deterministic(42)
                       .telemetry(true)
                       .log_level(veda::LogLevel::Debug)
                       .pin_workers(true)
                       .build();
  CHECK_FALSE(c.gpu());
  CHECK(c.gpu_source() == veda::Source::Builder);
  CHECK(c.threads() == 3);
  CHECK(c.device() == 1);
  CHECK_FALSE(c.memory_pool_limit().is_fraction());
  CHECK(c.memory_pool_limit().bytes_value() == (std::uint64_t{1} << 30));
  CHECK(c.pinned_staging() == (1u << 20));
  CHECK(c.precision() == veda::Precision::AllowTF32);
  CHECK(c.calibration() == veda::CalibrationMode::Off);
  CHECK(c.deterministic());
  CHECK(c.seed() == 42);
  CHECK(c.telemetry());
  CHECK(c.log_level() == veda::LogLevel::Debug);
  CHECK(c.pin_workers() == veda::Pinning::On);
  CHECK(Config::builder().pin_workers(false).build().pin_workers() == veda::Pinning::Off);
}

TEST_CASE("memory_pool_limit takes bytes or a fraction") {
  CHECK(Config::builder().memory_pool_limit(0.5).build().memory_pool_limit().fraction_value() == 0.5);
  CHECK(Config::builder().memory_pool_limit(1.0f).build().memory_pool_limit().is_fraction());
  const auto lim = Config::builder().memory_pool_limit(4096).build().memory_pool_limit();
  CHECK_FALSE(lim.is_fraction());
  CHECK(lim.resolve(1 << 20) == 4096);
  CHECK(veda::MemoryLimit::fraction(0.25).resolve(1000) == 250);
}

TEST_CASE("threads must be in [1, 4096]") {
  for (int bad : {0, -1, 4097}) {
    auto e = config_error([&] { Config::builder().threads(bad).build(); });
    CHECK(e.field() == "threads");
    CHECK(e.value() == std::to_string(bad));
  }
  CHECK(Config::builder().threads(1).build().threads() == 1);
  CHECK(Config::builder().threads(4096).build().threads() == 4096);
}

TEST_CASE("device must be non-negative") {
  auto e = config_error([] { Config::builder().device(-2).build(); });
  CHECK(e.field() == "device");
  CHECK(e.value() == "-2");
  CHECK(std::string(e.what()).find("device") != std::string::npos);
}

TEST_CASE("rank: -1 (none) by default, >= 0 kept, below -1 rejected; builder(base) starts from base") {
  CHECK(Config::builder().build().rank() == -1);
  const Config c = Config::builder().threads(3).deterministic(5).rank(7).build();
  CHECK(c.rank() == 7);
  CHECK(c.to_string().find("rank=7") != std::string::npos);
  CHECK_THROWS_AS(Config::builder().rank(-2).build(), veda::ConfigError);
  const Config d = Config::builder(c).rank(0).build();
  CHECK(d.rank() == 0);
  CHECK(d.threads() == 3);
  CHECK(d.seed() == 5);
}

TEST_CASE("memory_pool_limit validation") {
  SUBCASE("zero bytes") {
    auto e = config_error([] { Config::builder().memory_pool_limit(0).build(); });
    CHECK(e.field() == "memory_pool_limit");
  }
  SUBCASE("negative bytes") {
    auto e = config_error([] { Config::builder().memory_pool_limit(-5).build(); });
    CHECK(e.field() == "memory_pool_limit");
    CHECK(e.value() == "-5");
  }
  SUBCASE("fractions out of (0, 1]") {
    for (double bad : {0.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
      auto e = config_error([&] { Config::builder().memory_pool_limit(bad).build(); });
      CHECK(e.field() == "memory_pool_limit");
    }
  }
}

namespace {
template <class B>
concept TakesBoolPoolLimit = requires(B b) { b.memory_pool_limit(true); };
template <class B>
concept TakesPoolLimits = requires(B b) {
  b.memory_pool_limit(1);
  b.memory_pool_limit(std::size_t{1} << 30);
  b.memory_pool_limit(0.5);
  b.memory_pool_limit(0.5f);
};
}  // namespace

TEST_CASE("memory_pool_limit: a bool is no limit, and no fraction is 0 bytes") {
  // true would have become a 1-byte limit.
  CHECK_FALSE(TakesBoolPoolLimit<Config::Builder>);
  CHECK(TakesPoolLimits<Config::Builder>);
  // A fraction below 2^-64 is 0 bytes of any device, like a 0-byte limit.
  for (double tiny : {1e-300, 1e-20, std::numeric_limits<double>::denorm_min()}) {
    CAPTURE(tiny);
    auto e = config_error([&] { Config::builder().memory_pool_limit(tiny).build(); });
    CHECK(e.field() == "memory_pool_limit");
    CHECK(std::string(e.what()).find("0 bytes") != std::string::npos);
  }
  // Small but not absurd fractions are accepted, and resolve to at least a byte.
  const auto lim = Config::builder().memory_pool_limit(1e-12).build().memory_pool_limit();
  CHECK(lim.resolve(std::uint64_t{16} << 30) == 1);  // 0.017 bytes of 16 GiB
  CHECK(veda::MemoryLimit::fraction(0.25).resolve(1000) == 250);
  CHECK(veda::MemoryLimit::fraction(1.0).resolve(std::uint64_t{80} << 30) == std::uint64_t{80} << 30);
}

TEST_CASE("pinned_staging is 0 or at least 64 KiB") {
  CHECK(Config::builder().pinned_staging(0).build().pinned_staging() == 0);
  CHECK(Config::builder().pinned_staging(65536).build().pinned_staging() == 65536);
  auto e = config_error([] { Config::builder().pinned_staging(1000).build(); });
  CHECK(e.field() == "pinned_staging");
  CHECK(e.value() == "1000");
}

TEST_CASE("out-of-range enum values are rejected") {
  CHECK(config_error([] { Config::builder().precision(static_cast<veda::Precision>(9)).build(); })
            .field() == "precision");
  CHECK(config_error([] {
          Config::builder().calibration(static_cast<veda::CalibrationMode>(-1)).build();
        }).field() == "calibration");
  CHECK(config_error([] { Config::builder().log_level(static_cast<veda::LogLevel>(42)).build(); })
            .field() == "log_level");
}

TEST_CASE("ConfigError is a veda::Error and a std::runtime_error") {
  try {
    Config::builder().threads(0).build();
    FAIL("no throw");
  } catch (const veda::Error& e) {
    CHECK(std::string(e.what()).find("threads") != std::string::npos);
  }
  CHECK_THROWS_AS(Config::builder().threads(0).build(), std::runtime_error);
}

TEST_CASE("to_string names every field") {
  const std::string s = Config::builder().deterministic(7).build().to_string();
  for (const char* f : {"gpu=", "threads=", "device=", "memory_pool_limit=", "pinned_staging=",
                        "precision=", "calibration=", "deterministic=seed 7", "telemetry=",
                        "log_level=", "pin_workers="})
    CHECK_MESSAGE(s.find(f) != std::string::npos, f);
}
