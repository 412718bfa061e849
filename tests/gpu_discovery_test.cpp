// Contract (gpu): on a machine with a usable device, discovery fills in every
// field of the selected device and the runtime reports it.
#include <doctest/doctest.h>

#include "veda/runtime.hpp"

TEST_CASE("selected device is described") {
  const veda::GpuStatus s = veda::detect_gpu();
  REQUIRE(s.usable);
  REQUIRE(s.selected >= 0);
  const auto& d = s.devices.at(static_cast<std::size_t>(s.selected));
  CHECK_FALSE(d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.cc_major >= 7);
  CHECK(d.sm_count > 0);
  CHECK(d.memory_total > 0);
  CHECK(d.memory_free > 0);
  CHECK(d.memory_free <= d.memory_total);
  CHECK(s.driver_version / 1000 >= s.runtime_version / 1000);  // minor-version compatibility allowed
}

TEST_CASE("out-of-range device is reported, not used") {
  const auto s = veda::detect_gpu(veda::Config::builder().device(1000).build());
  CHECK_FALSE(s.usable);
  CHECK(s.why == veda::GpuUnavailable::DeviceOutOfRange);
}

TEST_CASE("runtime starts with the GPU") {
  veda::init();
  CHECK(veda::get_runtime().gpu_usable());
  veda::shutdown();
}
