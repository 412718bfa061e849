// bench_report: turns the JSON files of one scripts/bench.sh run into
// docs/benchmarks.md and its plots. For every series it lists each
// contender's median (min-max), veda auto / the fastest peer and veda auto /
// the fastest forced veda tier (regret); it collects the targets the
// benchmarks judged, adds the regret targets (median <= 1.05, worst <= 1.25
// per series), and draws time vs size and ratio vs size through gnuplot.
//
// usage: bench_report <results dir> <markdown out> <plots dir> <command line of the run>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// Reporting order; files of other benchmarks follow in name order.
const std::vector<std::string> kOrder = {"dispatch",  "small_calls", "elementwise", "placement", "par_iter",
                                         "sort",      "scan",        "matmul",      "transpose", "row_ops",     "stencil",
                                         "spmv",      "random",      "seeds"};

std::string num(double v, int prec = 3) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// Nanoseconds in the unit that keeps 3-4 significant digits.
std::string dur(double ns) {
  if (ns < 1e3) return num(ns, 1) + " ns";
  if (ns < 1e6) return num(ns / 1e3, ns < 1e4 ? 2 : 1) + " us";
  if (ns < 1e9) return num(ns / 1e6, ns < 1e7 ? 2 : 1) + " ms";
  return num(ns / 1e9, 2) + " s";
}

