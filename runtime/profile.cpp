#include "runtime/profile.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace veda::detail {
namespace {
using nlohmann::json;

// The speed fields, listed once for both directions of the JSON mapping.
template <class F>
void for_each_cpu_field(CpuProfile& c, F&& f) {
  f("map_ns_per_elem", c.map_ns_per_elem);
  f("fma_gflops_per_thread", c.fma_gflops_per_thread);
  f("bw_one_gbps", c.bw_one_gbps);
  f("bw_all_gbps", c.bw_all_gbps);
  f("tbb_static_us", c.tbb_static_us);
  f("tbb_auto_us", c.tbb_auto_us);
  f("tbb_wake_us", c.tbb_wake_us);
  f("tbb_idle_us", c.tbb_idle_us);
}
template <class F>
void for_each_gpu_field(GpuProfile& g, F&& f) {
  f("launch_us", g.launch_us);
  f("h2d_pageable_gbps", g.h2d_pageable_gbps);
  f("h2d_pinned_gbps", g.h2d_pinned_gbps);
  f("d2h_pageable_gbps", g.d2h_pageable_gbps);
  f("d2h_pinned_gbps", g.d2h_pinned_gbps);
  f("h2d_staged_gbps", g.h2d_staged_gbps);
  f("d2h_staged_gbps", g.d2h_staged_gbps);
  f("device_bw_gbps", g.device_bw_gbps);
  f("fp32_gflops", g.fp32_gflops);
  f("sgemm_gflops", g.sgemm_gflops);
  f("sgemm_tf32_gflops", g.sgemm_tf32_gflops);
  f("hgemm_gflops", g.hgemm_gflops);
  f("dgemm_gflops", g.dgemm_gflops);
}

double positive(const json& j, const char* section, const char* name) {
  if (!j.contains(name)) throw std::runtime_error(std::string(section) + "." + name + " is missing");
  const json& v = j.at(name);
  if (!v.is_number()) throw std::runtime_error(std::string(section) + "." + name + " is not a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0)
    throw std::runtime_error(std::string(section) + "." + name + " must be a positive finite number");
  return d;
}

double non_negative(const json& j, const char* name) {
  if (!j.contains(name)) return 0;
  const double d = j.at(name).is_number() ? j.at(name).get<double>() : -1;
  if (!std::isfinite(d) || d < 0) throw std::runtime_error(std::string("cpu.") + name + " must be >= 0");
  return d;
}
}  // namespace

std::string MachineProfile::key() const {
  std::ostringstream os;
  os << host << '|' << cpu_model << '|' << threads << '|' << gpu_uuid << '|' << driver_version << '|'
     << veda_version << '|' << kFormat;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016zx", std::hash<std::string>{}(os.str()));
  return buf;
}

std::string MachineProfile::to_json() const {
  json j;
  j["format"] = kFormat;
  j["host"] = host;
  j["cpu_model"] = cpu_model;
  j["threads"] = threads;
  j["gpu_uuid"] = gpu_uuid;
  j["driver_version"] = driver_version;
  j["veda_version"] = veda_version;
  j["calibration_seconds"] = calibration_seconds;
  j["provisional"] = provisional;
  j["calibration_note"] = calibration_note;
  CpuProfile c = cpu;
  for_each_cpu_field(c, [&](const char* n, double& v) { j["cpu"][n] = v; });
  j["cpu"]["sgemm_gflops"] = cpu.sgemm_gflops;
  j["cpu"]["dgemm_gflops"] = cpu.dgemm_gflops;
  j["cpu"]["blas_core"] = cpu.blas_core;
  j["cpu"]["blas_probe"] = cpu.blas_probe;
  j["gpu"]["present"] = gpu.present;
  if (gpu.present) {
    GpuProfile g = gpu;
    j["gpu"]["name"] = gpu.name;
    j["gpu"]["uuid"] = gpu.uuid;
    for_each_gpu_field(g, [&](const char* n, double& v) { j["gpu"][n] = v; });
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
  p.threads = integer("threads", 1, 1 << 20, std::nullopt);
  p.driver_version = integer("driver_version", 0, 1 << 30, 0);
  p.calibration_seconds = j.value("calibration_seconds", 0.0);
  if (j.contains("provisional") && !j["provisional"].is_boolean()) throw std::runtime_error("provisional must be true or false");
  p.provisional = j.value("provisional", false);
  p.calibration_note = j.value("calibration_note", std::string());
  if (!j.contains("cpu") || !j["cpu"].is_object()) throw std::runtime_error("cpu section is missing");
  for_each_cpu_field(p.cpu, [&](const char* n, double& v) { v = positive(j["cpu"], "cpu", n); });
  p.cpu.sgemm_gflops = non_negative(j["cpu"], "sgemm_gflops");
  p.cpu.dgemm_gflops = non_negative(j["cpu"], "dgemm_gflops");
  p.cpu.blas_core = j["cpu"].value("blas_core", std::string());
  p.cpu.blas_probe = j["cpu"].value("blas_probe", std::string());
  if (!j.contains("gpu") || !j["gpu"].is_object()) throw std::runtime_error("gpu section is missing");
  p.gpu.present = j["gpu"].value("present", false);
  if (p.gpu.present) {
    p.gpu.name = j["gpu"].value("name", std::string());
    p.gpu.uuid = j["gpu"].value("uuid", std::string());
    for_each_gpu_field(p.gpu, [&](const char* n, double& v) { v = positive(j["gpu"], "gpu", n); });
  }
  return p;
}

MachineProfile default_profile(const std::string& cpu_model, int threads, const GpuDeviceInfo* gpu,
                               int driver_version) {
  MachineProfile p;
  p.host = host_name();
  p.cpu_model = cpu_model;
  p.threads = threads;
  p.driver_version = driver_version;
  p.veda_version = VEDA_VERSION;
  p.source = "defaults";
  if (gpu) {
    // Datasheet-style estimates: FP32 = SMs x 128 lanes x 2 flops x clock,
    // bandwidth = 2 (DDR) x memory clock x bus width, at realistic fractions.
    p.gpu.present = true;
    p.gpu.name = gpu->name;
    p.gpu.uuid = gpu->uuid;
    p.gpu_uuid = gpu->uuid;
    const double fp32 = gpu->sm_count * 128.0 * 2.0 * gpu->clock_khz * 1e3 / 1e9;
    const double bw = 2.0 * gpu->memory_clock_khz * 1e3 * (gpu->memory_bus_width / 8.0) / 1e9;
    if (fp32 > 0) {
      p.gpu.fp32_gflops = 0.8 * fp32;
      p.gpu.sgemm_gflops = 0.7 * fp32;
      // Full-rate FP64 (half of FP32) only on the data-centre parts: 7.0, 8.0, 9.x.
      const bool fp64_full = gpu->cc_major == 9 || (gpu->cc_major == 8 && gpu->cc_minor == 0) ||
                             (gpu->cc_major == 7 && gpu->cc_minor == 0);
      p.gpu.dgemm_gflops = fp64_full ? 0.35 * fp32 : fp32 / 64.0;
      p.gpu.sgemm_tf32_gflops = gpu->cc_major >= 8 ? 4.0 * fp32 : p.gpu.sgemm_gflops;
      p.gpu.hgemm_gflops = gpu->cc_major >= 7 ? 8.0 * fp32 : p.gpu.sgemm_gflops;
    }
    if (bw > 0) p.gpu.device_bw_gbps = 0.8 * bw;
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
  return "/tmp/veda-cache";
}

std::optional<MachineProfile> load_profile(const std::string& path, std::string& why) {
  std::ifstream in(path);
  if (!in) {
    why = "no file";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return MachineProfile::from_json(ss.str());
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

bool write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return false;
    out << text << "\n";
    if (!out) return false;
  }
  fs::rename(tmp, path, ec);  // atomic: concurrent processes never see half a file
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

bool save_profile(const MachineProfile& p, const std::string& path) { return write_file_atomically(path, p.to_json()); }

}  // namespace veda::detail
