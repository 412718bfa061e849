// `veda bench`: each op at each size with every eligible tier forced, and on
// auto; a table of median times with the auto tier and its regret
// (auto / best forced). Compiled by nvcc when veda has its CUDA backend, so
// the element-wise ops and the pipeline have GPU candidates where a GPU is.
#include "tools/veda/commands.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>

#include "runtime/file_io.hpp"
#include "veda/veda.hpp"

namespace veda::cli {
namespace {

using Run = std::function<void(const std::string& tier)>;

// An op at one size: run(tier) does one call ("" = auto).
struct Case {
  std::function<Run(std::size_t n)> make;
  std::vector<std::size_t> sizes;
};

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) * 0.001f;
  return v;
}

// A wrapped function per forced tier, made once (making one looks up its site).
template <class Make>
auto by_tier(Make make) {
  using F = decltype(make(std::string()));
  auto fs = std::make_shared<std::map<std::string, F>>();
  return [fs, make](const std::string& tier) -> F& {
    auto it = fs->find(tier);
    if (it == fs->end()) it = fs->emplace(tier, make(tier)).first;
    return it->second;
  };
}

std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  const std::vector<std::size_t> elementwise = {1u << 10, 1u << 14, 1u << 18, 1u << 22, 1u << 24};
  c["saxpy"] = {[](std::size_t n) -> Run {
                  auto x = std::make_shared<std::vector<float>>(ramp(n));
                  auto y = std::make_shared<std::vector<float>>(ramp(n));
                  auto z = std::make_shared<std::vector<float>>(n);
                  auto fn = by_tier([](const std::string& tier) {
                    return veda::gpu(VEDA_LAMBDA((float a, float u, float v) noexcept, { return a * u + v; }),
                                     {.name = "saxpy", .tier = tier});
                  });
                  return [=](const std::string& tier) { fn(tier).into(*z, 2.0f, *x, *y); };
                },
                elementwise};
  c["exp"] = {[](std::size_t n) -> Run {
                auto x = std::make_shared<std::vector<float>>(ramp(n));
                auto z = std::make_shared<std::vector<float>>(n);
                auto fn = by_tier([](const std::string& tier) {
                  return veda::gpu(VEDA_LAMBDA((float u) noexcept, { return std::exp(std::sin(u)); }),
                                   {.name = "exp", .tier = tier});
                });
                return [=](const std::string& tier) { fn(tier).into(*z, *x); };
              },
              elementwise};
  c["sum"] = {[](std::size_t n) -> Run {
                auto x = std::make_shared<std::vector<float>>(ramp(n));
                return [=](const std::string& tier) {
                  volatile float s = veda::sum(*x, {.tier = tier});
                  (void)s;
                };
              },
              elementwise};
  c["sort"] = {[](std::size_t n) -> Run {
                 auto in = std::make_shared<std::vector<std::uint32_t>>(n);
                 for (std::size_t i = 0; i < n; ++i) (*in)[i] = static_cast<std::uint32_t>(i * 2654435761u);
                 auto work = std::make_shared<std::vector<std::uint32_t>>(n);
                 return [=](const std::string& tier) {
                   *work = *in;  // every call sorts the same unsorted keys
                   veda::sort(*work, {.tier = tier});
                 };
               },
               {1000, 100000, 1000000, 10000000}};
  c["matmul"] = {[](std::size_t n) -> Run {
                   auto a = std::make_shared<veda::Array<float>>(n, n), b = std::make_shared<veda::Array<float>>(n, n);
                   for (auto& v : a->host()) v = 0.5f;
                   for (auto& v : b->host()) v = 0.25f;
                   return [=](const std::string& tier) {
                     auto c = veda::matmul(*a, *b, {.tier = tier});
                     (void)c.host();  // the result on the host, as a caller would read it
                   };
                 },
                 {64, 256, 1024, 2048}};
  c["pipeline"] = {[](std::size_t n) -> Run {
                     auto x = std::make_shared<std::vector<float>>(ramp(n));
                     return [=](const std::string& tier) {
                       volatile float s = veda::par_iter(*x, {.name = "pipeline", .tier = tier})
                                              .gpu_map(VEDA_LAMBDA((float v) noexcept, { return v * 2.0f - 1.0f; }))
                                              .filter([](float v) { return v > 0.0f; })
                                              .sum();
                       (void)s;
                     };
                   },
                   elementwise};
  return c;
}

// Median microseconds of one call, from batches of about 5 ms.
double median_us(const Run& run, const std::string& tier) {
  using clk = std::chrono::steady_clock;
  auto once = [&] {
    const auto t0 = clk::now();
    run(tier);
    return std::chrono::duration<double, std::micro>(clk::now() - t0).count();
  };
  const double first = std::max(once(), 0.05);
  const int batch = std::clamp(static_cast<int>(5000 / first), 1, 100000);
  std::vector<double> t;
  const int samples = first > 200000 ? 3 : 9;
  for (int s = 0; s < samples; ++s) {
    const auto t0 = clk::now();
    for (int b = 0; b < batch; ++b) run(tier);
    t.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count() / batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The tiers the decision offered and allowed for this call.
std::vector<std::string> eligible_tiers(const Decision& d) {
  const auto& c = d.segments.empty() ? d.candidates : d.segments.front().candidates;
  std::vector<std::string> t;
  for (const auto& x : c)
    if (x.eligible && x.tier != "cpu-reference") t.push_back(x.tier);
  return t;
}

struct Row {
  std::string op;
  std::size_t n;
  std::map<std::string, double> forced;  // tier -> us
  double auto_us = 0;
  std::string auto_tier;
  double regret = 0;
};

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v < 10 ? "%.3f" : v < 1000 ? "%.1f" : "%.0f", v);
  return b;
}

