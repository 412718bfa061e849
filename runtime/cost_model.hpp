// CostModel: predicts the time of every candidate tier of one call, then
// chooses among them. Both steps are pure functions of (profile, request,
// history), so decisions are tested with synthetic profiles and histories.
//
// Prediction (analytic): fixed overhead + transfers for operands not already
// valid where the tier would run + max(compute, memory traffic), a roofline
// from the MachineProfile.
//
// Choice: a tier with enough measured samples in this size bucket is
// predicted from its history (the analytic estimate scaled by the median
// measured/predicted ratio), which outranks the analytic figure. An
// unmeasured tier that may be the best despite the prediction (within 30%,
// or within the profile's possible error: kProfileDoubt) is tried, so a
// profile wrong by 3x heals within a few calls; deterministic mode uses the
// analytic model alone and never explores.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/profile.hpp"
#include "runtime/reason.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/tier.hpp"

namespace veda::detail {

struct CostRequest {
  OpClass op = OpClass::Map;
  std::uint32_t tiers = 0;        // tier_bit()s the operation offers
  std::size_t n = 0;              // elements (Gemm: see m, k below; Spmv: non-zeros)
  std::size_t m = 0, k = 0;       // Gemm: m, k; Spmv: rows, columns
  double bytes_per_elem = 0;      // read + written per element
  double flops_per_elem = 0;      // 0: unknown
  double cpu_ns_per_elem = 0;     // learned per-element CPU cost (0: derive)
  std::size_t h2d_bytes = 0;      // if run on the GPU: operands to copy in from the host
  std::size_t peer_bytes = 0;     // ... and from another device
  std::size_t d2h_bytes = 0;      // if run on the GPU: results to copy back
  std::size_t cpu_d2h_bytes = 0;  // if run on the CPU: operands valid only on the device
  bool host_pinned = false;
  std::size_t cols = 0;           // Gemm: n; Transpose: columns (n then holds rows)
  double elem_bytes = 0;          // Sort/Scan/Transpose element (key) size
  double value_bytes = 0;         // Sort: value size (0: keys only)
  bool linear = false;            // Gemm with a bias + activation epilogue
  double gpu_setup_us = 0;        // Map: the cuda tier's one-off cost, already spread over calls
  bool double_precision = false;
  bool allow_tf32 = false;
  bool allow_fp16 = false;
  bool tensor_cores = false;      // the GPU has them (compute capability >= 8.0)
  int threads = 1;
  double idle_us = 0;             // since the CPU workers last ran
  // Device memory a GPU tier would allocate (operands to copy in, results),
  // and what the device can still provide; a tier that does not fit is out,
  // except cuda-streamed, which works in chunks.
  std::size_t device_need = 0;
  std::size_t device_room = static_cast<std::size_t>(-1);
  // Devices of the same kind as the call's that are idle now, the call's
  // own included: co-execution may split its GPU part over them.
  int gpu_devices = 1;
  bool gpu_ok = false;            // a usable GPU and a call site that can use it
  std::string gpu_note;           // why not, when !gpu_ok
  std::string cpu_note;           // why CPU tiers are excluded (placement Gpu)
  bool cpu_ok = true;
};

struct Estimate {
  Tier tier = Tier::Serial;
  double total_us = 0;
  double overhead_us = 0;  // the part that does not grow with n
  double transfer_us = 0;
  bool eligible = true;
  bool from_history = false;
  double gpu_fraction = 0;  // CoExec only
  double n = 0;             // CoExec only: the elements its split divides
  int gpu_devices = 1;      // CoExec only: devices sharing the GPU part
  Tier coexec_gpu = Tier::Count;  // CoExec only: the GPU tier the devices run (Count: the fastest)
  double join_us = 0;       // CoExec only: a host pass over the whole call after its parts (a sort's merge)
  double memory_us = 0;     // CPU tiers: time of the host-memory traffic
  double wake_us = 0;       // oneTBB tiers: waking the sleeping workers (in overhead_us), which a stream of calls pays once
  double host_traffic_us = 0;  // GPU tiers: host-memory time of their transfers (staging, DMA)
  std::string note;
};

// Analytic predictions for every tier in req.tiers, in tier order.
std::vector<Estimate> estimate(const MachineProfile& p, const CostRequest& req);

// The op classes' formulas (cost_model_ops.cpp); estimate() dispatches.
void gemm_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out);
void sort_scan_transpose_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out);
void spmv_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out);
// Attention: m = batch * heads * query rows, k = key rows, cols = head_dim;
// n = the scores computed (causal: about half of m * k).
void attention_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out);
// Host<->device time for `bytes`, staged when pageable and large.
double h2d_time_us(const GpuProfile& g, double bytes, bool pinned);
double d2h_time_us(const GpuProfile& g, double bytes, bool pinned);
// From another device into the one `to` describes: at the rate calibration
// measured from the device in `from_slot`; with no source named (-1), the
// slowest link measured into it; unmeasured, staged through pinned host
// memory (both host links, an upper bound that history corrects).
double peer_time_us(const GpuProfile& to, double bytes, int from_slot = -1);
// A GPU tier's copy-in: from the host and from other devices.
double copy_in_us(const GpuProfile& g, const CostRequest& r);

