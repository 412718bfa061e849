// The narrow interface between veda's header templates (veda::gpu,
// gpu_kernel, par_iter, ops) and the scheduler in libveda.
//
// A call site (one wrapped function or op) is registered once; each call
// describes itself (size, element type, where its operands are valid) in a
// CallDesc, asks begin_call() for a Plan (which tier, which grain), runs
// that tier, and reports back with end_call(), which feeds the measured time
// into the site's history and records the thread's last decision. A plan
// that has settled on the serial tier comes from the thread's table
// (settled_plans.hpp) inline; the rest is out of line in libveda.
//
// Thread-safety: all functions may be called concurrently, also for one site.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <tbb/task_arena.h>

#include "veda/decision.hpp"
#include "veda/detail/buffer.hpp"
#include "veda/detail/settled_plans.hpp"
#include "veda/detail/type_key.hpp"
#include "veda/detail/tier.hpp"
#include "veda/error.hpp"

namespace veda {
class Runtime;

// Per-element cost of a wrapped function, if the caller knows it.
struct CostHint {
  double flops_per_elem = 0;  // 0: unknown (veda measures)
  double bytes_per_elem = 0;  // 0: sizes of the arguments and the result
};

namespace detail {

class Site;
class TypeSlot;
class BucketState;

// What kind of work a site does; selects the cost model's formulas.
enum class OpClass : std::uint8_t { Map, Kernel, Reduce, Scan, Sort, Transpose, Gemm, Spmv, Attention };

// `identity` distinguishes functions (e.g. &typeid(F)); sites with the same
// identity and name are the same site. `tiers` are the tier_bit()s offered.
Site* site_for(const void* identity, std::string_view name, OpClass op, std::uint32_t tiers,
               const CostHint& hint);

// CallDesc::bytes_per_elem: beyond 64 KiB per element the exact figure no
// longer changes a decision.
constexpr std::uint16_t bytes16(std::size_t b) noexcept {
  return static_cast<std::uint16_t>(b < 0xffff ? b : 0xffff);
}

// A device index as CallDesc keeps it (indices past 127 saturate: no node has them).
constexpr std::int8_t device_byte(int i) noexcept { return static_cast<std::int8_t>(i < -1 ? -1 : i > 127 ? 127 : i); }

// Built on every call: kept within 80 bytes (static_assert below), since
// compilers zero larger objects with `rep stos`, which is slow to start on
// AMD and was a fifth of a settled call's cost.
struct CallDesc {
  std::size_t n = 0;                // elements
  const TypeKey* type_key = nullptr; // distinguishes element types at one site
  std::size_t h2d_bytes = 0;        // on the GPU: operand bytes to copy in (see peer_share)
  std::size_t d2h_bytes = 0;        // on the GPU: result bytes that must come back
  std::size_t cpu_d2h_bytes = 0;    // on the CPU: operand bytes valid only on the device
  // Ops (matmul, sort, scan, transpose): the shape the cost model needs.
  std::size_t dims[3] = {0, 0, 0};  // GEMM: m, k, n; transpose, spmv: rows, cols
  std::uint16_t bytes_per_elem = 0; // read + written per element (bytes16: saturated)
  std::int8_t device = -1;          // the device the call asks for (its options), -1: any
  std::int8_t resident_device = -1; // the device its operands on a device pick (CopyIn), -1: none
  std::uint32_t exclude_tiers : 24 = 0;  // tier_bit()s of the site's tiers this call may not use (forced cpu+gpu: cuda)
  // Of h2d_bytes, the part (in 255ths) held by another device rather than
  // the host (several devices: see CopyIn).
  std::uint32_t peer_share : 8 = 0;
  float gpu_setup_us = 0;           // the cuda tier's one-off cost (compiling a generated kernel)
  std::uint8_t elem_bytes = 0;      // element (key) size
  std::uint8_t value_bytes = 0;     // sort: value size of key-value pairs
  Placement placement : 2 = Placement::Auto;
  std::uint8_t ndims : 2 = 0;       // dims used (0: the shape is n elements)
  bool any_on_device : 1 = false;
  bool all_on_device : 1 = false;
  bool host_pinned : 1 = false;
  bool gpu_capable : 1 = false;     // the call site can run on the GPU
  Tier forced_tier : 5 = Tier::Count;  // Count: let the cost model choose
  bool nvcc_site : 1 = false;       // compiled by nvcc (explains !gpu_capable)
  bool strict : 1 = false;          // Placement::Gpu without a GPU throws
  bool linear : 1 = false;          // GEMM with a bias + activation epilogue
};
static_assert(sizeof(CallDesc) <= 80, "CallDesc: see the size note above it");
static_assert(kTierCount < 24, "CallDesc: forced_tier holds a tier in 5 bits, exclude_tiers 24 tier bits");

// "serial", "tbb-static", ... -> Tier; "" -> Tier::Count. Throws
// veda::InvalidArgument naming the unknown tier.
Tier parse_tier(std::string_view name);

// A call's `device` option: it must name one of the runtime's devices (InvalidArgument otherwise).
void check_device_option(Runtime& rt, int device, const std::string& name);
// The whole `device` option check, for every call that takes one: -1 (the
// runtime's device) passes; below -1 is InvalidArgument; with a usable GPU,
// check_device_option; without one, 0 passes (code written for GPU 0 runs
// on a machine without a GPU), as does an index of a device that exists but
// is not used, and any other index is InvalidArgument.
void check_device_index(Runtime& rt, int device, const std::string& name);
// The part that needs no runtime (a negative index other than -1), for
// options checked when a function is wrapped.
void check_device_sign(int device, std::string_view name);

[[noreturn]] void throw_bad_placement(Placement p, std::string_view name);
// A call's `placement` option must be Auto, Cpu or Gpu: a value cast from
// another integer would otherwise act as Auto without a word.
constexpr bool valid_placement(Placement p) noexcept {
  return static_cast<unsigned>(p) <= static_cast<unsigned>(Placement::Gpu);
}
inline void check_placement(Placement p, std::string_view name) {
  if (!valid_placement(p)) throw_bad_placement(p, name);
}

// Returned by every call's begin_call: within 80 bytes like CallDesc.
// No bit-fields: a settled call fills the first word field by field, and a
// bit-field update would load that word just after the constructor's byte
// stores (a store-forwarding stall, ~5 ns of a 17 ns call).
struct Plan {
  Tier tier = Tier::Serial;
  bool sync_for_timing = true;  // GPU tiers: synchronise so the time can be learned
  bool timed = true;            // end_call reads the clock (settled calls: some, BucketState::timed_mask)
  bool fallback = false;        // forced back to the CPU (device out of memory)
  bool forced_tier = false;     // CallDesc::forced_tier was honoured
  bool from_table = false;      // a settled plan from the thread's table (settled_plans.hpp)
  std::uint8_t device_slot = 0; // GPU tiers with several devices: the slot of the call's device
  std::uint8_t fell_back = 0;   // why a wanted GPU was not used (FallbackKind)
  std::uint8_t mask = 0;
  std::uint8_t gpu_devices = 1; // CoExec: devices sharing the GPU's share equally (the call's first)
  bool deterministic = false;   // from the table: Config::deterministic (its call asks no runtime)
  bool sampled = false;         // timed as one of timed_mask + 1 settled calls (BucketState::busy_ns)
  float gpu_fraction = 0;       // CoExec: the GPU's share of the range
  std::size_t grain = 1;        // for TBB tiers: elements per task
  std::uint64_t gpu_trace = 0;  // GPU tiers: telemetry span and profiler range
  std::uint64_t gpu_range = 0;
  std::int64_t queued_until = 0;  // several devices: when its device was to finish this call's work (0: none)
  std::shared_ptr<const void> explanation;  // of a fresh (slow-path) decision
  BucketState* bucket = nullptr;  // knows its TypeSlot and Site
  std::int64_t t0 = 0;
};
static_assert(sizeof(Plan) <= 80, "Plan: see CallDesc's size note");

// One device's share of a co-executed call's GPU part: its slot, and when
// the work entered in its backlog for the share is due (0: none entered).
struct DeviceShare {
  std::size_t slot = 0;
  std::int64_t due_ns = 0;
};

// An operand held by a device, as CopyIn keeps it for the device choice.
struct HeldOperand {
  const Buffer* buf;
  std::size_t bytes;
};

// With several devices, the index of the device where a call with these
// operands would finish first: the work already queued there (DeviceApi::
// backlog_us) plus what it must copy in, `host_bytes` and the held operands
// not valid there (from the host, or from another device). On a tie the
// first operand's device, then the first device. With one device, that one.
// Out of line (runtime/placement.cpp): only calls with an operand on a
// device get here.
int pick_device(const HeldOperand* ops, std::size_t count, std::size_t host_bytes);

// A GPU tier's copy-in, gathered operand by operand (add) and counted once
// every operand is known (finish), for the device the call would run on:
// the one it asks for (d.device), else pick_device's (d.resident_device,
// which finish sets; placement.cpp's device_slot_for). An operand valid
// there adds nothing, any other its bytes, which also count as
// device-to-device (CallDesc::peer_share) when only another device holds
// them (a valid host copy is what Buffer copies in). Only operands on a
// device are kept for finish: without a GPU this costs nothing per call.
class CopyIn {
 public:
  // `a` is the operand's Array or Buffer, `dev` its device() (read once by the caller).
  template <class A>
  void add(CallDesc& d, const A& a, int dev, std::size_t bytes) {
    const Buffer* b = nullptr;
    if (dev >= 0) {
      if constexpr (std::is_same_v<A, Buffer>) b = &a;
      else b = a.buffer();
    }
    if (b && count_ < kMax) {
      held_[count_++] = {b, bytes};
      return;
    }
    d.h2d_bytes += bytes;  // on no device (or past kMax operands: counted as moved)
    all_ = false;
    if (b && !b->valid_on_host()) peer_ += bytes;
  }
  // Returns whether every operand added is valid on that device.
  bool finish(CallDesc& d) {
    int target = d.device;
    if (target < 0 && count_ > 0) {
      target = pick_device(held_, count_, d.h2d_bytes);
      d.resident_device = device_byte(target);
    }
    for (std::size_t j = 0; j < count_; ++j) {
      if (held_[j].buf->valid_on_device(target)) continue;
      d.h2d_bytes += held_[j].bytes;
      all_ = false;
      if (!held_[j].buf->valid_on_host()) peer_ += held_[j].bytes;
    }
    if (peer_)
      d.peer_share = static_cast<std::uint8_t>(255.0 * static_cast<double>(peer_) / static_cast<double>(d.h2d_bytes) + 0.5);
    return all_;
  }

