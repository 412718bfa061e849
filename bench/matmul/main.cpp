// matmul: veda::matmul with every tier forced and on auto, against OpenBLAS
// called directly and Eigen (and cuBLAS on a GPU), n = 64 ... 4096 (8192 on a GPU),
// float and double, interleaved in one run.
// Reports GFLOP/s, % of the CPU's FP32 (FP64: half) FMA peak as veda
// measured it, cpu-blas / direct, and auto regret = auto / best forced tier.
// OpenBLAS direct runs twice in each rotation: its second run against its
// first is the noise floor to read the ratios against.
// Targets: cpu-blas >= 85% of peak at n >= 1024 and within 3% of OpenBLAS
// direct; median auto regret <= 1.05; gpu-cublas within 5% of cuBLAS
// direct on resident data.
// First, OpenBLAS is loaded once per kernel set (OPENBLAS_CORETYPE, in a
// child process each) to show what choosing it is worth; the fastest at the
// largest n is then used for the direct calls and for veda's cpu-blas (one
// library in this process), so "direct" is OpenBLAS at its best here.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/matmul/contenders.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;

template <class T>
veda::Array<T> square(std::size_t n, unsigned seed) {
  std::vector<T> v(n * n);
  std::uint32_t x = seed;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<T>(static_cast<int>(x >> 24) - 128) / T(128);
  }
  return veda::Array<T>(n, n, std::move(v));
}

double gflops(std::size_t n, double ns) { return 2.0 * n * n * static_cast<double>(n) / ns; }


// FP32 FMA peak of every thread veda uses, from its machine profile.
double cpu_peak_gflops() {
  const auto& st = veda::get_runtime().state();
  return st.profile().cpu.fma_gflops_per_thread * st.cpu.threads;
}

template <class T>
void cpu_table(const Options& opt, std::vector<double>& regrets, std::vector<Series>& series,
                std::vector<double>& vs_openblas, std::vector<double>& aa) {
  const bool dbl = sizeof(T) == 8;
  const double peak = cpu_peak_gflops() * (dbl ? 0.5 : 1.0);
  const std::vector<std::string> tiers = {"cpu-reference", "cpu-blas", "cpu-tiled", ""};
  Table t(std::string("CPU, ") + (dbl ? "double" : "float") + ": GFLOP/s (peak " + fmt(peak, 0) + ")",
          {"n", "cpu-reference", "cpu-blas", "cpu-tiled", "auto", "auto tier", "OpenBLAS direct", "Eigen",
           "cpu-blas % of peak", "direct % of peak", "cpu-blas / direct", "auto / best peer", "auto regret",
           "direct again / direct"});
  Series ser(std::string("CPU, ") + (dbl ? "double" : "float"), "n");
  for (std::size_t n = 64; n <= (opt.quick ? 1024u : 4096u); n *= 2) {
    const auto a = square<T>(n, 1), b = square<T>(n, 2);
    std::vector<T> c(n * n);
    std::vector<std::function<void()>> run;
    const bool with_ref = n <= 512;  // the naive loop needs minutes beyond
    for (const auto& tier : tiers)
      if (with_ref || tier != "cpu-reference") run.push_back([&, tier] { matmul::veda_matmul(a, b, tier); });
    run.push_back([&] { matmul::openblas_gemm<T>(a.host().data(), b.host().data(), c.data(), n); });
    const bool eig = matmul::eigen_installed();
    if (eig) run.push_back([&] { matmul::eigen_gemm<T>(a.host().data(), b.host().data(), c.data(), n); });
    // The noise floor: OpenBLAS direct again, as one more contender.
    run.push_back([&] { matmul::openblas_gemm<T>(a.host().data(), b.host().data(), c.data(), n); });
    for (int i = 0; i < 12; ++i) run[with_ref ? 3 : 2]();  // auto learns
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(n >= 1024 ? 1 : calibrate_batch(r, 2e7));
    const int samples = n >= 2048 ? (opt.quick ? 3 : 5) : n >= 1024 && opt.quick ? 5 : 11;
    const auto s = measure_interleaved(run, samples, batch);
    matmul::veda_matmul(a, b, "");
    const std::string auto_tier = veda::last_decision().tier;
    const std::size_t off = with_ref ? 0 : 1;  // index shift without the reference column
    auto at = [&](std::size_t col) { return s[col - off].median; };
    const double blas = at(1), tiled = at(2), aut = at(3), direct = at(4);
    const double eigen = eig ? at(5) : std::numeric_limits<double>::infinity();
    const double best = std::min(blas, tiled);
    regrets.push_back(aut / best);
    const double again = direct / s.back().median;  // throughput ratios, as cpu-blas / direct
    if (n >= 256) vs_openblas.push_back(direct / aut), aa.push_back(again);
    const double x = static_cast<double>(n);
    for (std::size_t i = off; i < 3; ++i) ser.add(x, tiers[i], Series::Role::Forced, s[i - off]);
    ser.add(x, "auto", Series::Role::Auto, s[3 - off], auto_tier);
    ser.add(x, "OpenBLAS direct", Series::Role::Peer, s[4 - off]);
    if (eig) ser.add(x, "Eigen", Series::Role::Peer, s[5 - off]);
    t.add({std::to_string(n), with_ref ? fmt(gflops(n, s[0].median), 2) : "-", fmt(gflops(n, blas), 1),
           fmt(gflops(n, tiled), 1), fmt(gflops(n, aut), 1), auto_tier, fmt(gflops(n, direct), 1),
           eig ? fmt(gflops(n, eigen), 1) : "not installed", fmt(100 * gflops(n, blas) / peak, 0) + "%",
           fmt(100 * gflops(n, direct) / peak, 0) + "%", fmt(direct / blas, 3),
           fmt(aut / std::min(direct, eigen), 3), fmt(aut / best, 3), fmt(again, 3)});
  }
  t.print();
  series.push_back(ser);
}

