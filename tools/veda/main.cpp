// The `veda` command-line tool.
//   veda info    this machine as veda sees it: CPU and threads, the FP32 FMA
//                peak and the BLAS kernel set with the fraction of peak it
//                reaches, each GPU or why none, the machine profile in use.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "runtime/calibration.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

namespace {

int info() {
  veda::init();
  const auto& rt = veda::get_runtime();
  std::printf("%s", rt.describe().c_str());
  const auto& p = rt.state().profile;
  std::printf("Profile: %s", p.source.c_str());
  if (p.source == "calibrated" || p.source == "cache")
    std::printf(", cached at %s", veda::detail::cache_path(p).c_str());
  std::printf("\n");
  veda::shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"veda: where data-parallel work runs, and why"};
  app.require_subcommand(1);
  auto* info_cmd = app.add_subcommand("info", "CPU, BLAS, GPUs and the machine profile as veda sees them");
  CLI11_PARSE(app, argc, argv);
  if (*info_cmd) return info();
  return 0;
}
