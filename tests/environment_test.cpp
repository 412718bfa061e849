// Contract: apply_environment() applies each VEDA_* variable on top of a
// Config; an empty value counts as unset; every unparsable value is a
// ConfigError whose field() is the variable's name.
#include <doctest/doctest.h>

#include <map>

#include "veda/config.hpp"
#include "veda/error.hpp"

using veda::Config;

namespace {
Config apply(std::map<std::string, std::string> env, Config base = Config::builder().build()) {
  return veda::apply_environment(base, [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

void expect_error(const std::string& var, const std::string& value) {
  try {
    apply({{var, value}});
    FAIL("expected ConfigError for " << var << "=" << value);
  } catch (const veda::ConfigError& e) {
    CHECK(e.field() == var);
    CHECK(std::string(e.what()).find(var) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("no variables: config unchanged") {
  const Config base = Config::builder().threads(2).gpu(false).build();
  const Config c = apply({}, base);
  CHECK(c.threads() == 2);
  CHECK_FALSE(c.gpu());
  CHECK(c.gpu_source() == veda::Source::Builder);
}

TEST_CASE("VEDA_GPU forces the GPU off (or on) and records the source") {
  for (const char* off : {"0", "false", "OFF", " no "}) {
    const Config c = apply({{"VEDA_GPU", off}});
    CHECK_FALSE(c.gpu());
    CHECK(c.gpu_source() == veda::Source::Environment);
  }
  CHECK(apply({{"VEDA_GPU", "1"}}, Config::builder().gpu(false).build()).gpu());
  expect_error("VEDA_GPU", "2");
  expect_error("VEDA_GPU", "maybe");
}

TEST_CASE("empty values count as unset") {
  const Config c = apply({{"VEDA_GPU", ""}, {"VEDA_THREADS", "  "}});
  CHECK(c.gpu());
  CHECK(c.gpu_source() == veda::Source::Default);
}

TEST_CASE("VEDA_THREADS and VEDA_DEVICE") {
  CHECK(apply({{"VEDA_THREADS", "3"}}).threads() == 3);
  CHECK(apply({{"VEDA_DEVICE", "2"}}).device() == 2);
  for (const char* bad : {"0", "-1", "abc", "4097", "3.5", "99999999999999999999"})
    expect_error("VEDA_THREADS", bad);
  for (const char* bad : {"-1", "x", "1e3"}) expect_error("VEDA_DEVICE", bad);
}

TEST_CASE("VEDA_DEVICES: a comma-separated list, or all") {
  CHECK(apply({{"VEDA_DEVICES", "0,2"}}).devices() == std::vector<int>{0, 2});
  CHECK(apply({{"VEDA_DEVICES", "3"}}).device() == 3);
  CHECK(apply({{"VEDA_DEVICES", "all"}}).all_devices());
  for (const char* bad : {"1,1", "0,", ",0", "0;1", "-1", "x"}) expect_error("VEDA_DEVICES", bad);
}

TEST_CASE("VEDA_LOG_LEVEL") {
  CHECK(apply({{"VEDA_LOG_LEVEL", "debug"}}).log_level() == veda::LogLevel::Debug);
  CHECK(apply({{"VEDA_LOG_LEVEL", "WARNING"}}).log_level() == veda::LogLevel::Warn);
  CHECK(apply({{"VEDA_LOG_LEVEL", "off"}}).log_level() == veda::LogLevel::Off);
  expect_error("VEDA_LOG_LEVEL", "loud");
}

TEST_CASE("VEDA_DETERMINISTIC") {
  const Config c = apply({{"VEDA_DETERMINISTIC", "1234"}});
  CHECK(c.deterministic());
  CHECK(c.seed() == 1234);
  CHECK(apply({{"VEDA_DETERMINISTIC", "on"}}).deterministic());
  CHECK_FALSE(apply({{"VEDA_DETERMINISTIC", "off"}}, Config::builder().deterministic(3).build())
                  .deterministic());
  expect_error("VEDA_DETERMINISTIC", "-4");
  expect_error("VEDA_DETERMINISTIC", "seedy");
}

TEST_CASE("VEDA_CALIBRATION and VEDA_PRECISION") {
  CHECK(apply({{"VEDA_CALIBRATION", "off"}}).calibration() == veda::CalibrationMode::Off);
  CHECK(apply({{"VEDA_CALIBRATION", "Force"}}).calibration() == veda::CalibrationMode::Force);
  CHECK(apply({{"VEDA_CALIBRATION", "auto"}}).calibration() == veda::CalibrationMode::Auto);
  expect_error("VEDA_CALIBRATION", "sometimes");
  CHECK(apply({{"VEDA_PRECISION", "tf32"}}).precision() == veda::Precision::AllowTF32);
  expect_error("VEDA_PRECISION", "fp8");
}

TEST_CASE("VEDA_TELEMETRY, VEDA_PIN_WORKERS and VEDA_HISTORY") {
  CHECK(apply({{"VEDA_TELEMETRY", "1"}}).telemetry());
  CHECK(apply({{"VEDA_PIN_WORKERS", "yes"}}).pin_workers() == veda::Pinning::On);
  CHECK(apply({{"VEDA_PIN_WORKERS", "0"}}).pin_workers() == veda::Pinning::Off);
  CHECK(apply({{"VEDA_PIN_WORKERS", "auto"}}, Config::builder().pin_workers(true).build()).pin_workers() ==
        veda::Pinning::Auto);
  CHECK_FALSE(apply({{"VEDA_HISTORY", "0"}}).learned_history());
  expect_error("VEDA_TELEMETRY", "sure");
  expect_error("VEDA_PIN_WORKERS", "10");
  expect_error("VEDA_HISTORY", "maybe");
}

TEST_CASE("VEDA_MEMORY_POOL_LIMIT takes a fraction or a byte count") {
  CHECK(apply({{"VEDA_MEMORY_POOL_LIMIT", "0.5"}}).memory_pool_limit().fraction_value() == 0.5);
  CHECK(apply({{"VEDA_MEMORY_POOL_LIMIT", "2GiB"}}).memory_pool_limit().bytes_value() ==
        (std::uint64_t{2} << 30));
  CHECK(apply({{"VEDA_MEMORY_POOL_LIMIT", "512m"}}).memory_pool_limit().bytes_value() ==
        (std::uint64_t{512} << 20));
  CHECK(apply({{"VEDA_MEMORY_POOL_LIMIT", "4096"}}).memory_pool_limit().bytes_value() == 4096);
  for (const char* bad : {"1.5", "0.0", "0", "12XB", "GiB", "-3", "99999999999TiB"})
    expect_error("VEDA_MEMORY_POOL_LIMIT", bad);
}

TEST_CASE("VEDA_PINNED_STAGING") {
  CHECK(apply({{"VEDA_PINNED_STAGING", "0"}}).pinned_staging() == 0);
  CHECK(apply({{"VEDA_PINNED_STAGING", "128MiB"}}).pinned_staging() == (std::size_t{128} << 20));
  expect_error("VEDA_PINNED_STAGING", "100");
  expect_error("VEDA_PINNED_STAGING", "lots");
}

TEST_CASE("the process environment is read by default") {
  setenv("VEDA_THREADS", "1", 1);
  CHECK(veda::apply_environment(Config::builder().build()).threads() == 1);
  setenv("VEDA_THREADS", "zero", 1);
  CHECK_THROWS_AS(veda::apply_environment(Config::builder().build()), veda::ConfigError);
  unsetenv("VEDA_THREADS");
}
