// The `veda` tool's subcommands (main.cpp parses the command line).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace veda::cli {

int info();
// Measures this machine's profile with a progress display and writes it to
// `output` ("" for the cache veda reads at start-up).
int calibrate(const std::string& output);

struct BenchArgs {
  std::vector<std::string> ops;      // empty: all
  std::vector<std::size_t> sizes;    // empty: each op's defaults
  std::string format = "table";      // table, csv, json
  std::string plot;                  // PNG path, or ""
};
int bench(const BenchArgs& args);
// `veda bench --op flash` (bench_attention.cpp): attention's GPU tiers at
// these sequence lengths, head_dim 128, one line a measurement.
void print_attention(const std::vector<std::size_t>& seqs);

// Summarises a Chrome trace written by veda (VEDA_TRACE).
int explain(const std::string& trace_path);

}  // namespace veda::cli