// C += A B, float, as a user ports it: matmul_into with beta 1, the product
// into a scratch plus an add (all that was possible before beta), and
// OpenBLAS sgemm with beta 1, run twice in each rotation (the second, into
// its own C, shows how far two runs of the same call differ here).
Table accumulate_table(const Options& opt, std::vector<double>& into_ratio, std::vector<double>& aa) {
  Table t("C += A B, float: median us", {"n", "veda matmul_into (beta 1)", "veda matmul + add", "OpenBLAS direct (beta 1)",
                                          "matmul_into / direct", "matmul + add / direct", "OpenBLAS again / direct"});
  for (std::size_t n : opt.quick ? std::vector<std::size_t>{256, 1024} : std::vector<std::size_t>{256, 1024, 1500, 2048}) {
    const auto a = square<float>(n, 1), b = square<float>(n, 2);
    auto c1 = square<float>(n, 3), c2 = square<float>(n, 3);
    std::vector<float> c3(n * n), c4(n * n);
    std::vector<std::function<void()>> run = {
        [&] { matmul::veda_matmul_acc(a, b, c1); }, [&] { matmul::veda_matmul_scratch_add(a, b, c2); },
        [&] { matmul::openblas_gemm<float>(a.host().data(), b.host().data(), c3.data(), n, 1.0f); },
        [&] { matmul::openblas_gemm<float>(a.host().data(), b.host().data(), c4.data(), n, 1.0f); }};
    for (int i = 0; i < 12; ++i) run[0](), run[1]();  // veda learns
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(n >= 1024 ? 1 : calibrate_batch(r, 2e7));
    const auto s = measure_interleaved(run, n >= 1024 && opt.quick ? 5 : 11, batch);
    into_ratio.push_back(s[0].median / s[2].median);
    aa.push_back(s[3].median / s[2].median);
    t.add({std::to_string(n), fmt(s[0].median / 1e3, 1), fmt(s[1].median / 1e3, 1), fmt(s[2].median / 1e3, 1),
           fmt(into_ratio.back(), 3), fmt(s[1].median / s[2].median, 3), fmt(aa.back(), 3)});
  }
  t.print();
  return t;
}

