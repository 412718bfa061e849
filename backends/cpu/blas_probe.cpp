// Choosing OpenBLAS's kernel set by measuring it. OpenBLAS reads
// OPENBLAS_CORETYPE once, when it loads, so each candidate runs in its own
// forked child: set the variable, dlopen the library, time sgemm at
// n = 768, report through a pipe, exit. The parent (idle meanwhile) waits at
// most a few seconds per child and drops a child that fails or hangs. Two
// rounds in opposite orders, each candidate scored by its better round:
// noise here only ever slows a run down.
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/blas.hpp"

namespace veda::detail {
namespace {

using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                       int);

// In the child: GFLOP/s of sgemm at n = 768 (a few ms a run: the probe must
// keep calibration short) with `core`, or 0.
double child_rate(const char* core, int threads) {
  setenv("OPENBLAS_CORETYPE", core, 1);
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  void* h = dlopen(VEDA_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  auto sgemm = h ? reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm")) : nullptr;
  if (!sgemm) return 0;
  constexpr int n = 768;
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n);
  auto run = [&] { sgemm(101, 111, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n); };
  run();
  run();
  std::vector<double> t;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return 2.0 * n * n * n / t[1] / 1e9;
}

// In the parent: runs one child, 0 if it fails or takes longer than 5 s.
double probe(const std::string& core, int threads) {
  int fd[2];
  if (pipe(fd) != 0) return 0;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return 0;
  }
  if (pid == 0) {
    close(fd[0]);
    const double r = child_rate(core.c_str(), threads);
    ssize_t w = write(fd[1], &r, sizeof r);
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  double r = 0;
  pollfd p{fd[0], POLLIN, 0};
  if (poll(&p, 1, 5000) == 1 && read(fd[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r = 0;
  close(fd[0]);
  if (waitpid(pid, nullptr, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return r;
}

}  // namespace

std::vector<std::string> candidate_coretypes(const CpuInfo& cpu) {
  std::vector<std::string> c;
  if (cpu.avx512) {
    c.push_back("SkylakeX");
    if (cpu.avx512_bf16) c.push_back("Cooperlake");
  }
  if (cpu.avx2 && cpu.fma) {
    c.push_back("Haswell");
    if (cpu.vendor == "AuthenticAMD") c.push_back("Zen");
  }
  return c;
}

std::string measure_coretype(const CpuInfo& cpu, int threads, std::string& report) {
  if (const char* env = std::getenv("OPENBLAS_CORETYPE"); env && *env) {
    report = "OPENBLAS_CORETYPE set by the environment";
    return {};
  }
  if (blas_loaded()) {
    report = "OpenBLAS already loaded";
    return {};
  }
  const auto cands = candidate_coretypes(cpu);
  if (cands.size() < 2) return cands.empty() ? std::string() : cands.front();
  std::vector<double> best(cands.size(), 0.0);
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const std::size_t k = round == 0 ? i : cands.size() - 1 - i;
      best[k] = std::max(best[k], probe(cands[k], threads));
    }
  const auto top = std::max_element(best.begin(), best.end());
  report.clear();
  for (std::size_t i = 0; i < cands.size(); ++i)
    report += (i ? ", " : "") + cands[i] + " " + std::to_string(static_cast<int>(best[i] + 0.5));
  report += " GFLOP/s (sgemm n=768)";
  return *top > 0 ? cands[static_cast<std::size_t>(top - best.begin())] : std::string();
}

}  // namespace veda::detail