void print_table(const std::vector<Row>& rows, const std::string& format) {
  if (format == "json") {
    std::printf("[\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("  {\"op\": \"%s\", \"n\": %zu, \"auto_us\": %g, \"auto_tier\": \"%s\", \"regret\": %g, \"forced_us\": {",
                  r.op.c_str(), r.n, r.auto_us, r.auto_tier.c_str(), r.regret);
      std::size_t k = 0;
      for (const auto& [tier, us] : r.forced) std::printf("%s\"%s\": %g", k++ ? ", " : "", tier.c_str(), us);
      std::printf("}}%s\n", i + 1 < rows.size() ? "," : "");
    }
    std::printf("]\n");
    return;
  }
  if (format == "csv") {
    std::printf("op,n,tier,us\n");
    for (const auto& r : rows) {
      for (const auto& [tier, us] : r.forced) std::printf("%s,%zu,%s,%g\n", r.op.c_str(), r.n, tier.c_str(), us);
      std::printf("%s,%zu,auto(%s),%g\n", r.op.c_str(), r.n, r.auto_tier.c_str(), r.auto_us);
    }
    return;
  }
  std::string op;
  for (const auto& r : rows) {
    if (r.op != op) {
      op = r.op;
      std::printf("\n%s (median us per call)\n%12s", op.c_str(), "n");
      for (const auto& [tier, us] : r.forced) std::printf(" %14s", tier.c_str());
      std::printf(" %14s %14s %8s\n", "auto", "auto tier", "regret");
    }
    std::printf("%12zu", r.n);
    for (const auto& [tier, us] : r.forced) std::printf(" %14s", fmt(us).c_str());
    std::printf(" %14s %14s %8.3f\n", fmt(r.auto_us).c_str(), r.auto_tier.c_str(), r.regret);
  }
}

// Time vs size (log-log) per tier and auto, and regret vs size, one panel
// per op, through gnuplot.
void plot(const std::vector<Row>& rows, const std::string& png) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0)
    throw Error("veda bench --plot: gnuplot not found (Debian: apt-get install gnuplot-nox)");
  const std::string dir = png + ".data";
  std::string why;
  if (!detail::make_dirs(dir, why)) throw Error("veda bench --plot: " + why);
  // Data and script replace their files safely (runtime/file_io.hpp): never through a link.
  auto write = [&](const std::string& file, const std::string& text) {
    if (!detail::replace_file(file, text, 0666, why))
      throw Error("veda bench --plot: cannot write " + file + ": " + why);
  };
  std::map<std::string, std::vector<const Row*>> by_op;
  for (const auto& r : rows) by_op[r.op].push_back(&r);
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1200," << 420 * by_op.size() << "\nset output '" << png << "'\n"
     << "set multiplot layout " << by_op.size() << ",2\nset logscale x\nset key outside right\nset grid\n";
  for (const auto& [op, rs] : by_op) {
    const std::string file = dir + "/" + op + ".dat";
    std::ostringstream f;
    std::vector<std::string> tiers;
    for (const auto& [tier, us] : rs.front()->forced) tiers.push_back(tier);
    f << "# n auto regret";
    for (const auto& t : tiers) f << ' ' << t;
    f << '\n';
    for (const Row* r : rs) {
      f << r->n << ' ' << r->auto_us << ' ' << r->regret;
      for (const auto& t : tiers) f << ' ' << (r->forced.count(t) ? r->forced.at(t) : NAN);
      f << '\n';
    }
    write(file, f.str());
    gp << "set title '" << op << ": time per call'\nset logscale y\nset xlabel 'n'\nset ylabel 'us'\nplot '" << file
       << "' using 1:2 with linespoints lw 2 title 'auto'";
    for (std::size_t i = 0; i < tiers.size(); ++i)
      gp << ", '' using 1:" << i + 4 << " with linespoints title '" << tiers[i] << "'";
    gp << "\nset title '" << op << ": auto regret'\nunset logscale y\nset ylabel 'auto / best forced'\nplot '" << file
       << "' using 1:3 with linespoints lw 2 title 'regret', 1 with lines dt 2 title ''\n";
  }
  gp << "unset multiplot\n";
  const std::string script = dir + "/plot.gp";
  write(script, gp.str());
  if (std::system(("gnuplot '" + script + "'").c_str()) != 0) throw Error("veda bench --plot: gnuplot failed");
  std::fprintf(stderr, "plot written to %s (data in %s)\n", png.c_str(), dir.c_str());
}