std::string size_label(double x) {
  const auto u = static_cast<unsigned long long>(x);
  if (u >= 1024 && (u & (u - 1)) == 0) {
    int e = 0;
    while ((1ull << e) < u) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(u);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Point {
  double median, min, max;
  std::string note;
};

// One series, reorganised: contenders in first-seen order, points by x.
struct Series {
  std::string bench, name, x_label;
  std::vector<std::string> contenders;
  std::map<std::string, std::string> role;
  std::map<double, std::map<std::string, Point>> at;
  std::vector<double> ratio, regret;  // per x, where defined
  std::string slug;

  explicit Series(const std::string& b, const json& j) : bench(b), name(j["name"]), x_label(j["x"]) {
    for (const auto& p : j["points"]) {
      const std::string c = p["contender"];
      if (!role.count(c)) contenders.push_back(c);
      role[c] = p["role"];
      at[p["x"].get<double>()][c] = {p["median_ns"], p["min_ns"], p["max_ns"], p.value("note", "")};
    }
    slug = bench + "-" + name;
    for (char& ch : slug)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '-';
  }
  bool has(const char* r) const {
    return std::any_of(role.begin(), role.end(), [&](const auto& kv) { return kv.second == r; });
  }
  // Fastest contender of a role at one x ("" if none).
  std::string best(const std::map<std::string, Point>& row, const char* r) const {
    std::string b;
    for (const auto& [c, p] : row)
      if (role.at(c) == r && (b.empty() || p.median < row.at(b).median)) b = c;
    return b;
  }
  std::string auto_name() const {
    for (const auto& c : contenders)
      if (role.at(c) == "auto") return c;
    return "";
  }
};

std::string table(const Series& s) {
  std::ostringstream os;
  const std::string a = s.auto_name();
  const bool peers = s.has("peer"), forced = s.has("forced");
  os << "| " << s.x_label;
  for (const auto& c : s.contenders) os << " | " << c << (c == a ? " (tier)" : "");
  if (peers) os << " | best peer | " << a << " / best peer";
  if (forced) os << " | regret";
  os << " |\n|";
  for (std::size_t i = 0; i < s.contenders.size() + 1 + (peers ? 2 : 0) + (forced ? 1 : 0); ++i) os << "---|";
  os << "\n";
  for (const auto& [x, row] : s.at) {
    os << "| " << size_label(x);
    for (const auto& c : s.contenders) {
      auto it = row.find(c);
      if (it == row.end()) {
        os << " | -";
        continue;
      }
      const Point& p = it->second;
      os << " | " << dur(p.median) << " (" << dur(p.min) << " - " << dur(p.max) << ")";
      if (!p.note.empty()) os << " [" << p.note << "]";
    }
    const bool has_auto = !a.empty() && row.count(a);
    if (peers) {
      const std::string b = s.best(row, "peer");
      os << " | " << b << " | " << (has_auto && !b.empty() ? num(row.at(a).median / row.at(b).median) : "-");
    }
    if (forced) {
      const std::string b = s.best(row, "forced");
      os << " | " << (has_auto && !b.empty() ? num(row.at(a).median / row.at(b).median) : "-");
    }
    os << " |\n";
  }
  return os.str();
}

void derive(Series& s) {
  const std::string a = s.auto_name();
  if (a.empty()) return;
  for (const auto& [x, row] : s.at) {
    if (!row.count(a)) continue;
    const std::string p = s.best(row, "peer"), f = s.best(row, "forced");
    if (!p.empty()) s.ratio.push_back(row.at(a).median / row.at(p).median);
    if (!f.empty()) s.regret.push_back(row.at(a).median / row.at(f).median);
  }
}

// Runs a gnuplot script, then removes it and its data file; false if gnuplot failed.
bool draw(const fs::path& script, const fs::path& data) {
  const bool ok = std::system(("gnuplot '" + script.string() + "' 2>/dev/null").c_str()) == 0;
  fs::remove(script);
  fs::remove(data);
  return ok;
}

// Time vs size (log-log) for every contender; false if gnuplot failed.
bool plot_time(const Series& s, const fs::path& dir) {
  if (s.at.size() < 3) return false;  // a point or two is a table, not a curve
  const fs::path data = dir / (s.slug + ".dat"), png = dir / (s.slug + ".png"), gp = dir / (s.slug + ".gp");
  {
    std::ofstream d(data);
    d << "# " << s.x_label;
    for (const auto& c : s.contenders) d << " \"" << c << "\"";
    d << "\n";
    for (const auto& [x, row] : s.at) {
      d << x;
      for (const auto& c : s.contenders) d << " " << (row.count(c) ? std::to_string(row.at(c).median / 1e3) : "NaN");
      d << "\n";
    }
  }
  std::ofstream g(gp);
  g << "set terminal pngcairo size 900,540\nset output '" << png.string() << "'\n"
    << "set title \"" << s.bench << ": " << s.name << "\" noenhanced\nset logscale xy\nset grid\n"
    << "set xlabel '" << s.x_label << "'\nset ylabel 'median time per call (us)'\nset key left top noenhanced\n"
    << "plot ";
  for (std::size_t i = 0; i < s.contenders.size(); ++i)
    g << (i ? ", " : "") << "'" << data.string() << "' using 1:" << i + 2 << " with linespoints lw "
      << (s.role.at(s.contenders[i]) == "auto" ? 3 : 1) << " title \"" << s.contenders[i] << "\"";
  g << "\n";
  g.close();
  return draw(gp, data);
}

// veda auto / best peer and regret vs size, every series of one benchmark.
bool plot_ratios(const std::string& bench, const std::vector<Series*>& ss, const fs::path& dir) {
  const fs::path data = dir / (bench + "-ratios.dat"), png = dir / (bench + "-ratios.png"),
                 gp = dir / (bench + "-ratios.gp");
  std::ofstream d(data);
  std::vector<std::string> titles;
  for (const Series* s : ss) {
    const std::string a = s->auto_name();
    for (const char* r : {"peer", "forced"}) {
      if (a.empty() || !s->has(r) || s->at.size() < 3) continue;
      titles.push_back(s->name + (std::string(r) == "peer" ? ": auto / best peer" : ": regret"));
      d << "# " << titles.back() << "\n";
      for (const auto& [x, row] : s->at) {
        const std::string b = s->best(row, r);
        if (row.count(a) && !b.empty()) d << x << " " << row.at(a).median / row.at(b).median << "\n";
      }
      d << "\n\n";
    }
  }
  d.close();
  if (titles.empty()) {
    fs::remove(data);
    return false;
  }
  std::ofstream g(gp);
  g << "set terminal pngcairo size 900,540\nset output '" << png.string() << "'\n"
    << "set title '" << bench << ": veda auto relative to the best choice (1 = as fast)' noenhanced\n"
    << "set logscale x\nset grid\nset xlabel 'size'\nset ylabel 'ratio'\nset key left top noenhanced\n"
    << "set arrow from graph 0, first 1.05 to graph 1, first 1.05 nohead dt 2\nplot ";
  for (std::size_t i = 0; i < titles.size(); ++i)
    g << (i ? ", " : "") << "'" << data.string() << "' index " << i << " using 1:2 with linespoints title \""
      << titles[i] << "\"";
  g << "\n";
  g.close();
  return draw(gp, data);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <results dir> <markdown out> <plots dir> <command of the run>\n", argv[0]);
    return 2;
  }
  const fs::path results = argv[1], md = argv[2], plots = argv[3];
  const std::string command = argv[4];
  std::vector<std::pair<std::string, json>> runs;
  for (const auto& e : fs::directory_iterator(results))
    if (e.path().extension() == ".json") {
      std::ifstream in(e.path());
      try {
        runs.emplace_back(e.path().stem().string(), json::parse(in));
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "bench_report: %s: %s\n", e.path().c_str(), ex.what());
        return 1;
      }
    }
  auto rank = [](const std::string& b) {
    const auto it = std::find(kOrder.begin(), kOrder.end(), b);
    return std::make_pair(static_cast<int>(it - kOrder.begin()), b);
  };
  std::sort(runs.begin(), runs.end(), [&](const auto& x, const auto& y) { return rank(x.first) < rank(y.first); });
  fs::create_directories(plots);
  for (const auto& e : fs::directory_iterator(plots))
    if (e.path().extension() == ".png") fs::remove(e.path());

  std::vector<std::unique_ptr<Series>> all;
  std::ostringstream targets, summary, body;
  targets << "| target | measured | goal | met |\n|---|---|---|---|\n";
  summary << "| case | series | auto / best peer: median | worst | regret: median | worst |\n"
             "|---|---|---|---|---|---|\n";
  std::string machine;
  const std::string rel_plots = fs::relative(plots, md.parent_path()).string();
  for (const auto& [bench, j] : runs) {
    machine = j.value("machine", machine);
    body << "\n## " << bench << "\n\n" << j.value("machine", "") << "\n\n";
    std::vector<Series*> mine;
    for (const auto& sj : j["series"]) {
      all.push_back(std::make_unique<Series>(bench, sj));
      Series& s = *all.back();
      derive(s);
      mine.push_back(&s);
      body << "### " << s.name << "\n\n" << table(s);
      if (plot_time(s, plots)) body << "\n![" << s.name << "](" << rel_plots << "/" << s.slug << ".png)\n";
      body << "\n";
      auto cell = [](const std::vector<double>& v, bool worst) {
        return v.empty() ? std::string("-") : num(worst ? *std::max_element(v.begin(), v.end()) : median(v));
      };
      summary << "| " << bench << " | " << s.name << " | " << cell(s.ratio, false) << " | " << cell(s.ratio, true)
              << " | " << cell(s.regret, false) << " | " << cell(s.regret, true) << " |\n";
      if (!s.regret.empty()) {
        const double m = median(s.regret), w = *std::max_element(s.regret.begin(), s.regret.end());
        targets << "| auto regret, " << bench << " / " << s.name << " | median " << num(m) << ", worst " << num(w)
                << " | median <= 1.05, worst <= 1.25 | " << (m <= 1.05 && w <= 1.25 ? "yes" : "**no**") << " |\n";
      }
    }
    if (plot_ratios(bench, mine, plots))
      body << "![" << bench << " ratios](" << rel_plots << "/" << bench << "-ratios.png)\n\n";
    for (const auto& t : j["targets"])
      targets << "| " << t["what"].get<std::string>() << " | " << t["measured"].get<std::string>() << " | "
              << t["target"].get<std::string>() << " | " << (t["met"].get<bool>() ? "yes" : "**no**") << " |\n";
    for (const auto& t : j["tables"]) {
      body << "### " << t["title"].get<std::string>() << "\n\n|";
      for (const auto& c : t["columns"]) body << " " << c.get<std::string>() << " |";
      body << "\n|";
      for (std::size_t i = 0; i < t["columns"].size(); ++i) body << "---|";
      body << "\n";
      for (const auto& r : t["rows"]) {
        body << "|";
        for (const auto& v : r) body << " " << v.get<std::string>() << " |";
        body << "\n";
      }
      body << "\n";
    }
  }
  std::ofstream out(md);
  out << "# Benchmarks\n\n"
      << "Generated by `" << command << "`; every figure below comes from that run (raw JSON next to the plots, in `"
      << fs::relative(results, md.parent_path()).string() << "/`). Do not edit by hand: run the script again.\n\n"
      << machine << "\n\n"
      << (machine.find("GPU: none") != std::string::npos
              ? "This machine has no usable GPU: the GPU tiers and peers (cuBLAS) are absent from every table.\n\n"
              : "")
      << "Times are medians of repeated samples, interleaved across contenders within a case (in a shuffled\n"
      << "order each time) so drift in the machine's speed and what one contender leaves behind affect them\n"
      << "alike, with the fastest and slowest sample in brackets. *auto / best peer*\n"
      << "divides veda's automatic placement by the fastest other library or hand-written loop at that size;\n"
      << "*regret* divides it by the fastest veda tier forced by hand (how well veda chose). Below 1 is faster.\n"
      << "Each case's source is `bench/<case>/`, one file per contender; built by GCC, the peers' loops start\n"
      << "on 32-byte boundaries as veda's map loop does (`-falign-loops=32`, `bench/CMakeLists.txt`).\n\n"
      << "## Targets\n\n" << targets.str() << "\n## Summary\n\n" << summary.str() << body.str();
  std::printf("bench_report: wrote %s (%zu series)\n", md.c_str(), all.size());
  return 0;
}
