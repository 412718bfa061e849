#include "runtime/nvml.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace veda::detail {
namespace {

using Ret = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Dev = void*;
struct Memory {
  unsigned long long total, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};

struct Nvml {
  bool ok = false;
  std::string why_not;
  Ret (*get_count)(unsigned int*) = nullptr;
  Ret (*by_index)(unsigned int, Dev*) = nullptr;
  Ret (*name)(Dev, char*, unsigned int) = nullptr;
  Ret (*uuid)(Dev, char*, unsigned int) = nullptr;
  Ret (*memory)(Dev, Memory*) = nullptr;
  Ret (*utilization)(Dev, Utilization*) = nullptr;
  Ret (*temperature)(Dev, int, unsigned int*) = nullptr;  // sensor 0: the GPU die
  const char* (*error)(Ret) = nullptr;
};

template <class F>
bool sym(void* h, const char* n, F& f) {
  f = reinterpret_cast<F>(dlsym(h, n));
  return f != nullptr;
}

Nvml load() {
  Nvml n;
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    n.why_not = "NVML not found (libnvidia-ml.so.1 comes with the NVIDIA driver)";
    return n;
  }
  Ret (*init)() = nullptr;
  if (!sym(h, "nvmlInit_v2", init) || !sym(h, "nvmlDeviceGetCount_v2", n.get_count) ||
      !sym(h, "nvmlDeviceGetHandleByIndex_v2", n.by_index) || !sym(h, "nvmlDeviceGetName", n.name) ||
      !sym(h, "nvmlDeviceGetUUID", n.uuid) || !sym(h, "nvmlDeviceGetMemoryInfo", n.memory) ||
      !sym(h, "nvmlDeviceGetUtilizationRates", n.utilization) ||
      !sym(h, "nvmlDeviceGetTemperature", n.temperature) || !sym(h, "nvmlErrorString", n.error)) {
    n.why_not = "NVML is too old (a function veda needs is missing)";
    return n;
  }
  if (const Ret r = init(); r != 0) {
    n.why_not = std::string("nvmlInit failed: ") + n.error(r);
    return n;
  }
  n.ok = true;
  return n;
}

const Nvml& nvml() {
  static const Nvml n = load();
  return n;
}

}  // namespace

GpuMonitorReport read_nvml(const std::vector<GpuDeviceInfo>& cuda) {
  GpuMonitorReport r;
  const Nvml& n = nvml();
  if (!n.ok) {
    r.why_not = n.why_not;
    return r;
  }
  r.available = true;
  unsigned int count = 0;
  if (const Ret e = n.get_count(&count); e != 0) {
    r.why_not = std::string("nvmlDeviceGetCount failed: ") + n.error(e);
    return r;
  }
  for (unsigned int i = 0; i < count; ++i) {
    Dev d = nullptr;
    if (n.by_index(i, &d) != 0) continue;
    GpuMonitor m;
    char buf[96] = {};
    if (n.name(d, buf, sizeof buf) == 0) m.name = buf;
    if (n.uuid(d, buf, sizeof buf) == 0) m.uuid = buf;
    for (const auto& c : cuda)
      if (!m.uuid.empty() && c.uuid == m.uuid) m.index = c.index;
    Memory mem{};
    if (n.memory(d, &mem) == 0) {
      m.memory_total = mem.total;
      m.memory_free = mem.free;
      m.memory_used = mem.used;
    }
    Utilization u{};
    if (n.utilization(d, &u) == 0) {
      m.utilization_pct = static_cast<int>(u.gpu);
      m.memory_utilization_pct = static_cast<int>(u.memory);
    }
    unsigned int t = 0;
    if (n.temperature(d, 0, &t) == 0) m.temperature_c = static_cast<int>(t);
    r.devices.push_back(std::move(m));
  }
  return r;
}

}  // namespace veda::detail
