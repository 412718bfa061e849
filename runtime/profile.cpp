#include "runtime/profile.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "runtime/file_io.hpp"

namespace veda::detail {
namespace {
using nlohmann::json;

// Physical bounds of a profile's figures: generous enough for any machine
// from a laptop under a sanitizer to an H200 (and a few generations after),
// so a figure outside is a corrupt or hand-made file whose decisions would
// be absurd (1e-300 ns per element makes everything serial, and worse).
// The same table is in docs/configuration.md.
//
//   figure                                  unit           lower     upper
//   map_ns_per_elem                         ns / element   1e-4      1e6
//   fma_gflops_per_thread                   GFLOP/s        1e-2      1e5
//   bw_*_gbps, *2h*_gbps, device_bw_gbps    GB/s           1e-4      1e5
//   peer_in_gbps[i] (0: unmeasured)         GB/s           1e-4      1e5
//   tbb_static/auto/wake_us, launch_us      microseconds   1e-4      1e7
//   tbb_idle_us (1e12: "never sleep")       microseconds   1e-4      1e12
//   cpu sgemm/dgemm_gflops (0: unmeasured)  GFLOP/s        1e-2      1e6
//   gpu *_gflops                            GFLOP/s        1e-2      1e8
//   threads                                 count          1         65536
//   calibration_seconds                     seconds        0         1e6
struct Bounds {
  double lo, hi;
  const char* unit;
};
constexpr Bounds kNsPerElem{1e-4, 1e6, "ns per element"};
constexpr Bounds kCoreGflops{1e-2, 1e5, "GFLOP/s"};
constexpr Bounds kBandwidth{1e-4, 1e5, "GB/s"};
constexpr Bounds kMicros{1e-4, 1e7, "us"};
constexpr Bounds kIdleMicros{1e-4, 1e12, "us"};
constexpr Bounds kCpuGemmGflops{1e-2, 1e6, "GFLOP/s"};
constexpr Bounds kGpuGflops{1e-2, 1e8, "GFLOP/s"};
constexpr int kMaxThreads = 65536;
constexpr std::size_t kMaxDevices = 64;
constexpr double kMaxCalibrationSeconds = 1e6;

// The speed fields, listed once for both directions of the JSON mapping.
template <class F>
void for_each_cpu_field(CpuProfile& c, F&& f) {
  f("map_ns_per_elem", c.map_ns_per_elem, kNsPerElem);
  f("fma_gflops_per_thread", c.fma_gflops_per_thread, kCoreGflops);
  f("bw_one_gbps", c.bw_one_gbps, kBandwidth);
  f("bw_all_gbps", c.bw_all_gbps, kBandwidth);
  f("tbb_static_us", c.tbb_static_us, kMicros);
  f("tbb_auto_us", c.tbb_auto_us, kMicros);
  f("tbb_wake_us", c.tbb_wake_us, kMicros);
  f("tbb_idle_us", c.tbb_idle_us, kIdleMicros);
}
template <class F>
void for_each_gpu_field(GpuProfile& g, F&& f) {
  f("launch_us", g.launch_us, kMicros);
  f("h2d_pageable_gbps", g.h2d_pageable_gbps, kBandwidth);
  f("h2d_pinned_gbps", g.h2d_pinned_gbps, kBandwidth);
  f("d2h_pageable_gbps", g.d2h_pageable_gbps, kBandwidth);
  f("d2h_pinned_gbps", g.d2h_pinned_gbps, kBandwidth);
  f("h2d_staged_gbps", g.h2d_staged_gbps, kBandwidth);
  f("d2h_staged_gbps", g.d2h_staged_gbps, kBandwidth);
  f("device_bw_gbps", g.device_bw_gbps, kBandwidth);
  f("fp32_gflops", g.fp32_gflops, kGpuGflops);
  f("sgemm_gflops", g.sgemm_gflops, kGpuGflops);
  f("sgemm_tf32_gflops", g.sgemm_tf32_gflops, kGpuGflops);
  f("hgemm_gflops", g.hgemm_gflops, kGpuGflops);
  f("dgemm_gflops", g.dgemm_gflops, kGpuGflops);
}

std::string bounds_text(const Bounds& b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "between %g and %g %s", b.lo, b.hi, b.unit);
  return buf;
}

// A required figure within its bounds.
double plausible(const json& j, const char* section, const char* name, const Bounds& b) {
  const std::string field = std::string(section) + "." + name;
  if (!j.contains(name)) throw std::runtime_error(field + " is missing");
  const json& v = j.at(name);
  if (!v.is_number()) throw std::runtime_error(field + " is not a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < b.lo || d > b.hi)
    throw std::runtime_error(field + " must be a positive number " + bounds_text(b) +
                             " (a plausible rate for any machine)");
  return d;
}

// An optional figure: 0 (or absent) means "not measured", else within bounds.
double plausible_or_zero(const json& j, const char* name, const Bounds& b) {
  if (!j.contains(name)) return 0;
  const double d = j.at(name).is_number() ? j.at(name).get<double>() : -1;
  if (d == 0) return 0;
  if (!std::isfinite(d) || d < b.lo || d > b.hi)
    throw std::runtime_error(std::string("cpu.") + name + " must be 0 (not measured) or " + bounds_text(b));
  return d;
}

// A device's section: name, UUID, speeds and measured peer rates.
json gpu_json(const GpuProfile& gpu) {
  json j;
  j["present"] = gpu.present;
  if (!gpu.present) return j;
  GpuProfile g = gpu;
  j["name"] = gpu.name;
  j["uuid"] = gpu.uuid;
  for_each_gpu_field(g, [&](const char* n, double& v, const Bounds&) { j[n] = v; });
  if (!gpu.peer_in_gbps.empty()) j["peer_in_gbps"] = gpu.peer_in_gbps;
  return j;
}

GpuProfile gpu_from_json(const json& j, const std::string& section) {
  if (!j.is_object()) throw std::runtime_error(section + " section is missing");
  GpuProfile g;
  g.present = j.value("present", false);
  if (!g.present) return g;
  g.name = j.value("name", std::string());
  g.uuid = j.value("uuid", std::string());
  for_each_gpu_field(g, [&](const char* n, double& v, const Bounds& b) { v = plausible(j, section.c_str(), n, b); });
  if (j.contains("peer_in_gbps")) {
    const json& peers = j["peer_in_gbps"];
    if (!peers.is_array() || peers.size() > kMaxDevices)
      throw std::runtime_error(section + ".peer_in_gbps must be a list of at most " + std::to_string(kMaxDevices) +
                               " rates");
    for (const json& r : peers) {
      const double d = r.is_number() ? r.get<double>() : -1;
      if (d != 0 && (!std::isfinite(d) || d < kBandwidth.lo || d > kBandwidth.hi))
        throw std::runtime_error(section + ".peer_in_gbps: each rate must be 0 (not measured) or " +
                                 bounds_text(kBandwidth));
      g.peer_in_gbps.push_back(d);
    }
  }
  return g;
}
}  // namespace

MachineProfile MachineProfile::for_device(std::size_t slot) const {
  MachineProfile p = *this;
  p.gpu = gpu_at(slot);
  return p;
}

std::string MachineProfile::device_uuids() const {
  std::string s = gpu_uuid;
  for (const GpuProfile& g : other_gpus) s += '|' + g.uuid;
  return s;
}

std::string MachineProfile::key() const {
  std::ostringstream os;
  os << host << '|' << cpu_model << '|' << cpu_features << '|' << threads << '|' << device_uuids() << '|'
     << driver_version << '|' << veda_version << '|' << kFormat;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016zx", std::hash<std::string>{}(os.str()));
  return buf;
}

std::string MachineProfile::to_json() const {
  json j;
  j["format"] = kFormat;
  j["host"] = host;
  j["cpu_model"] = cpu_model;
  j["cpu_features"] = cpu_features;
  j["threads"] = threads;
  j["gpu_uuid"] = gpu_uuid;
  j["driver_version"] = driver_version;
  j["veda_version"] = veda_version;
  j["calibration_seconds"] = calibration_seconds;
  j["provisional"] = provisional;
  j["calibration_note"] = calibration_note;
  CpuProfile c = cpu;
  for_each_cpu_field(c, [&](const char* n, double& v, const Bounds&) { j["cpu"][n] = v; });
  j["cpu"]["sgemm_gflops"] = cpu.sgemm_gflops;
  j["cpu"]["dgemm_gflops"] = cpu.dgemm_gflops;
  j["cpu"]["blas_core"] = cpu.blas_core;
  j["cpu"]["blas_probe"] = cpu.blas_probe;
  j["gpu"] = gpu_json(gpu);
  if (!other_gpus.empty()) {
    j["other_gpus"] = json::array();
    for (const GpuProfile& g : other_gpus) j["other_gpus"].push_back(gpu_json(g));
  }
  return j.dump(2);
}

MachineProfile MachineProfile::from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  // An integer field in [lo, hi]; anything else (a float, 3e95, a string) is
  // an error, never a conversion (a float outside int's range would be UB).
  auto integer = [&](const char* k, long long lo, long long hi, std::optional<long long> fallback) -> int {
    if (!j.contains(k) && fallback) return static_cast<int>(*fallback);
    if (!j.contains(k) || !j[k].is_number_integer() || (j[k].is_number_unsigned() && j[k].get<unsigned long long>() >
                                                                                       static_cast<unsigned long long>(hi)))
      throw std::runtime_error(std::string(k) + " must be an integer in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
    const long long v = j[k].get<long long>();
    if (v < lo || v > hi)
      throw std::runtime_error(std::string(k) + " must be an integer in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
    return static_cast<int>(v);
  };
  if (!j.contains("format") || !j["format"].is_number_integer() || j["format"].get<long long>() != kFormat)
    throw std::runtime_error("unknown profile format (expected " + std::to_string(kFormat) + ")");
  MachineProfile p;
  auto str = [&](const char* k) {
    if (!j.contains(k) || !j[k].is_string()) throw std::runtime_error(std::string(k) + " is missing");
    return j[k].get<std::string>();
  };
  p.host = str("host");
  p.cpu_model = str("cpu_model");
  p.gpu_uuid = str("gpu_uuid");
  p.veda_version = str("veda_version");
  if (j.contains("cpu_features")) {  // absent in files from before it
    if (!j["cpu_features"].is_string()) throw std::runtime_error("cpu_features must be a string");
    p.cpu_features = j["cpu_features"].get<std::string>();
  }
  p.threads = integer("threads", 1, kMaxThreads, std::nullopt);
  p.driver_version = integer("driver_version", 0, 1 << 30, 0);
  if (j.contains("calibration_seconds")) {
    const json& v = j["calibration_seconds"];
    const double d = v.is_number() ? v.get<double>() : -1;
    if (!std::isfinite(d) || d < 0 || d > kMaxCalibrationSeconds)
      throw std::runtime_error("calibration_seconds must be a number between 0 and 1e6");
    p.calibration_seconds = d;
  }
  if (j.contains("provisional") && !j["provisional"].is_boolean()) throw std::runtime_error("provisional must be true or false");
  p.provisional = j.value("provisional", false);
  p.calibration_note = j.value("calibration_note", std::string());
  if (!j.contains("cpu") || !j["cpu"].is_object()) throw std::runtime_error("cpu section is missing");
  for_each_cpu_field(p.cpu, [&](const char* n, double& v, const Bounds& b) { v = plausible(j["cpu"], "cpu", n, b); });
  p.cpu.sgemm_gflops = plausible_or_zero(j["cpu"], "sgemm_gflops", kCpuGemmGflops);
  p.cpu.dgemm_gflops = plausible_or_zero(j["cpu"], "dgemm_gflops", kCpuGemmGflops);
  p.cpu.blas_core = j["cpu"].value("blas_core", std::string());
  p.cpu.blas_probe = j["cpu"].value("blas_probe", std::string());
  if (!j.contains("gpu")) throw std::runtime_error("gpu section is missing");
  p.gpu = gpu_from_json(j["gpu"], "gpu");
  if (j.contains("other_gpus")) {  // several GPUs; absent with one
    const json& others = j["other_gpus"];
    if (!others.is_array() || others.size() >= kMaxDevices)
      throw std::runtime_error("other_gpus must be a list of at most " + std::to_string(kMaxDevices - 1) + " devices");
    for (std::size_t i = 0; i < others.size(); ++i)
      p.other_gpus.push_back(gpu_from_json(others[i], "other_gpus[" + std::to_string(i) + "]"));
  }
  return p;
}

std::string cpu_feature_text(const CpuInfo& cpu) {
  std::string s;
  auto add = [&](bool has, const char* name) {
    if (has) s += (s.empty() ? "" : " ") + std::string(name);
  };
  add(cpu.avx2, "avx2");
  add(cpu.fma, "fma");
  add(cpu.avx512, "avx512");
  add(cpu.avx512_bf16, "avx512_bf16");
  return s;
}

namespace {
// Datasheet-style estimates: FP32 = SMs x 128 lanes x 2 flops x clock,
// bandwidth = 2 (DDR) x memory clock x bus width, at realistic fractions.
GpuProfile default_gpu_profile(const GpuDeviceInfo& d) {
  GpuProfile g;
  g.present = true;
  g.name = d.name;
  g.uuid = d.uuid;
  const double fp32 = d.sm_count * 128.0 * 2.0 * d.clock_khz * 1e3 / 1e9;
  const double bw = 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_width / 8.0) / 1e9;
  if (fp32 > 0) {
    g.fp32_gflops = 0.8 * fp32;
    g.sgemm_gflops = 0.7 * fp32;
    // Full-rate FP64 (half of FP32) only on the data-centre parts: 7.0, 8.0, 9.x.
    const bool fp64_full = d.cc_major == 9 || (d.cc_major == 8 && d.cc_minor == 0) || (d.cc_major == 7 && d.cc_minor == 0);
    g.dgemm_gflops = fp64_full ? 0.35 * fp32 : fp32 / 64.0;
    g.sgemm_tf32_gflops = d.cc_major >= 8 ? 4.0 * fp32 : g.sgemm_gflops;
    g.hgemm_gflops = d.cc_major >= 7 ? 8.0 * fp32 : g.sgemm_gflops;
  }
  if (bw > 0) g.device_bw_gbps = 0.8 * bw;
  return g;
}
}  // namespace

MachineProfile default_profile(const CpuInfo& cpu, int threads, const std::vector<const GpuDeviceInfo*>& gpus,
                               int driver_version) {
  MachineProfile p;
  p.host = host_name();
  p.cpu_model = cpu.model;
  p.cpu_features = cpu_feature_text(cpu);
  p.threads = threads;
  p.driver_version = driver_version;
  p.veda_version = VEDA_VERSION;
  p.source = "defaults";
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuProfile g = default_gpu_profile(*gpus[i]);
    if (i == 0) {
      p.gpu_uuid = g.uuid;
      p.gpu = std::move(g);
    } else {
      p.other_gpus.push_back(std::move(g));
    }
  }
  return p;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string profile_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/veda";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/veda";
  return {};  // no shared fallback: see the header
}

std::optional<MachineProfile> load_profile(const std::string& path, std::string& why, Owner owner) {
  FileText f = read_file(path, kProfileMaxBytes, owner);
  if (!f.ok) {
    why = f.missing ? "no file" : f.error;
    return std::nullopt;
  }
  try {
    return MachineProfile::from_json(f.text);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

bool save_profile(const MachineProfile& p, const std::string& path, std::string* why, unsigned mode) {
  std::string reason;
  const std::size_t slash = path.rfind('/');
  const bool ok = (slash == std::string::npos || slash == 0 || make_dirs(path.substr(0, slash), reason)) &&
                  replace_file(path, p.to_json() + "\n", mode, reason);
  if (!ok && why) *why = reason;
  return ok;
}

}  // namespace veda::detail
