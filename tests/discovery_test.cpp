// Contract: device discovery never crashes or hangs and always says why no
// GPU is usable: not built, disabled by config, disabled by VEDA_GPU=0, or
// what the CUDA probe found (no driver here). The runtime still works.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>

#include "veda/build_config.hpp"
#include "veda/runtime.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_discovery.hpp"
#endif

TEST_CASE("probe on this machine gives a specific reason or a device") {
  const auto t0 = std::chrono::steady_clock::now();
  const veda::GpuStatus s = veda::detect_gpu();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(31));
  CHECK_FALSE(s.reason.empty());
  if (s.usable) {
    CHECK(s.why == veda::GpuUnavailable::None);
    CHECK(s.selected >= 0);
    CHECK_FALSE(s.devices.empty());
    return;
  }
  CHECK(s.selected == -1);
#if VEDA_HAS_CUDA
  CHECK(s.runtime_version > 0);
  CHECK(s.why != veda::GpuUnavailable::NotBuilt);
  if (s.driver_version == 0) {
    CHECK(s.why == veda::GpuUnavailable::NoDriver);
    CHECK(s.reason.find("driver") != std::string::npos);
  }
#else
  CHECK(s.why == veda::GpuUnavailable::NotBuilt);
  CHECK(s.reason.find("without its CUDA backend") != std::string::npos);
#endif
}

TEST_CASE("disabled by config or by the environment") {
  const auto by_config = veda::detect_gpu(veda::Config::builder().gpu(false).build());
  CHECK_FALSE(by_config.usable);
  setenv("VEDA_GPU", "0", 1);
  const auto by_env = veda::detect_gpu();
  unsetenv("VEDA_GPU");
  CHECK_FALSE(by_env.usable);
#if VEDA_HAS_CUDA
  CHECK(by_config.why == veda::GpuUnavailable::DisabledByConfig);
  CHECK(by_config.reason == "disabled by config (gpu(false))");
  CHECK(by_env.why == veda::GpuUnavailable::DisabledByEnvironment);
  CHECK(by_env.reason == "disabled by VEDA_GPU=0");
#else
  CHECK(by_config.why == veda::GpuUnavailable::NotBuilt);
#endif
}

TEST_CASE("the runtime reports what it found") {
  veda::init(veda::Config::builder().threads(2).build());
  const veda::Runtime& rt = veda::get_runtime();
  CHECK(rt.cpu().threads == 2);
  CHECK(rt.cpu().hardware_threads >= 1);
  CHECK_FALSE(rt.cpu().model.empty());
  CHECK(rt.gpu().usable == veda::detect_gpu().usable);
  const std::string text = rt.describe();
  CHECK(text.find("CPU: ") != std::string::npos);
  CHECK(text.find("GPU: ") != std::string::npos);
  CHECK(text.find(rt.gpu().reason) != std::string::npos);
  veda::shutdown();
}

TEST_CASE("the GPU monitor reports devices through NVML, or why it cannot") {
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  const veda::GpuMonitorReport r = veda::get_runtime().gpu_monitor();
  if (r.available) {
    for (const auto& m : r.devices) {
      CHECK_FALSE(m.name.empty());
      CHECK(m.memory_total > 0);
      CHECK(m.memory_used <= m.memory_total);
    }
  } else {
    CHECK(r.devices.empty());
    CHECK(r.why_not.find("NVML") != std::string::npos);
  }
  CHECK(veda::get_runtime().describe().find("GPU monitor") != std::string::npos);
  veda::shutdown();
}

#if VEDA_HAS_CUDA
TEST_CASE("the driver gate refuses only an older major version (minor-version compatibility)") {
  using veda::detail::cuda::driver_major_too_old;
  CHECK_FALSE(driver_major_too_old(12040, 12080));  // R550 (12.4) runs a 12.8 runtime's SASS
  CHECK_FALSE(driver_major_too_old(13000, 13000));
  CHECK_FALSE(driver_major_too_old(13010, 12080));
  CHECK(driver_major_too_old(12080, 13000));        // a CUDA 12 driver cannot run CUDA 13
  CHECK(driver_major_too_old(0, 13000));
}
#endif