 private:
  static constexpr std::size_t kMax = 16;
  HeldOperand held_[kMax];
  std::size_t count_ = 0, peer_ = 0;
  bool all_ = true;
};

// A call's size bucket (log2 of its length) and its operands' residency:
// with the site and element type, what its history is kept by.
// (0 and 1 share bucket 0; no branch: GCC laid out the n != 0 case of one
// as the cold path of a settled reduction.)
inline int size_bucket(std::size_t n) noexcept { return static_cast<int>(std::bit_width(n | 1)) - 1; }
inline int residency_of(const CallDesc& d) noexcept { return d.all_on_device ? 2 : d.any_on_device ? 1 : 0; }

// Everything of a call besides its site and element type that its decision
// depends on, packed (with the thread's scoped placement); 0 for a call
// with a forced tier, which takes no settled plan.
inline std::uint64_t settled_key(std::uint32_t exclude_tiers, std::size_t n, int residency, Placement placement,
                                 bool gpu_capable) noexcept {
  return std::uint64_t{exclude_tiers} << 32 | static_cast<std::uint64_t>(size_bucket(n)) << 8 |
         static_cast<std::uint64_t>(residency) << 6 | static_cast<std::uint64_t>(placement) << 4 |
         static_cast<std::uint64_t>(t_scoped) << 2 | std::uint64_t{gpu_capable} << 1 | 1;
}
inline std::uint64_t settled_key(const CallDesc& d) noexcept {
  if (d.forced_tier != Tier::Count) return 0;
  return settled_key(d.exclude_tiers, d.n, residency_of(d), d.placement, d.gpu_capable);
}

// What a call served from the thread's settled plans needs of its entry,
// copied (its user code may replace the entry).
struct SettledHit {
  BucketState* bucket = nullptr;
  std::uint8_t mask = 0;
  bool deterministic = false;
};
// The thread's settled serial plan for a call with this key, if it has one
// that still holds and this call need not be timed (settled_plans.hpp). A
// call whose key needs no CallDesc (a host range's reduction or map) asks
// before building one, before taking a CallScope and without a Plan (whose
// shared_ptr its caller destroyed on every call: 0.5-1 ns of a 256-float sum);
// it runs the plan inside a SettledRun.
[[gnu::always_inline]] inline bool settled_hit(const Site& site, std::uint64_t key, const TypeKey* type_key,
                                               SettledHit& h) noexcept {
  const SettledPlan& e = t_settled.entry(&site, key);
  if (e.key != key || e.site != &site || e.type_key != type_key ||
      e.epoch != g_settled_epoch.load(std::memory_order_relaxed) ||
      (e.asleep && !e.asleep->load(std::memory_order_relaxed)) || ((t_settled_calls + 1) & e.timed_mask) == 0)
    return false;
  ++t_settled_calls;
  h = {e.bucket, e.mask, e.deterministic};
  return true;
}
// The same as a Plan, for a call with a CallDesc.
[[gnu::always_inline]] inline bool settled_plan(const Site& site, const CallDesc& d, Plan& p) noexcept {
  SettledHit h;
  if (!settled_hit(site, settled_key(d), d.type_key, h)) return false;
  p.tier = Tier::Serial;
  p.sync_for_timing = false;
  p.timed = false;
  p.from_table = true;
  p.deterministic = h.deterministic;
  p.mask = h.mask;
  p.grain = std::max<std::size_t>(1, d.n);
  p.bucket = h.bucket;
  p.t0 = 0;
  return true;
}

// Decides (the out-of-line path). Throws veda::DeviceError for a strict
// Placement::Gpu that cannot be honoured.
void begin_call_slow(Runtime& rt, Site& site, const CallDesc& d, Plan& p);
inline Plan begin_call(Runtime& rt, Site& site, const CallDesc& d) {
  Plan p;
  if (!settled_plan(site, d, p)) begin_call_slow(rt, site, d, p);
  return p;
}

// The end of an untimed call with a settled plan: only the last-decision
// record, whose shape (dims[0, ndims)) last_call() reads.
inline void end_settled_call(const SettledHit& h, std::size_t n, std::uint8_t ndims, const std::size_t* dims) noexcept {
  SettledLast& l = t_settled_last;
  l.bucket = h.bucket;
  l.mask = h.mask;
  l.n = n;
  l.ndims = ndims;
  for (std::size_t k = 0; k < ndims; ++k) l.dims[k] = dims[k];
  l.pending = true;
}

// Records the thread's decision and, when `measured`, the time since
// begin_call (or `elapsed_ns` if >= 0) in the site's history. Asynchronous
// GPU work that was not synchronised passes measured = false.
void end_call_slow(Runtime& rt, const Plan& p, const CallDesc& d, bool measured, std::int64_t elapsed_ns);
inline void end_call(Runtime& rt, const Plan& p, const CallDesc& d, bool measured = true,
                     std::int64_t elapsed_ns = -1) {
  if (!p.from_table || elapsed_ns >= 0) return end_call_slow(rt, p, d, measured, elapsed_ns);
  end_settled_call({p.bucket, p.mask, p.deterministic}, d.n, d.ndims, d.dims);
}
// The GPU tier could not get device memory (or, with `fault`, a launch or
// copy failed): returns a CPU plan for the same call, counted and logged
// once per site.
Plan fallback_to_cpu(Runtime& rt, const Plan& p, const CallDesc& d, const char* why, bool fault = false);
// The fault-injection hook of a GPU tier's launch (runtime/fault_injection).
void launch_fault_point(const Plan& p);
// Whether a GPU tier's exception is one the CPU recovers from
// (veda::OutOfMemory, veda::DeviceFault).
bool recoverable_device_error(const std::exception_ptr& e) noexcept;

// Runs a GPU tier's work f() and returns its value; if the device runs out
// of memory or faults, switches p to a CPU plan for the same call and
// returns nullopt, and the caller runs its CPU tier instead (same inputs, so
// the same result). The one place GPU failures turn into CPU runs.
template <class F>
auto try_gpu_value(Runtime& rt, Plan& p, const CallDesc& d, F&& f) -> std::optional<decltype(f())> {
  try {
    launch_fault_point(p);
    return std::forward<F>(f)();
  } catch (const OutOfMemory& e) {
    p = fallback_to_cpu(rt, p, d, e.what());
  } catch (const DeviceFault& e) {
    p = fallback_to_cpu(rt, p, d, e.what(), true);
  }
  return std::nullopt;
}

// The same for work without a value: true when it ran on the GPU.
template <class F>
bool try_gpu(Runtime& rt, Plan& p, const CallDesc& d, F&& f) {
  return try_gpu_value(rt, p, d, [&] {
           std::forward<F>(f)();
           return true;
         }).has_value();
}

// veda's oneTBB arena (null: parallel loops run in the caller's own arena),
// asked by the calling thread right before each region (where workers are
// pinned, it moves one off the caller's CPU: CpuExecutor::before_region),
// and the note that a parallel region just ended (for the wake-up model).
tbb::task_arena* cpu_arena(Runtime& rt) noexcept;
void parallel_done(Runtime& rt) noexcept;
// From now on this thread's host copies (staging) run on it alone, never on
// the workers: for a thread working beside a CPU share that holds every
// worker (co-execution's GPU helper), whose copies would otherwise queue
// until the CPU share is done.
void copy_without_workers() noexcept;

// Runs f, a parallel loop of a CPU tier, where veda's CPU work runs.
template <class F>
void in_cpu_arena(Runtime& rt, F&& f) {
  if (tbb::task_arena* a = cpu_arena(rt)) a->execute(std::forward<F>(f));
  else f();
}

}  // namespace detail
}  // namespace veda
