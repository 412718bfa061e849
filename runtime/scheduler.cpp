#include "runtime/scheduler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <vector>

#include "runtime/clock.hpp"
#include "runtime/decision_log.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/history_store.hpp"
#include "runtime/learning.hpp"
#include "runtime/logging.hpp"
#include "runtime/placement.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/telemetry.hpp"
#include "veda/build_config.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

namespace veda::detail {

std::atomic<std::uint32_t> g_settled_epoch{1};
void invalidate_settled_plans() noexcept { g_settled_epoch.fetch_add(1, std::memory_order_release); }

namespace {
// What the thread's last-decision record says of a call that ran `tier` in
// bucket `b` with no fresh decision: its explanation is the bucket's.
void remember(LastCall& l, BucketState* b, std::uint8_t mask, Tier tier, std::size_t n, std::uint8_t ndims,
              const std::size_t* dims) noexcept {
  l.has_plan = false;  // a pipeline run inside this call is not this call's decision
  l.site = &b->slot->site;
  l.bucket = b;
  l.mask = mask;
  l.tier = tier;
  l.n = n;
  l.ndims = ndims;
  for (std::size_t k = 0; k < 3; ++k) l.dims[k] = k < ndims ? dims[k] : 0;  // (std::copy calls memmove)
  l.measured_us = -1;
  l.fallback = l.fault = l.forced_tier = l.explored = false;
  l.explanation.reset();
}
}  // namespace

LastCall& last_call() noexcept {
  thread_local LastCall l;
  if (SettledLast& s = t_settled_last; s.pending) [[unlikely]] {
    s.pending = false;
    remember(l, s.bucket, s.mask, Tier::Serial, s.n, s.ndims, s.dims);
  }
  return l;
}

namespace {

// What one element of this site costs, as measured; 0 (use the profile) in
// deterministic mode, whose decisions depend on nothing measured during the run.
double learned_ns_per_elem(const RuntimeState& st, const TypeSlot& slot) {
  return st.config.deterministic() ? 0.0 : slot.cpu_ns_per_elem.load(std::memory_order_relaxed);
}

std::size_t grain_for(const RuntimeState& st, const TypeSlot& slot, const CallDesc& d, Tier t) {
  const std::size_t threads = static_cast<std::size_t>(st.config.threads());
  if (t == Tier::TbbStatic) return std::max<std::size_t>(1, (d.n + threads - 1) / threads);
  if (t != Tier::TbbAuto) return std::max<std::size_t>(1, d.n);
  // Tasks of about 20 us: long enough to amortise stealing, short enough to balance.
  const double c = learned_ns_per_elem(st, slot);
  const double per = c > 0 ? c : st.profile().cpu.map_ns_per_elem;
  // Clamped before the cast: a double beyond size_t's range (a tiny `per`)
  // converts with undefined behaviour; NaN or a non-positive `per` gives 1.
  const double raw = std::isfinite(per) && per > 0 ? 20000.0 / per : 1.0;
  const auto g = static_cast<std::size_t>(std::isfinite(raw) ? std::clamp(raw, 1.0, 1e15) : 1e15);
  return std::clamp<std::size_t>(g, std::max<std::size_t>(1, d.n / (1024 * threads)),
                                 std::max<std::size_t>(1, d.n / threads));
}

// The device a call's GPU work would run on, chosen once per call: with
// several devices the choice weighs their backlogs, which other threads
// change meanwhile, and the decision, the memory check and the launch must
// agree. Chosen only when asked for (a settled CPU call never is).
class CallDevice {
 public:
  CallDevice(RuntimeState& st, const CallDesc& d) : st_(st), d_(d) {}
  DeviceApi* device() {
    if (st_.device_count() <= 1) return st_.device();
    return st_.device_at(slot());
  }
  std::size_t slot() {
    if (slot_ == kNone) slot_ = device_slot_for(st_, d_);
    return slot_;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  RuntimeState& st_;
  const CallDesc& d_;
  std::size_t slot_ = kNone;
};

CostRequest make_request(RuntimeState& st, const Site& site, const TypeSlot& slot,
                         const CallDesc& d, const Resolved& r, const std::string& obstacle,
                         double idle_us, CallDevice& on) {
  CostRequest q;
  q.op = site.op();
  q.tiers = site.tiers() & ~d.exclude_tiers;
  q.n = d.n;
  q.bytes_per_elem = site.hint().bytes_per_elem > 0 ? site.hint().bytes_per_elem : d.bytes_per_elem;
  q.flops_per_elem = site.hint().flops_per_elem;
  q.cpu_ns_per_elem = learned_ns_per_elem(st, slot);
  q.peer_bytes = static_cast<std::size_t>(static_cast<double>(d.h2d_bytes) * d.peer_share / 255.0);
  q.h2d_bytes = d.h2d_bytes - std::min(q.peer_bytes, d.h2d_bytes);
  q.d2h_bytes = d.d2h_bytes;
  q.device_need = d.h2d_bytes + d.d2h_bytes;
  q.cpu_d2h_bytes = d.cpu_d2h_bytes;
  q.host_pinned = d.host_pinned;
  q.threads = st.config.threads();
  q.idle_us = idle_us;
  q.gpu_ok = r.gpu_ok;
  q.gpu_note = r.mask == kCpuOnly && r.forced != Forced::None ? "CPU placement forced" : obstacle;
  q.cpu_ok = r.mask != kGpuOnly;
  q.cpu_note = "GPU placement forced";
  q.allow_tf32 = st.config.precision() != Precision::Strict;
  q.allow_fp16 = st.config.precision() == Precision::AllowFP16;
  q.m = d.dims[0];
  q.k = d.dims[1];
  q.cols = d.dims[2];
  q.elem_bytes = d.elem_bytes;
  q.value_bytes = d.value_bytes;
  q.linear = d.linear;
  q.gpu_setup_us = d.gpu_setup_us;
  q.double_precision = d.elem_bytes == 8;
  // Co-execution over several devices: a call from host data, not tied to
  // a device, may split its GPU part among the idle ones of its device's kind.
  if (r.gpu_ok && (q.tiers & tier_bit(Tier::CoExec)) && st.device_count() > 1 && d.device < 0 &&
      d.resident_device < 0)
    q.gpu_devices = static_cast<int>(share_devices(st, on.slot(), true).size());
  // Tensor cores: those of the device the call would run on.
  if (st.gpu.usable) {
    const int dev = st.device_count() > 1 ? on.device()->index() : st.gpu.selected;
    const auto at = static_cast<std::size_t>(dev);
    q.tensor_cores = dev >= 0 && at < st.gpu.devices.size() && st.gpu.devices[at].cc_major >= 8;
  }
  return q;
}

// Brings bucket `b` (its mutex held) into this runtime: its figures reset,
// then seeded from what earlier runs measured.
void join_runtime(RuntimeState& st, Site& site, TypeSlot& slot, BucketState& b) {
  if (b.generation == st.generation) return;
  b.reset(st.generation);
  if (st.history) st.history->seed(site, slot, b);
}

// A serial choice in a bucket of sleeping workers may hold only because
// serial calls let them sleep: wake_for_awake (learning.hpp) decides whether
// this call wakes them with the awake bucket's fastest measured parallel
// tier. (Not on a prediction alone: one from the serial time split over the
// threads woke them for memory-bound calls that no thread count speeds up.)
// Returns whether the awake bucket's figures are trusted and pay: a
// parallel tier run from here, as a wake-up try or as this bucket's own
// re-measurement, then needs no trial (follow_trial): the awake bucket's
// decision stands, and its calls are settled at once.
bool wake_if_faster_awake(RuntimeState& st, Site& site, TypeSlot& slot, BucketState& b, std::uint32_t tiers,
                          Choice& c, std::int64_t now) {
  if (!TypeSlot::for_sleeping_workers(b)) return false;
  const double serial_us = b.samples[static_cast<std::size_t>(Tier::Serial)].median_us();
  BucketState& awake = slot.awake_twin(b);
  std::unique_lock lock(awake.mu, std::try_to_lock);  // never wait on another bucket while holding b's
  if (!lock.owns_lock()) return false;
  // Seeded here too: where every call finds the workers asleep, this is
  // the awake bucket's only visit, and earlier runs may have measured it.
  join_runtime(st, site, slot, awake);
  AwakeBest best;
  for (Tier t : {Tier::TbbStatic, Tier::TbbAuto}) {
    const TierSamples& s = awake.samples[static_cast<std::size_t>(t)];
    const double us = s.median_us();
    if (!(tiers & tier_bit(t)) || us <= 0 || (best.us > 0 && us >= best.us)) continue;
    const TierBook& book = awake.book_on(t, 0);
    best = {t, us, static_cast<double>(now - book.last_sample_ns) > stale_after_ns(s.count(), book, us)};
  }
  const bool pays = best.pays(serial_us), trusted = pays && !best.doubtful;
  if (c.tier != Tier::Serial || c.explored) return trusted;
  const Tier t = wake_for_awake(b, best, serial_us, now, st.workers.regions(), st.profile().cpu.tbb_wake_us);
  if (t == Tier::Serial) {
    if (pays) c.settled = false;  // serial only until the next try
    return trusted;
  }
  c.tier = t;
  c.settled = false;
  // Its figure is renewed by the trial's runs; until they come, this
  // stamp keeps the next such try stale_after_ns away.
  if (!pays) awake.book_on(t, 0).last_sample_ns = now;
  c.why.kind = pays ? Reason::Kind::Wake : Reason::Kind::WakeRetry;
  c.why.tier = t;
  c.why.us = static_cast<float>(best.us);
  c.why.serial_us = static_cast<float>(serial_us);
  return trusted;
}

// A parallel tier's run with the workers asleep pays their wake-up, and the
// runs just after it are slow too: a 2^16-float saxpy took 18-20, 8, 7, 19
// and 9.6 us on tbb-static, then 4.6-4.8 us from the sixth call of a stream
// (serial: 5.8 us). Measured so, it would lose to serial for good, and
// serial calls keep the workers asleep. So when a bucket of sleeping
// workers runs a parallel tier to learn (an exploration or a wake-up try)
// on a call predicted under kTrialMaxUs, the thread's next kTrialRuns calls
// of the same site, element type and size run it too, back to back, while
// the workers stay awake: their runs land in the awake bucket, whose cached
// decision is dropped so that it re-decides by them afterwards, by the
// newest TierSamples::kRecent of them: kTrialRuns is twice that, so they are
// past the slow ones (with 8, the trial's median was one of those). (A call that
// finds them asleep again ends the trial: no stream forms there, and a
// bucket of sleeping workers still picks its best tier within a few calls.)
struct Trial {
  std::uint64_t generation = 0;  // of the runtime it began in (a later one may reuse its slot's address)
  const TypeSlot* slot = nullptr;
  int awake_index = -1;  // the index of the trial's awake bucket in its slot
  Tier tier = Tier::Serial;
  int left = 0;
};
thread_local Trial t_trial;
constexpr int kTrialRuns = 16;
constexpr double kTrialMaxUs = 1000;

// `may_start`: whether this call may begin a trial.
void follow_trial(TypeSlot& slot, BucketState& b, Choice& c, bool may_start) {
  const bool sleeping = TypeSlot::for_sleeping_workers(b);
  const int awake_index = sleeping ? b.index - 1 : b.index;
  Trial& t = t_trial;
  const bool ours = t.left > 0 && t.generation == b.generation && t.slot == &slot && t.awake_index == awake_index;
  if (ours && sleeping) {
    t.left = 0;  // asleep again: the calls come too rarely for a stream (this one may begin another trial)
  } else if (ours) {
    --t.left;
    c.settled = false;
    if (c.tier == t.tier) return;
    c.tier = t.tier;
    c.explored = c.refreshed = false;
    c.why.kind = Reason::Kind::Trial;
    c.why.tier = t.tier;
    return;
  }
  const bool parallel = c.tier == Tier::TbbStatic || c.tier == Tier::TbbAuto;
  if (!may_start || !sleeping || !parallel || c.settled) return;
  // Calls of a millisecond or more are measured fairly by one run: the
  // wake-up and what follows it are tens of microseconds.
  for (const Estimate& e : c.estimates)
    if (e.tier == c.tier && e.total_us - e.wake_us >= kTrialMaxUs) return;
  t = {b.generation, &slot, awake_index, c.tier, kTrialRuns};
  // Through clear_decisions, which also drops the threads' settled plans: a
  // serial plan the awake bucket had left in this thread's table would
  // otherwise serve the trial's calls, and after it every call, the bucket's
  // next decision replacing a cleared one (expsin 2^12 in bench_elementwise:
  // serial, 16.7 us, where the bucket had just chosen tbb-auto, 10 us).
  slot.awake_twin(b).clear_decisions();
}

void decide_slow(RuntimeState& st, Site& site, TypeSlot& slot, BucketState& b, const CallDesc& d,
                 const Resolved& r, double idle_us, CallDevice& on, Plan& p) {
  const std::string obstacle = r.gpu_ok ? std::string() : gpu_obstacle(st, site, d);
  std::lock_guard lock(b.mu);
  join_runtime(st, site, slot, b);
  CostRequest q = make_request(st, site, slot, d, r, obstacle, idle_us, on);
  if (q.gpu_ok && q.device_need >= kRoomCheckBytes)
    if (DeviceApi* dev = on.device()) q.device_room = device_room(*dev);
  // Predicted with the figures, and judged by the history, of the device
  // the call would run on.
  const std::size_t dev = q.gpu_ok && st.device_count() > 1 ? on.slot() : 0;
  auto est = estimate(dev > 0 ? st.profile_for(dev) : st.profile(), q);
  const std::int64_t now = now_ns();
  const HistoryView hv = history_view(b, est, d.n, now, dev);
  ChoiceContext ctx;
  ctx.deterministic = st.config.deterministic();
  ctx.all_on_device = d.all_on_device;
  ctx.forced = forced_text(r.forced, obstacle);
  Choice c = choose(std::move(est), &hv, ctx);
  const bool awake_trusted = wake_if_faster_awake(st, site, slot, b, q.tiers, c, now);
  follow_trial(slot, b, c, !ctx.deterministic && !awake_trusted);
  note_choice(b, c, now, dev);
  auto expl = std::make_shared<Explanation>();
  expl->estimates = std::move(c.estimates);
  if (tier_device(c.tier) == Device::Gpu)
    for (const Estimate& e : expl->estimates)
      if (e.tier == c.tier) b.gpu_us.store(static_cast<float>(e.total_us), std::memory_order_relaxed);
  expl->why = std::move(c.why);
  expl->chosen = c.tier;
  expl->explored = c.explored;
  b.explanation[r.mask] = expl;
  p.explanation = std::move(expl);
  b.coexec_fraction.store(c.gpu_fraction, std::memory_order_relaxed);
  b.coexec_devices.store(static_cast<std::uint8_t>(c.gpu_devices), std::memory_order_relaxed);
  const std::uint64_t settled = c.settled ? BucketState::pack_decision(st.generation, c.tier) : 0;
  const bool confirmed = settled != 0 && b.cached(r.mask, std::memory_order_relaxed) == settled &&
                         b.timed_mask.load(std::memory_order_relaxed) != b.kTimeAll;
  const std::uint32_t mask = b.redecide_mask.load(std::memory_order_relaxed);
  // How long the chosen tier's calls take, also when known only from stored
  // history (nothing timed yet in this run): long ones are all timed, and
  // re-decided often (redecide_mask).
  const double typical_ns = b.samples_on(c.tier, dev).median_us() * 1e3;
  if (typical_ns >= kLongCallNs) b.timed_mask.store(b.kTimeAll, std::memory_order_relaxed);
  if (!TypeSlot::for_sleeping_workers(b) &&
      b.samples[static_cast<std::size_t>(Tier::Serial)].median_us() > st.profile().cpu.tbb_idle_us)
    b.serial_sleeps.store(true, std::memory_order_relaxed);
  b.redecide_mask.store(redecide_mask(typical_ns, confirmed, mask), std::memory_order_relaxed);
  b.cached_slot[r.mask].store(static_cast<std::uint8_t>(dev), std::memory_order_relaxed);
  b.cache_decision(r.mask, settled);
  p.tier = c.tier;
  p.gpu_fraction = static_cast<float>(c.gpu_fraction);
  p.gpu_devices = static_cast<std::uint8_t>(c.gpu_devices);
  p.sync_for_timing = !c.settled;
}

}  // namespace

// ------------------------------------------------------------------ calls
namespace {
Site& site_of(const Plan& p) { return p.bucket->slot->site; }

// Whether a GPU tier's work runs on the calling thread's stream. The
// streamed tier runs on the pipeline streams (which trace their own chunks)
// and co-execution's GPU share on a helper thread's stream: a span on the
// caller's stream would time an idle stream.
constexpr bool on_callers_stream(Tier t) { return t != Tier::CudaStreamed && t != Tier::CoExec; }

// A GPU tier's profiler range (NVTX) and, with telemetry, its trace span.
// CPU calls only test the tier: the rest is out of line.
[[gnu::noinline]] void start_gpu_marks_slow(RuntimeState& st, CallDevice& on, Plan& p) {
  DeviceApi* dev = on.device();
  if (!dev) return;
  if (st.device_count() > 1) {
    p.device_slot = static_cast<std::uint8_t>(on.slot());
    RuntimeState::set_thread_device(on.slot());
    p.queued_until = dev->queue_work(p.bucket->gpu_us.load(std::memory_order_relaxed), now_ns());
  }
  p.gpu_range = dev->range_start(site_of(p).name().c_str());
  if (st.telemetry && on_callers_stream(p.tier)) p.gpu_trace = dev->trace_begin(dev->stream());
}
// With telemetry on every finished call is timed, not only the ones the
// learning samples; the record carries its explanation (a settled call's is
// its bucket's).
void record_call(RuntimeState& st, const Plan& p, const CallRecord& l, bool finished, std::int64_t elapsed_ns) {
  CallRecord c = l;
  const std::int64_t t1 = now_ns();
  const std::int64_t t = elapsed_ns >= 0 ? elapsed_ns : t1 - p.t0;
  c.measured_us = finished ? static_cast<double>(t) / 1e3 : -1;
  if (!c.explanation) {
    std::lock_guard lock(p.bucket->mu);
    c.explanation = p.bucket->explanation[p.mask];
  }
  st.telemetry->on_call(c, p.t0, t1, static_cast<FallbackKind>(p.fell_back));
}

[[gnu::noinline]] void end_gpu_marks_slow(RuntimeState& st, const Plan& p, bool finished) {
  // The call's own device: a call made inside this one may have moved the thread's.
  DeviceApi* dev = st.device_count() > 1 ? st.device_at(p.device_slot) : st.device();
  if (!dev) return;
  if (finished && p.queued_until) dev->work_done(p.queued_until, now_ns());
  if (st.telemetry && on_callers_stream(p.tier))
    dev->trace_end(p.gpu_trace, dev->stream(), SpanKind::GpuCall, site_of(p).name(), 0);
  dev->range_end(p.gpu_range);
}
void start_gpu_marks(RuntimeState& st, CallDevice& on, Plan& p) {
  if (tier_device(p.tier) == Device::Gpu) start_gpu_marks_slow(st, on, p);
}
// `finished`: the call's GPU work is done (it was synchronised).
void end_gpu_marks(RuntimeState& st, const Plan& p, bool finished) {
  if (tier_device(p.tier) == Device::Gpu) end_gpu_marks_slow(st, p, finished);
}
}  // namespace

namespace {
Plan plan_call(Runtime& rt, Site& site, const CallDesc& d);
}

void begin_call_slow(Runtime& rt, Site& site, const CallDesc& d, Plan& p) {
  RuntimeState& st = rt.state();
  if (d.forced_tier == Tier::CoExec && (d.exclude_tiers & tier_bit(Tier::CoExec))) {
    // cpu+gpu forced on a call that cannot be split (an Array stays whole
    // where it lives, a transposed A's rows are not contiguous): the tier
    // its devices would run takes it whole.
    CallDesc whole = d;
    whole.forced_tier = coexec_device_tier(site.op());
    begin_call_slow(rt, site, whole, p);
    return;
  }
  if (!st.replay && !st.recorder) {
    p = plan_call(rt, site, d);
    return;
  }
  if (st.replay) {
    CallDesc forced = d;  // the recorded tier, as if the caller had forced it
    forced.forced_tier = st.replay->next(site, d.n);
    p = plan_call(rt, site, forced);
  } else {
    p = plan_call(rt, site, d);
  }
  if (st.recorder) st.recorder->add(site, d.n, p.tier);
}

namespace {
// How long the workers have been idle, in microseconds (0 in deterministic
// mode, whose decisions depend on nothing measured during the run).
double idle_us_now(const RuntimeState& st) {
  return st.config.deterministic() ? 0.0 : static_cast<double>(st.workers.idle_ns(now_ns())) / 1e3;
}

// Whether the workers have slept long enough for a wake-up to show.
bool workers_asleep(RuntimeState& st) {
  if (st.config.deterministic()) return false;
  return st.workers.known_asleep() || st.workers.asleep(static_cast<std::int64_t>(st.profile().cpu.tbb_idle_us * 1e3));
}

// Leaves this call's settled serial plan in the thread's table for the calls
// after it (settled_plans.hpp), unless they must do more than run it.
// `asleep`: the workers' flag, if their sleeping chose the bucket.
void offer_settled(RuntimeState& st, const Site& site, const CallDesc& d, const Resolved& r, BucketState& b,
                   const std::atomic<bool>* asleep) {
  // The epoch before what it covers: a decision replaced after this check
  // bumps it (BucketState::cache_decision).
  const std::uint32_t epoch = g_settled_epoch.load(std::memory_order_acquire);
  const std::uint64_t key = settled_key(d);
  if (key == 0 || st.telemetry || st.replay || st.recorder || r.forced == Forced::GpuFellBack ||
      log().should_log(spdlog::level::debug) ||
      b.cached(r.mask, std::memory_order_relaxed) != BucketState::pack_decision(st.generation, Tier::Serial))
    return;
  SettledPlan& e = t_settled.entry(&site, key);
  e.site = &site;
  e.type_key = d.type_key;
  e.key = key;
  e.asleep = asleep;
  e.bucket = &b;
  e.epoch = epoch;
  e.mask = r.mask;
  e.deterministic = st.config.deterministic();
  e.timed_mask = static_cast<std::uint16_t>(b.timed_mask.load(std::memory_order_relaxed));
}

// Whether a settled decision was made for the device this call would run
// on: with several devices a GPU decision holds only there.
bool made_for_device(RuntimeState& st, const BucketState& b, std::uint8_t mask, std::uint64_t packed, CallDevice& on) {
  if (st.device_count() <= 1 || tier_device(BucketState::decided_tier(packed)) != Device::Gpu) return true;
  return on.slot() == b.cached_slot[mask].load(std::memory_order_relaxed);
}

Plan plan_call(Runtime& rt, Site& site, const CallDesc& d) {
  RuntimeState& st = rt.state();
  const Resolved r = resolve(st, site, d);
  // Element-wise history is kept apart for sleeping workers (the wake-up is a
  // large share of a short call); the ops' calls are long, and a GEMM on
  // OpenBLAS's own threads leaves oneTBB's idle, which would split their
  // history by the previous call's tier.
  const bool elementwise = site.op() == OpClass::Map || site.op() == OpClass::Kernel || site.op() == OpClass::Reduce;
  int idle = elementwise && workers_asleep(st) ? 1 : 0;
  TypeSlot& slot = site.slot(d.type_key);
  // Calls of a millisecond or more (re-decided each time) keep one history:
  // a wake-up is noise next to them, and with two, the serial runs (after
  // which the workers sleep) and the parallel ones alternated between them,
  // each right after the other tier's, so neither was ever confirmed. So do
  // calls whose serial runs outlast the workers' idle time, for the same
  // reason: a 2^20-float saxpy (serial 0.46 ms, tbb-static 0.23 ms, asleep
  // after 0.2 ms) re-measured serial in the awake bucket every other call.
  // A re-measurement of serial there finishes there too (serial_refresh).
  if (idle) {
    const BucketState& awake = slot.bucket(size_bucket(d.n), residency_of(d), 0);
    if (awake.redecide_mask.load(std::memory_order_relaxed) == 0 ||
        awake.serial_sleeps.load(std::memory_order_relaxed) || awake.serial_refresh.load(std::memory_order_relaxed))
      idle = 0;
  }
  BucketState& b = slot.bucket(size_bucket(d.n), residency_of(d), idle);
  Plan p;
  p.bucket = &b;
  p.mask = r.mask;
  CallDevice on(st, d);
  if (r.forced == Forced::GpuFellBack) p.fell_back = static_cast<std::uint8_t>(FallbackKind::PlacementGpu);
  const bool forced = d.forced_tier != Tier::Count && forced_tier_usable(st, site, d, r);
  if (d.forced_tier != Tier::Count && !forced && tier_device(d.forced_tier) == Device::Gpu)
    p.fell_back = static_cast<std::uint8_t>(FallbackKind::ForcedGpuTier);
  const std::uint64_t packed = forced ? 0 : b.cached(r.mask);
  // Every 64th-4096th call on this thread re-decides with the history
  // gathered since (a thread-local count: no shared cache line on the hot path).
  std::uint32_t& calls = t_settled_calls;
  const bool counted = packed != 0 && BucketState::decided_generation(packed) == st.generation &&
                       made_for_device(st, b, r.mask, packed, on);
  if (counted) ++calls;
  // A timed call of a settled decision stands for its thread's untimed calls
  // before it (BucketState::busy_ns), also when it re-decides.
  const bool sampled = counted && (calls & b.timed_mask.load(std::memory_order_relaxed)) == 0 && !st.telemetry;
  if (forced) {
    if (d.forced_tier == Tier::CoExec) {
      // The split still comes from the model: both sides' predicted speeds.
      decide_slow(st, site, slot, b, d, r, idle_us_now(st), on, p);
      p.gpu_fraction = 0.5;
      if (auto e = std::static_pointer_cast<const Explanation>(p.explanation))
        for (const auto& est : e->estimates)
          if (est.tier == Tier::CoExec && est.gpu_fraction > 0) {
            p.gpu_fraction = static_cast<float>(est.gpu_fraction);
            p.gpu_devices = static_cast<std::uint8_t>(est.gpu_devices);
          }
    }
    p.tier = d.forced_tier;  // a benchmark or debugging override: no decision
    p.sync_for_timing = true;
    p.forced_tier = true;
  } else if (counted && (calls & b.redecide_mask.load(std::memory_order_relaxed)) != 0) {
    p.tier = BucketState::decided_tier(packed);
    if (p.tier == Tier::CoExec) {
      p.gpu_fraction = static_cast<float>(b.coexec_fraction.load(std::memory_order_relaxed));
      p.gpu_devices = b.coexec_devices.load(std::memory_order_relaxed);
    }
    p.sync_for_timing = false;
    // A settled decision keeps learning from some of its calls (a clock read
    // costs as much as a tiny call; BucketState::timed_mask); telemetry
    // times every call.
    p.sampled = sampled;
    p.timed = sampled || st.telemetry;
  } else {
    decide_slow(st, site, slot, b, d, r, idle_us_now(st), on, p);
    p.sampled = sampled;
  }
  // An element-wise serial plan made for sleeping workers holds while they
  // sleep; one made for awake workers holds after they fall asleep too (a
  // wake-up only makes the parallel tiers dearer), so it needs no check, and
  // checking that they are still awake would take a clock read. (Forced and
  // still-learning plans are synchronised for timing: never offered.)
  if (p.tier == Tier::Serial && !p.sync_for_timing)
    offer_settled(st, site, d, r, b, idle ? &st.workers.asleep_flag() : nullptr);
  p.grain = grain_for(st, slot, d, p.tier);
  start_gpu_marks(st, on, p);
  // Timed from here: the decision and the bookkeeping above are not the
  // tier's (offering the plan, done for serial ones only, would make the
  // serial tier of a tiny call look slower than the others).
  p.t0 = p.timed ? now_ns() : 0;
  return p;
}
}  // namespace

void end_call_slow(Runtime& rt, const Plan& p, const CallDesc& d, bool measured, std::int64_t elapsed_ns) {
  RuntimeState& st = rt.state();
  const bool finished = measured;  // the work is done (not queued on a stream)
  end_gpu_marks(st, p, finished);
  measured = measured && (p.timed || elapsed_ns >= 0);
  const std::int64_t t = elapsed_ns >= 0 ? elapsed_ns : measured ? now_ns() - p.t0 : 0;
  const double us = static_cast<double>(t) / 1e3;
  LastCall& l = last_call();  // still the thread's previous call
  double per_elem = 0;
  if (measured && p.bucket->mu.try_lock()) {
    // (The same call: its site, element type and size, the workers asleep or not.)
    const bool switched = l.bucket && l.bucket->slot == p.bucket->slot && size_bucket(l.n) == size_bucket(d.n) &&
                          l.tier != p.tier && tier_device(l.tier) == Device::Cpu && tier_device(p.tier) == Device::Cpu;
    if (p.bucket->generation == st.generation) {
      per_elem = add_run(*p.bucket, *p.bucket->slot, st.generation,
                         {p.tier, d.n, static_cast<double>(d.bytes_per_elem), t, p.t0 ? p.t0 + t : now_ns(),
                          p.device_slot, switched, p.sampled});
      if (!st.config.deterministic()) drop_overturned(*p.bucket, p.tier, p.device_slot);
    }
    p.bucket->mu.unlock();
  }
  if (measured && tier_device(p.tier) == Device::Gpu)  // (measured: the work is done)
    p.bucket->gpu_us.store(static_cast<float>(us), std::memory_order_relaxed);
  if (per_elem > 0) learn_per_elem(*p.bucket->slot, *p.bucket, per_elem, t, st.profile().cpu.map_ns_per_elem);
  remember(l, p.bucket, p.mask, p.tier, d.n, d.ndims, d.dims);
  l.measured_us = measured ? us : -1;
  l.fallback = p.fallback;
  l.fault = p.fell_back == static_cast<std::uint8_t>(FallbackKind::DeviceFault);
  l.forced_tier = p.forced_tier;
  if (p.explanation) l.explanation = std::static_pointer_cast<const Explanation>(p.explanation);
  l.explored = l.explanation && l.explanation->explored;
  if (st.telemetry) record_call(st, p, l, finished, elapsed_ns);
  if (log().should_log(spdlog::level::debug)) log().debug("{}", last_decision().to_string());
}

void check_device_option(Runtime& rt, int device, const std::string& name) {
  const GpuStatus& g = rt.gpu();
  if (!g.usable || std::find(g.in_use.begin(), g.in_use.end(), device) != g.in_use.end()) return;
  std::string used;
  for (int i : g.in_use) used += (used.empty() ? "" : ", ") + std::to_string(i);
  throw InvalidArgument(name + ": device " + std::to_string(device) + " requested, but this runtime uses device" +
                        (g.in_use.size() == 1 ? " " : "s ") + used + " (start veda with Config::devices(...) naming " +
                        std::to_string(device) + ")");
}

Plan fallback_to_cpu(Runtime& rt, const Plan& p, const CallDesc& d, const char* why, bool fault) {
  RuntimeState& st = rt.state();
  end_gpu_marks(st, p, true);  // none of its work stays queued there
  st.cpu_fallbacks.fetch_add(1, std::memory_order_relaxed);
  log_once(spdlog::level::warn, (fault ? "fault-fallback:" : "oom-fallback:") + site_of(p).name(),
           "'" + site_of(p).name() + "': " + why + "; running on the CPU (result is identical)");
  CallDesc cpu = d;
  cpu.placement = Placement::Cpu;
  cpu.strict = false;
  Plan q = plan_call(rt, site_of(p), cpu);  // the recovery is not a decision to record or replay
  q.fallback = true;
  q.fell_back = static_cast<std::uint8_t>(fault ? FallbackKind::DeviceFault : FallbackKind::OutOfMemory);
  return q;
}

void launch_fault_point(const Plan& p) { fault_point(FaultKind::Launch, site_of(p).name().c_str()); }

bool recoverable_device_error(const std::exception_ptr& e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const OutOfMemory&) {
    return true;
  } catch (const DeviceFault&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace veda::detail
