#include "bench/common/bench.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <iomanip>

#include "veda/runtime.hpp"

namespace bench {

std::string machine_line() {
  std::ostringstream os;
  const veda::GpuStatus g = veda::detect_gpu();
  // The brand string alone does not tell machine kinds apart (a cloud VM's
  // is often "Intel(R) Xeon(R) Processor"): family, model and the widest
  // vector unit do.
  std::string model = "unknown CPU", family, number, flags;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon + 2 > line.size()) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1), value = line.substr(colon + 2);
    if (key == "model name") model = value;
    else if (key == "cpu family") family = value;
    else if (key == "model") number = value;
    else if (key == "flags") flags = " " + value + " ";
  }
  if (!family.empty() && !number.empty()) {
    const char* isa = flags.find(" avx512f ") != std::string::npos ? "AVX-512"
                      : flags.find(" avx2 ") != std::string::npos  ? "AVX2"
                                                                    : "no AVX2";
    model += " (family " + family + " model " + number + ", " + isa + ")";
  }
  if (const char* cap = std::getenv("VEDA_MAX_CPU_ISA"); cap && *cap)
    model += std::string(", veda's kernels capped at ") + cap + " (VEDA_MAX_CPU_ISA)";
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  os << "machine: " << model << ", " << veda::Config::builder().build().threads() << " threads; GPU: ";
  if (g.usable)
    os << g.devices[static_cast<std::size_t>(g.selected)].name;
  else
    os << "none (" << g.reason << ")";
  os << "; " << date;
  return os.str();
}

void quiet_idle_threads(char** argv) {
  if (std::getenv("VEDA_BENCH_QUIETED")) return;
  setenv("VEDA_BENCH_QUIETED", "1", 1);
  setenv("OMP_WAIT_POLICY", "passive", 0);
  setenv("OPENBLAS_THREAD_TIMEOUT", "16", 0);
  execv("/proc/self/exe", argv);
}

void Table::print() const {
  std::printf("\n### %s\n\n|", title_.c_str());
  for (const auto& c : cols_) std::printf(" %s |", c.c_str());
  std::printf("\n|");
  for (std::size_t i = 0; i < cols_.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& r : rows_) {
    std::printf("|");
    for (const auto& v : r) std::printf(" %s |", v.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

namespace {
std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}
}  // namespace

void Table::append_json(std::ostringstream& os) const {
  os << "{\"title\":" << quote(title_) << ",\"columns\":[";
  for (std::size_t i = 0; i < cols_.size(); ++i) os << (i ? "," : "") << quote(cols_[i]);
  os << "],\"rows\":[";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    os << (r ? "," : "") << "[";
    for (std::size_t i = 0; i < rows_[r].size(); ++i) os << (i ? "," : "") << quote(rows_[r][i]);
    os << "]";
  }
  os << "]}";
}

void Series::append_json(std::ostringstream& os) const {
  static const char* roles[] = {"peer", "forced", "auto"};
  os << "{\"name\":" << quote(name_) << ",\"x\":" << quote(x_) << ",\"points\":[";
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const Point& p = points_[i];
    os << (i ? "," : "") << "{\"x\":" << p.x << ",\"contender\":" << quote(p.contender)
       << ",\"role\":\"" << roles[static_cast<int>(p.role)] << "\",\"median_ns\":" << p.s.median
       << ",\"min_ns\":" << p.s.min << ",\"max_ns\":" << p.s.max << ",\"note\":" << quote(p.note) << "}";
  }
  os << "]}";
}

void write_json(const std::string& path, const std::string& name, const std::vector<Table>& tables,
                const std::vector<Series>& series, const std::vector<Target>& targets) {
  if (path.empty()) return;
  std::ostringstream os;
  os << std::setprecision(9);
  os << "{\"bench\":" << quote(name) << ",\"machine\":" << quote(machine_line()) << ",\"tables\":[";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i) os << ",";
    tables[i].append_json(os);
  }
  os << "],\"series\":[";
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (i) os << ",";
    series[i].append_json(os);
  }
  os << "],\"targets\":[";
  for (std::size_t i = 0; i < targets.size(); ++i)
    os << (i ? "," : "") << "{\"what\":" << quote(targets[i].what) << ",\"measured\":" << quote(targets[i].measured)
       << ",\"target\":" << quote(targets[i].target) << ",\"met\":" << (targets[i].met ? "true" : "false") << "}";
  os << "]}\n";
  std::ofstream(path) << os.str();
}

std::string fmt(double v, int precision) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

std::string fmt_bytes(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::ostringstream os;
  os << (v == static_cast<double>(static_cast<long long>(v)) ? fmt(v, 0) : fmt(v, 1)) << " " << units[u];
  return os.str();
}

}  // namespace bench
