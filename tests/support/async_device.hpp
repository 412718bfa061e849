// A runtime with the asynchronous host-emulated device installed (streams
// that overtake each other unless events order them, random delays up to
// 200 us), for tests of the data layer's ordering without a GPU. Shut down
// on destruction.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/runtime.hpp"

namespace veda_test {

struct AsyncDevice {
  veda::detail::HostDevice* dev;
  explicit AsyncDevice(std::uint64_t seed) {
    veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
    auto d = veda::detail::HostDevice::async(200, seed);
    dev = d.get();
    veda::get_runtime().state().install_device(std::move(d));
  }
  ~AsyncDevice() { veda::shutdown(); }
  AsyncDevice(const AsyncDevice&) = delete;
  AsyncDevice& operator=(const AsyncDevice&) = delete;
};

inline void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

}  // namespace veda_test
