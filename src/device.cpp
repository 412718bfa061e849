#include "veda/device.hpp"

namespace veda {

std::string to_string(Device d) { return d == Device::Gpu ? "gpu" : "cpu"; }

std::string to_string(GpuUnavailable why) {
  switch (why) {
    case GpuUnavailable::None: return "none";
    case GpuUnavailable::NotBuilt: return "not built";
    case GpuUnavailable::DisabledByConfig: return "disabled by config";
    case GpuUnavailable::DisabledByEnvironment: return "disabled by environment";
    case GpuUnavailable::NoDriver: return "no driver";
    case GpuUnavailable::DriverTooOld: return "driver too old";
    case GpuUnavailable::NoDevice: return "no device";
    case GpuUnavailable::DeviceOutOfRange: return "device out of range";
    case GpuUnavailable::DiscoveryFailed: return "discovery failed";
    case GpuUnavailable::DiscoveryTimedOut: return "discovery timed out";
    case GpuUnavailable::Emulated: return "host-emulated device";
  }
  return "?";
}

}  // namespace veda
