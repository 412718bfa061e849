// Learning: how measured runs feed decisions. The scheduler calls these on
// every slow-path decision and every timed run; they are pure over a
// BucketState (and a TypeSlot), so tests replay whole call sequences against
// a simulated machine (a true profile) while the model holds a wrong one.
//
// Thread-safety: the caller holds the bucket's mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cost_model.hpp"
#include "runtime/sites.hpp"

namespace veda::detail {

// History older than this may no longer describe the machine, and older
// than this many of the tier's own runs: re-measuring a runner-up then costs
// a few percent of the time spent, even for calls of a second.
constexpr std::int64_t kStaleNs = 500'000'000;
constexpr double kStaleRuns = 50;
// A tier measured fewer times than kConfirmSamples (cost_model.hpp) is
// re-measured sooner, after kConfirmNs: the run right after another tier's
// can pay for waking oneTBB's workers or for data in the other core's cache,
// which back-to-back calls do not (a 2^16 saxpy measured 21 us on tbb-static
// after serial runs, 6.6 us a call once on it). Not at once: a bucket
// settles within a few calls.
constexpr std::int64_t kConfirmNs = 20'000'000;
// A call this long is "long": its fixed cost is noise, so it is always timed
// and teaches per-element costs only through its bucket's median.
constexpr std::int64_t kLongCallNs = 20'000;
// A sampled run (Run::sampled) counts in BucketState::busy_ns as at most
// this many times its tier's median: a preempted one would otherwise stand
// for each of the calls not timed at its length.
constexpr double kSampledCap = 2;
// A call this short is "short": its two clock reads cost more than the call,
// so a settled decision times fewer of them.
constexpr std::int64_t kShortCallNs = 1'000;
// A call this short is "tiny": a timed one (0.2-1 us through the full path)
// every 256th put ~2 ns on each 256-float sum; every 4096th, ~0.1 ns.
constexpr std::int64_t kTinyCallNs = 250;
// Calls this long re-decide every time (a decision costs microseconds), so a
// runner-up due for re-measurement is not kept waiting for 64 of them.
constexpr std::int64_t kRedecideEachNs = 1'000'000;

// The bucket's next BucketState::redecide_mask after a decision, for calls
// that typically take `typical_ns`: 0 (every call) from kRedecideEachNs;
// else every 64th call, doubling up to every 4096th while re-decisions keep
// `confirmed` the same decision, but at least once per kRedecideEachNs of
// long calls (kLongCallNs and more). A runner-up measured once, on a slow
// run, is otherwise kept out by a count no such calls reach: 2^20 floats
// through a where() and a sqrt took 0.5-0.8 ms a call, so 64 calls outlast
// a benchmark's whole stream, and tbb-auto, explored once at 669 us, stayed
// out while tbb-static's calls took 650-850 us there.
std::uint32_t redecide_mask(double typical_ns, bool confirmed, std::uint32_t mask);

// How long a tier's figures hold before it is measured again: kConfirmNs
// while unconfirmed (too few runs, only an earlier run's, or only runs right
// after another tier's), else kStaleNs or kStaleRuns of its runs
// (`measured_us` each), whichever is longer.
double stale_after_ns(int samples, const TierBook& book, double measured_us);

// What bucket `b` has measured of each estimated tier, at time `now`, for a
// call on device `slot` (its own samples of the GPU tiers).
HistoryView history_view(const BucketState& b, const std::vector<Estimate>& est, std::size_t n, std::int64_t now,
                         std::size_t slot = 0);

// Books what choice `c` spends: an exploration run or a re-measurement.
void note_choice(BucketState& b, const Choice& c, std::int64_t now, std::size_t slot = 0);

// One finished run of tier `t` over n elements that took `t_ns`, ending at
// `end_ns`: its sample (none for a warm-up run: TypeSlot::warm_up), and the
// bucket's long-call flag. Returns what one element cost on a serial run
// over cached data (0: it teaches nothing).
struct Run {
  Tier tier = Tier::Serial;
  std::size_t n = 0;
  double bytes_per_elem = 0;
  std::int64_t t_ns = 0, end_ns = 0;
  std::size_t slot = 0;  // a GPU tier's device (several devices)
  // A CPU run right after this thread ran another CPU tier of the same call:
  // it pays for the data sitting in other cores' caches (or for waking the
  // workers), which the calls after it, on the same tier, do not (a 2^14
  // saxpy: 4.3 us serially right after tbb-auto, 1.7 us a call back to back).
  // Compared with the other tiers' back-to-back runs it would keep a tier out
  // for good, so it counts only until the tier has a run of its own kind,
  // and after that only where it was faster per element than those runs'
  // median: a switch never speeds a run up, so such a run shows the tier
  // faster than a slow back-to-back run had (a 10^4-key sort: 270 us on
  // tbb-auto right after serial, 430 us for the one back-to-back run).
  bool switched = false;
  // One of BucketState::timed_mask + 1 settled calls, timed for them all.
  bool sampled = false;
};
double add_run(BucketState& b, TypeSlot& slot, std::uint64_t generation, const Run& r);

// Drops each decision the bucket has settled on, for a mask that allows
// tier `t`, that `t`'s runs on device `slot`, with the one just added, show
// kOverturnGain slower per element than `t`; other masks' decisions stand.
// The next call of that mask then decides by those runs: a settled decision
// is otherwise served for the next 64-4096 calls (BucketState::redecide_mask)
// whatever a forced run, an exploration or a re-measurement measures
// meanwhile (a 1000-key sort stayed serial at 30 us for 44 rounds while
// tbb-auto, forced beside it, took 22).
constexpr double kOverturnGain = 1.1;
void drop_overturned(BucketState& b, Tier t, std::size_t slot);

// Folds a per-element cost from add_run (> 0) into the slot; a long run whose cost
// moved by more than 2x unsettles the bucket's decisions at once.
// `profile_ns` is the profile's figure, the reference before anything is learned.
void learn_per_elem(TypeSlot& slot, BucketState& b, double per_elem, std::int64_t t_ns, double profile_ns);

// Element-wise history is kept apart for sleeping workers, where a parallel
// tier pays their wake-up. But serial calls are what let them fall asleep:
// a settled serial decision there holds even where, awake, a parallel tier
// beats serial (2^16 floats here: tbb-static 8.7 us back to back, 22.6 us
// after serial calls, serial 13.9 us). So when the awake bucket measured a
// parallel tier kWakeGain faster than this bucket's serial runs, a call
// wakes the workers with it: if the calls come before the workers sleep
// again, the next ones are the awake bucket's. A try that did not hold (the
// calls come too rarely) costs a wake-up (tens of us). So tries are spaced:
// kWakeMinNs after one that held, doubling up to kWakeMaxNs after each that
// did not. A try held when more than kWakeHeldRegions parallel regions
// ended after it (the try's own, then a stream's), or when it paid alone
// (awake time plus the wake-up under serial time); not when the next call
// came late: isolated calls 15 ms apart each came "late" and each woke the
// workers (2^10 floats: 31 us a call against 13 us serial, caches cold).
// Not by how long the workers stayed: they linger after the try's own run.
// An awake figure that did not pay is measured again where it may be wrong
// (AwakeBest::doubtful) and within kProfileDoubt of serial: a stream's runs
// right after a wake-up are slow, and an earlier trial or run may have
// measured only those (or a busy machine), while the calls, always finding
// the workers asleep, never visit the awake bucket to correct it.
constexpr double kWakeGain = 1.1;
constexpr std::int64_t kWakeMinNs = 1'000'000, kWakeMaxNs = 64'000'000;
constexpr std::uint64_t kWakeHeldRegions = 2;
struct AwakeBest {
  Tier tier = Tier::Serial;  // the awake bucket's fastest measured parallel tier
  double us = 0;             // its median
  bool doubtful = false;     // stored history only, too few runs, or measured a while ago (stale_after_ns)
  // Whether waking them would pay, spacing aside. A serial decision is then
  // not settled: cached (and offered to the thread's table, which serves it
  // while the workers sleep), it would keep every call of a burst serial
  // until a re-decision 64-4096 calls later, as each call lets them sleep.
  bool pays(double serial_us) const {
    return tier != Tier::Serial && us > 0 && serial_us > 0 && us * kWakeGain < serial_us;
  }
  // Whether a try would pay, or re-measure a figure that may be wrong.
  bool worth_a_try(double serial_us) const {
    return pays(serial_us) || (doubtful && tier != Tier::Serial && us > 0 && us < kProfileDoubt * serial_us);
  }
};
// `b`: a bucket of sleeping workers that chose serial, whose serial runs
// take `serial_us`, when `regions` parallel regions have ended
// (WorkerActivity::regions) and a wake-up costs `wake_us`. Returns the tier
// to run: serial, or awake.tier to wake them (where that is worth a try).
Tier wake_for_awake(BucketState& b, const AwakeBest& awake, double serial_us, std::int64_t now,
                    std::uint64_t regions, double wake_us);

}  // namespace veda::detail