// What history knows about one tier in one bucket.
struct TierHistory {
  int samples = 0;            // kept (warm-up dropped)
  double correction = 1.0;    // median of measured / analytic (newest samples)
  int explored = 0;           // exploration runs already spent
  bool stale = false;         // measured, but not for a while: conditions may have changed
  bool seeded = false;        // measured only in an earlier run (stored history): unconfirmed
  bool switched_only = false;  // measured only right after another tier ran (Run::switched): unconfirmed
  int refresh = 0;            // re-measurement runs still to do
  double busy_since_us = 0;   // the bucket's calls' time since it was last measured
  int backoff = 0;            // re-measurements begun since it was last the best (kRefreshBackoffMax at most)
  // The second lowest measured / analytic of all its kept runs: what it
  // did before its newest runs, which a burst of load may have slowed.
  // 0 (none) unless confirmed in this run, and stale or being re-measured.
  double best_kept = 0;
};
using HistoryView = std::array<TierHistory, kTierCount>;

constexpr int kMinSamples = 1;      // samples before history outranks the model
// Fewer samples than this are unconfirmed: one run may have been preempted
// or paid for a cold cache (a 4-float sum once took 1.5 us serially, 25x its
// usual time). A stale unconfirmed tier is re-measured when its analytic
// prediction, not only its measured one, is within reach of the best; so
// is a tier known only from an earlier run's stored samples, or only from
// runs right after another tier's, however many.
constexpr int kConfirmSamples = 3;
constexpr int kMaxExplore = 3;      // exploration runs per tier and bucket
// Runs per re-measurement of a measured tier: on the CPU the first comes
// right after another tier's and is not counted (Run::switched); the other four move
// the lower median of the newest TierSamples::kRecent (8) alone, so one
// re-measurement replaces figures a burst of load left.
constexpr int kRefreshRuns = 5;
// A stale confirmed tier is re-measured only once the bucket's calls since
// its last run took long enough that the re-measurement's extra time is at
// most this share of them: by wall time alone a bucket called rarely was
// re-measured every kStaleNs however little it ran (five serial runs 33 us
// over the best's each 0.5 s double the time of ten 33 us calls a second).
constexpr double kRefreshShare = 0.02;
// Each re-measurement begun since the tier was last the best doubles that
// time, up to 2^kRefreshBackoffMax: a runner-up that stays behind costs
// less and less (in bench_expressions' rotation the `where` at 2^16
// re-measured serial, twice the best's time, in three of eight batches).
constexpr int kRefreshBackoffMax = 6;
constexpr double kExploreBand = 1.3;
// A profile may be this far off (measured on a busy machine, or a machine
// that changed), so an unmeasured tier predicted within kExploreBand x
// kProfileDoubt of the best is tried once when that costs little
// (kCheapExploreUs over the best), and otherwise when this bucket's own
// measurements show the model off by that much. A measured runner-up is
// re-measured that far behind only when all kRefreshRuns runs together
// cost that little: a 2^20-element loop 2.4x its 430 us best was re-measured
// five times on one slow run's word, 3 ms of a 21-call stretch.
constexpr double kProfileDoubt = 3.0;
constexpr double kCheapExploreUs = 1000;
// Co-execution must beat the better side alone by this factor to be chosen;
// it also pays for a helper thread and joining the two parts.
constexpr double kCoExecGain = 0.9;
// The tier a co-executed call's devices run (a GEMM's: cuBLAS in its own
// precision), and so what a forced cpu+gpu runs on a call it cannot split.
constexpr Tier coexec_device_tier(OpClass op) { return op == OpClass::Gemm ? Tier::GpuCublas : Tier::Cuda; }
constexpr double kCoExecJoinUs = 30;

struct Choice {
  Tier tier = Tier::Serial;
  bool refreshed = false;      // an exploration that re-measures a stale tier
  double gpu_fraction = 0;     // CoExec: share of the range given to the GPU
  int gpu_devices = 1;         // CoExec: devices sharing it, equally
  bool explored = false;
  bool settled = false;        // nothing left to learn: the choice may be cached
  std::vector<Estimate> estimates;
  Reason why;  // its text: reason_text()
  std::string reason_text() const { return detail::reason_text(why, estimates); }
};

struct ChoiceContext {
  bool deterministic = false;
  bool all_on_device = false;  // every range operand is valid on the device
  std::string forced;          // non-empty: the forcing rule, leads the reason
};

Choice choose(std::vector<Estimate> estimates, const HistoryView* history,
              const ChoiceContext& ctx);

}  // namespace veda::detail