// GPU, float: veda on resident Arrays (results left on the device) and on
// host Arrays (transfers both ways), cuBLAS direct on resident data.
void gpu_table(const Options& opt, std::vector<double>& regrets, std::vector<Series>& series) {
  Table t("GPU, float: GFLOP/s (resident data unless noted)",
          {"n", "gpu-tiled", "gpu-cublas", "gpu-cublas-tf32", "auto", "auto tier", "cuBLAS direct",
           "cuBLAS TF32 direct", "gpu-cublas / direct", "auto regret", "auto host-to-host ms"});
  const std::vector<std::string> tiers = {"gpu-tiled", "gpu-cublas", "gpu-cublas-tf32", ""};
  Series ser("GPU, float, resident", "n");
  for (std::size_t n = 64; n <= (opt.quick ? 2048u : 8192u); n *= 2) {
    auto a = square<float>(n, 1), b = square<float>(n, 2);
    const auto ha = a.clone(), hb = b.clone();
    a.to_device();
    b.to_device();
    auto direct = matmul::make_cublas_direct(n);
    std::vector<std::function<void()>> run;
    for (const auto& tier : tiers)
      run.push_back([&, tier] {
        veda::MatmulOptions o;
        o.tier = tier;
        (void)veda::matmul(a, b, o);  // the result stays on the device
        veda::synchronize();
      });
    run.push_back([&] { direct->run(false); });
    run.push_back([&] { direct->run(true); });
    run.push_back([&] { matmul::veda_matmul(ha, hb, ""); });  // host in, host out
    for (int i = 0; i < 12; ++i) {
      run[3]();
      run[6]();
    }
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(calibrate_batch(r, 2e7));
    const auto s = measure_interleaved(run, opt.quick ? 5 : 11, batch);
    (void)veda::matmul(a, b);
    const std::string auto_tier = veda::last_decision().tier;
    const double best = std::min({s[0].median, s[1].median, s[2].median});
    regrets.push_back(s[3].median / best);
    const double x = static_cast<double>(n);
    for (std::size_t i = 0; i < 3; ++i) ser.add(x, tiers[i], Series::Role::Forced, s[i]);
    ser.add(x, "auto", Series::Role::Auto, s[3], auto_tier);
    ser.add(x, "cuBLAS direct", Series::Role::Peer, s[4]);
    ser.add(x, "cuBLAS TF32 direct", Series::Role::Peer, s[5]);
    t.add({std::to_string(n), fmt(gflops(n, s[0].median), 0), fmt(gflops(n, s[1].median), 0),
           fmt(gflops(n, s[2].median), 0), fmt(gflops(n, s[3].median), 0), auto_tier,
           fmt(gflops(n, s[4].median), 0), fmt(gflops(n, s[5].median), 0), fmt(s[4].median / s[1].median, 3),
           fmt(s[3].median / best, 3), fmt(s[6].median / 1e6, 3)});
  }
  t.print();
  series.push_back(ser);
}

// The seed documents' headline: a 2000 x 2000 float product, host data in
// and the result back on the host (421 ms on their CPU, 5.3 ms on their GPU).
Table seed_table() {
  Table t("2000 x 2000 float, host to host (seed documents: 421 ms CPU, 5.3 ms GPU)",
          {"contender", "ms (median)", "GFLOP/s", "veda tier"});
  const std::size_t n = 2000;
  const auto a = square<float>(n, 1), b = square<float>(n, 2);
  std::vector<float> c(n * n);
  auto row = [&](const char* name, const std::function<void()>& f, bool veda_call) {
    for (int i = 0; i < 6; ++i) f();
    const auto s = measure(f, 7, 1, 1);
    t.add({name, fmt(s.median / 1e6, 2), fmt(gflops(n, s.median), 1), veda_call ? veda::last_decision().tier : "-"});
  };
  row("OpenBLAS direct", [&] { matmul::openblas_gemm<float>(a.host().data(), b.host().data(), c.data(), n); }, false);
  row("veda cpu-blas", [&] { matmul::veda_matmul(a, b, "cpu-blas"); }, true);
  row("veda auto", [&] { matmul::veda_matmul(a, b, ""); }, true);
  if (veda::get_runtime().gpu_usable()) row("veda gpu-cublas", [&] { matmul::veda_matmul(a, b, "gpu-cublas"); }, true);
  t.print();
  return t;
}

// Child mode: OpenBLAS direct sgemm GFLOP/s at n = 1024 and 4096 (1024 and
// 2048 quick) with the kernel set this process was started with.
int direct_child(bool quick) {
  veda::init();
  std::printf("%s", matmul::openblas_core().c_str());
  for (std::size_t n : {std::size_t{1024}, std::size_t{quick ? 2048u : 4096u}}) {
    const auto a = square<float>(n, 1), b = square<float>(n, 2);
    std::vector<float> c(n * n);
    const auto s = measure([&] { matmul::openblas_gemm<float>(a.host().data(), b.host().data(), c.data(), n); },
                           n >= 4096 ? 3 : 7, 1, 3);
    std::printf(" %.1f", gflops(n, s.median));
  }
  std::printf(" %.1f\n", cpu_peak_gflops());
  veda::shutdown();
  return 0;
}

