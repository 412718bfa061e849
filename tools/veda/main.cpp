// The `veda` command-line tool:
//   veda info                 this machine as veda sees it
//   veda calibrate [-o file]  measure the machine profile (progress shown)
//   veda bench [--op ...] [--sizes ...] [--csv|--json] [--plot out.png]
//   veda explain trace.json   where the time of a traced run went, and why
#include <CLI/CLI.hpp>

#include <cstdio>

#include "tools/veda/commands.hpp"
#include "veda/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"veda: where data-parallel work runs, and why"};
  app.require_subcommand(1);
  auto* info = app.add_subcommand("info", "CPU, peak, BLAS kernels, GPUs (or why none) and the machine profile");
  std::string output;
  auto* calibrate = app.add_subcommand("calibrate", "measure this machine's profile and write it");
  calibrate->add_option("-o,--output", output, "write here instead of the cache veda reads at start-up");
  veda::cli::BenchArgs bench_args;
  bool csv = false, json = false;
  auto* bench = app.add_subcommand("bench", "every tier forced vs auto, per op and size, with the auto regret");
  bench->add_option("--op", bench_args.ops, "saxpy, exp, sum, sort, matmul, pipeline, ladder (the GPU GEMM ladder alone; matmul prints it too), flash (attention's GPU tiers; --sizes: sequence lengths) (repeatable; default all)")
      ->delimiter(',');
  bench->add_option("--sizes", bench_args.sizes, "sizes (elements, or n for matmul), comma separated")->delimiter(',');
  bench->add_flag("--csv", csv, "CSV output");
  bench->add_flag("--json", json, "JSON output");
  bench->add_option("--plot", bench_args.plot, "write time and regret plots to this PNG (needs gnuplot)");
  std::string trace;
  auto* explain = app.add_subcommand("explain", "summarise a trace written with VEDA_TRACE");
  explain->add_option("trace", trace, "trace JSON")->required()->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return veda::cli::info();
    if (*calibrate) return veda::cli::calibrate(output);
    if (*bench) {
      if (csv && json) throw veda::InvalidArgument("veda bench: choose one of --csv and --json");
      bench_args.format = csv ? "csv" : json ? "json" : "table";
      return veda::cli::bench(bench_args);
    }
    if (*explain) return veda::cli::explain(trace);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "veda: %s\n", e.what());
    return 1;
  }
  return 0;
}
