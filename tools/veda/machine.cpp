// `veda info` and `veda calibrate`.
#include <cstdio>

#include "src/calibration.hpp"
#include "runtime/file_io.hpp"
#include "runtime/profile.hpp"
#include "runtime/runtime_state.hpp"
#include "tools/veda/commands.hpp"
#include "veda/veda.hpp"

namespace veda::cli {

int info() {
  veda::init();
  const auto& rt = veda::get_runtime();
  std::printf("%s", rt.describe().c_str());
  const auto& p = rt.state().profile();
  std::printf("Profile: %s", p.source.c_str());
  if (p.source == "calibrated" || p.source == "cache" || p.source == "refreshed") {
    const std::string cached = detail::cache_path(p);
    std::printf(", %.2f s to measure, ", p.calibration_seconds);
    if (cached.empty())
      std::printf("not cached (no cache directory: neither XDG_CACHE_HOME nor HOME is set)");
    else
      std::printf("cached at %s", cached.c_str());
  }
  if (p.provisional) std::printf("; provisional (%s): measured again when the machine is quiet", p.calibration_note.c_str());
  std::printf("\n");
  veda::shutdown();
  return 0;
}

int calibrate(const std::string& output) {
  // Where it goes is checked first: no measuring for nothing.
  if (output.empty()) {
    const std::string dir = detail::profile_cache_dir();
    if (dir.empty())
      throw Error("veda calibrate: no cache directory (neither XDG_CACHE_HOME nor HOME is set); use -o FILE");
    std::string why;
    if (!detail::ensure_private_dir(dir, why))
      throw Error("veda calibrate: the cache " + dir + " is not usable: " + why);
  }
  // Start without calibrating: the measurement below is the one written.
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  auto& st = veda::get_runtime().state();
  auto progress = [](const std::string& step, double f) {
    const int done = static_cast<int>(f * 30);
    std::fprintf(stderr, "\r[%-30s] %3.0f%% %-32s", std::string(static_cast<std::size_t>(done), '#').c_str(), 100 * f,
                 step.c_str());
    std::fflush(stderr);
  };
  const detail::MachineProfile p =
      detail::measure_profile(st.config, st.cpu, st.gpu, *st.cpu_executor, st.all_devices(), progress);
  std::fprintf(stderr, "\n");
  const std::string path = output.empty() ? detail::cache_path(p) : output;
  // A symbolic link, device node, FIFO, directory or another user's file at
  // `path` is refused, never replaced; -o files get the usual 0666 less umask.
  std::string why;
  const bool saved = detail::save_profile(p, path, &why, output.empty() ? 0600 : 0666);
  veda::shutdown();
  if (!saved) throw Error("veda calibrate: cannot write " + path + ": " + why);
  std::printf("measured in %.2f s, written to %s\n", p.calibration_seconds, path.c_str());
  if (p.provisional)
    std::printf("provisional: %s; these figures are probably too slow (programs measure again when the machine is "
                "quiet)\n", p.calibration_note.c_str());
  std::printf("CPU: FMA %.0f GFLOP/s per thread, triad %.1f GB/s (1 thread) / %.1f GB/s (all), fork-join %.2f us "
              "(static) / %.2f us (auto), wake-up %.0f us after %.0f us idle\n",
              p.cpu.fma_gflops_per_thread, p.cpu.bw_one_gbps, p.cpu.bw_all_gbps, p.cpu.tbb_static_us,
              p.cpu.tbb_auto_us, p.cpu.tbb_wake_us, p.cpu.tbb_idle_us);
  if (p.cpu.sgemm_gflops > 0)
    std::printf("BLAS: %s kernels, sgemm %.0f GFLOP/s, dgemm %.0f GFLOP/s (n=1024); %s\n",
                p.cpu.blas_core.empty() ? "default" : p.cpu.blas_core.c_str(), p.cpu.sgemm_gflops, p.cpu.dgemm_gflops,
                p.cpu.blas_probe.c_str());
  if (!p.gpu.present) std::printf("GPU: none measured\n");
  for (std::size_t slot = 0; p.gpu.present && slot <= p.other_gpus.size(); ++slot) {
    const detail::GpuProfile& g = p.gpu_at(slot);
    std::printf("GPU %s: launch %.1f us, H2D %.1f GB/s pinned / %.1f staged, device %.0f GB/s, sgemm %.0f GFLOP/s",
                g.name.c_str(), g.launch_us, g.h2d_pinned_gbps, g.h2d_staged_gbps, g.device_bw_gbps, g.sgemm_gflops);
    for (std::size_t from = 0; from < g.peer_in_gbps.size(); ++from)
      if (from != slot) std::printf(", from device slot %zu %.1f GB/s", from, g.peer_in_gbps[from]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace veda::cli