// One table of the GEMM ladder: the tiers forced on T's n x n x n products
// with operands and result on the device, in GFLOP/s (median of 5
// synchronised calls), and gpu-wmma's rate over `versus`'s (cuBLAS on the
// same tensor-core precision).
template <class T>
void ladder_table(const char* type, const std::vector<std::string>& ladder, const std::string& versus,
                  const std::vector<std::size_t>& sizes) {
  const std::string ratio = "wmma/" + versus.substr(4);  // without "gpu-"
  std::printf("\nGEMM ladder (%s n x n x n on the device, GFLOP/s)\n%8s", type, "n");
  for (const auto& t : ladder) std::printf(" %16s", t.c_str());
  std::printf(" %16s\n", ratio.c_str());
  for (std::size_t n : sizes) {
    veda::Array<T> a(n, n), b(n, n), c(n, n);
    for (auto& v : a.host()) v = T(0.5f);
    for (auto& v : b.host()) v = T(0.25f);
    std::printf("%8zu", n);
    double wmma = 0, other = 0;
    for (const auto& tier : ladder) {
      std::vector<double> us;
      try {
        for (int i = 0; i < 7; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          veda::matmul_into(c, a, b, {.tier = tier});
          veda::synchronize();
          if (i >= 2) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
      } catch (const veda::Error& e) {
        std::printf(" %16s", "n/a");
        std::fprintf(stderr, "  %s (%s) at n=%zu: %s\n", tier.c_str(), type, n, e.what());
        continue;
      }
      std::sort(us.begin(), us.end());
      const double gflops =
          2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / us[us.size() / 2] * 1e-3;
      if (tier == "gpu-wmma") wmma = gflops;
      if (tier == versus) other = gflops;
      std::printf(" %16.0f", gflops);
    }
    if (wmma > 0 && other > 0) std::printf(" %16.2f\n", wmma / other);
    else std::printf(" %16s\n", "n/a");
  }
}

// The GEMM ladder of the CUDA chapter, on float and on 16-bit elements
// (where gpu-cublas is cuBLAS's own 16-bit GEMM). From a real GPU only.
void print_ladder(const std::vector<std::size_t>& sizes) {
  if (!get_runtime().gpu_usable()) {
    std::printf("\nGEMM ladder: no usable GPU in this run, so no figures\n");
    return;
  }
  ladder_table<float>("float",
                      {"gpu-naive", "gpu-tiled", "gpu-vectorized", "gpu-wmma", "gpu-cublas", "gpu-cublas-tf32",
                       "gpu-cublas-bf16"},
                      "gpu-cublas-bf16", sizes);  // float's gpu-wmma rounds to BF16, as gpu-cublas-bf16 does
  const std::vector<std::string> ladder16 = {"gpu-naive", "gpu-tiled", "gpu-vectorized", "gpu-wmma", "gpu-cublas"};
  ladder_table<veda::bfloat16>("bfloat16", ladder16, "gpu-cublas", sizes);
  ladder_table<veda::half>("half", ladder16, "gpu-cublas", sizes);
}

}  // namespace

int bench(const BenchArgs& a) {
  const auto all = cases();
  std::vector<std::string> ops = a.ops;
  if (ops.empty())
    for (const auto& [name, c] : all) ops.push_back(name);
  for (const auto& op : ops)
    if (!all.count(op) && op != "ladder" && op != "flash")
      throw InvalidArgument("veda bench: unknown op '" + op +
                            "' (saxpy, exp, sum, sort, matmul, pipeline, ladder, flash)");
  auto wanted = [&](const char* op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); };
  std::vector<Row> rows;
  for (const auto& op : ops) {
    if (op == "ladder" || op == "flash") continue;
    const Case& c = all.at(op);
    for (std::size_t n : a.sizes.empty() ? c.sizes : a.sizes) {
      const Run run = c.make(n);
      for (int i = 0; i < 20; ++i) run("");  // auto learns, and the candidates are known
      Row r{op, n, {}, 0, last_decision().tier, 0};
      for (const auto& tier : eligible_tiers(last_decision())) r.forced[tier] = median_us(run, tier);
      r.auto_us = median_us(run, "");
      run("");
      r.auto_tier = last_decision().segments.empty() ? last_decision().tier : last_decision().segments.front().tier;
      double best = 0;
      for (const auto& [tier, us] : r.forced) best = best == 0 ? us : std::min(best, us);
      r.regret = best > 0 ? r.auto_us / best : 1.0;
      rows.push_back(std::move(r));
      if (a.format == "table") std::fprintf(stderr, "  %s n=%zu done\n", op.c_str(), n);
    }
  }
  if (!rows.empty()) print_table(rows, a.format);
  if (a.format == "table" && (wanted("matmul") || wanted("ladder")))
    print_ladder(a.sizes.empty() ? std::vector<std::size_t>{1024, 2048, 4096} : a.sizes);
  if (a.format == "table" && wanted("flash"))
    print_attention(a.sizes.empty() ? std::vector<std::size_t>{1024, 4096} : a.sizes);
  if (!a.plot.empty()) plot(rows, a.plot);
  return 0;
}

}  // namespace veda::cli