// Returns the kernel set fastest at the larger n ("" if none ran).
std::string coretype_table(const Options& opt, std::vector<Table>& tables) {
  const std::string big = opt.quick ? "2048" : "4096";
  Table t("OpenBLAS direct sgemm by kernel set (OPENBLAS_CORETYPE, one process each)",
          {"OPENBLAS_CORETYPE", "kernels loaded", "n=1024 GFLOP/s", "% of peak", "n=" + big + " GFLOP/s", "% of peak"});
  std::string best;
  double best_rate = 0;
  for (const char* core : {"", "Haswell", "Zen", "SkylakeX", "Cooperlake"}) {
    const std::string cmd = std::string(*core ? "OPENBLAS_CORETYPE=" + std::string(core) : "env -u OPENBLAS_CORETYPE") +
                            " /proc/" + std::to_string(getpid()) + "/exe --direct-child" + (opt.quick ? " --quick" : "");
    FILE* p = popen(cmd.c_str(), "r");
    char name[64] = {};
    double g1 = 0, g4 = 0, peak = 1;
    const int got = p ? std::fscanf(p, "%63s %lf %lf %lf", name, &g1, &g4, &peak) : 0;
    if (p) pclose(p);
    if (got != 4) {
      t.add({*core ? core : "(unset: OpenBLAS decides)", "failed", "-", "-", "-", "-"});
      continue;
    }
    t.add({*core ? core : "(unset: OpenBLAS decides)", name, fmt(g1, 1), fmt(100 * g1 / peak, 0) + "%", fmt(g4, 1),
           fmt(100 * g4 / peak, 0) + "%"});
    if (*core && g4 > best_rate) {
      best_rate = g4;
      best = core;
    }
  }
  t.print();
  tables.push_back(t);
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--direct-child") return direct_child(argc > 2);
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# matmul: veda tiers vs OpenBLAS and cuBLAS called directly\n%s\n", machine_line().c_str());
  std::vector<Table> tables;
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    const std::string best = coretype_table(opt, tables);
    if (!best.empty()) setenv("OPENBLAS_CORETYPE", best.c_str(), 1);  // before this process loads OpenBLAS
  }
  veda::init();
  std::printf("OpenBLAS kernels: %s (OPENBLAS_CORETYPE=%s); veda threads %d\n", matmul::openblas_core().c_str(),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset",
              veda::get_runtime().cpu().threads);
  std::vector<double> cpu_regret, gpu_regret, vs_openblas, aa;
  std::vector<Series> series;
  cpu_table<float>(opt, cpu_regret, series, vs_openblas, aa);
  cpu_table<double>(opt, cpu_regret, series, vs_openblas, aa);
  std::vector<double> into_ratio, into_aa;
  tables.push_back(accumulate_table(opt, into_ratio, into_aa));
  if (veda::get_runtime().gpu_usable()) gpu_table(opt, gpu_regret, series);
  tables.push_back(seed_table());
  std::printf("\nauto regret, median over sizes: CPU %.3f (worst %.3f)", median_of(cpu_regret),
              cpu_regret.empty() ? 0.0 : *std::max_element(cpu_regret.begin(), cpu_regret.end()));
  if (!gpu_regret.empty())
    std::printf(", GPU %.3f (worst %.3f)", median_of(gpu_regret),
                *std::max_element(gpu_regret.begin(), gpu_regret.end()));
  std::printf("\n");
  const double worst = *std::min_element(vs_openblas.begin(), vs_openblas.end());
  write_json(opt.json_path, "matmul", tables, series,
             {{"CPU matmul throughput vs OpenBLAS direct with its best kernel set, n >= 256 (median; worst " +
                   fmt(worst, 3) + "; OpenBLAS against itself in the same rotation: median " + fmt(median_of(aa), 3) +
                   ", worst " + fmt(*std::min_element(aa.begin(), aa.end()), 3) + ")",
               fmt(median_of(vs_openblas), 3) + "x", ">= 0.97x", median_of(vs_openblas) >= 0.97},
              {"C += A B, matmul_into (beta 1) vs OpenBLAS sgemm direct (worst over sizes; OpenBLAS against itself in "
               "the same rotation: " +
                   fmt(*std::min_element(into_aa.begin(), into_aa.end()), 3) + "-" +
                   fmt(*std::max_element(into_aa.begin(), into_aa.end()), 3) + ")",
               fmt(*std::max_element(into_ratio.begin(), into_ratio.end()), 3) + "x", "<= 1.05x",
               *std::max_element(into_ratio.begin(), into_ratio.end()) <= 1.05}});
  veda::shutdown();
  return 0;
}
