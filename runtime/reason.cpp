#include "runtime/reason.hpp"

#include <algorithm>
#include <cstdio>

#include "runtime/cost_model.hpp"

namespace veda::detail {
namespace {

// Whether serial beat the oneTBB tiers because their work is host-memory
// traffic that more threads barely speed up, not because of their fork-join
// cost: the fastest TBB tier's body is its memory time, and that is most of
// the serial body too.
bool memory_bound(const std::vector<Estimate>& est, const Estimate& serial) {
  const Estimate* par = nullptr;
  for (const auto& e : est)
    if (e.eligible && (e.tier == Tier::TbbStatic || e.tier == Tier::TbbAuto) && (!par || e.total_us < par->total_us))
      par = &e;
  if (!par || par->memory_us <= 0) return false;
  const double par_body = par->total_us - par->overhead_us - par->transfer_us;
  const double serial_body = serial.total_us - serial.overhead_us - serial.transfer_us;
  return par_body <= 1.05 * par->memory_us && par->memory_us >= 0.75 * serial_body && par->overhead_us < 0.5 * par_body;
}

std::string fastest_text(const Reason& r, const std::vector<Estimate>& est) {
  const auto it = std::find_if(est.begin(), est.end(), [&](const Estimate& e) { return e.tier == r.tier; });
  if (it == est.end()) return std::string(tier_name(r.tier)) + " fastest";
  const Estimate& best = *it;
  std::string why;
  if (best.tier == Tier::CoExec) {
    char buf[128];
    if (best.gpu_devices == 1)
      std::snprintf(buf, sizeof buf, "CPU and GPU together fastest (%.0f%% of the range on the GPU)",
                    100.0 * best.gpu_fraction);
    else if (best.gpu_fraction < 1)
      std::snprintf(buf, sizeof buf, "CPU and %d GPUs together fastest (%.0f%% of the range on the GPUs)",
                    best.gpu_devices, 100.0 * best.gpu_fraction);
    else
      std::snprintf(buf, sizeof buf, "%d GPUs together fastest (the range split among them)", best.gpu_devices);
    why = buf;
  } else if (tier_device(best.tier) == Device::Gpu) {
    why = r.all_on_device ? "data resident on device" : "GPU fastest including transfers";
    if (best.tier == Tier::CudaStreamed) why += "; streamed in chunks to overlap transfers";
  } else {
    const bool tbb_offered = std::any_of(est.begin(), est.end(), [](const Estimate& e) {
      return e.eligible && (e.tier == Tier::TbbStatic || e.tier == Tier::TbbAuto);
    });
    if (best.tier == Tier::Serial)
      why = !tbb_offered              ? "serial (one CPU thread)"
            : memory_bound(est, best) ? "memory-bound: more threads add little bandwidth here (per the profile)"
                                      : "below TBB break-even";
    else if (best.tier == Tier::TbbStatic || best.tier == Tier::TbbAuto)
      why = "above TBB break-even";
    else
      why = "fastest CPU tier";
    // The GPU side's story comes from its GPU-only tiers: cpu+gpu's note
    // ("needs both a CPU and a GPU tier") would hide why the GPU is out.
    const Estimate* gpu = nullptr;
    for (const auto& e : est)
      if (tier_device(e.tier) == Device::Gpu && e.tier != Tier::CoExec &&
          (!gpu || (e.eligible && !gpu->eligible) || (e.eligible == gpu->eligible && e.total_us < gpu->total_us)))
        gpu = &e;
    if (gpu && !gpu->eligible && r.forced.empty())
      why += "; " + gpu->note;
    else if (gpu && gpu->eligible)
      why += gpu->transfer_us > 0.5 * gpu->total_us ? "; GPU slower including transfers (transfer-bound)"
                                                    : "; GPU slower (launch overhead)";
  }
  if (best.from_history) why += " (measured)";
  return why;
}

std::string measuring_text(const Reason& r) {
  const bool refresh = r.kind == Reason::Kind::Refresh;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", r.ratio);
  const char* what = !refresh                                 ? ": unmeasured"
                     : r.doubt == Reason::Doubt::EarlierRun   ? ": measured only in an earlier run"
                     : r.doubt == Reason::Doubt::AfterAnother ? ": measured only right after another tier"
                     : r.doubt == Reason::Doubt::FewRuns      ? ": measured too few times to trust"
                     : r.doubt == Reason::Doubt::Slowed       ? ": measured faster before"
                                                              : ": last measured a while ago";
  return std::string(refresh ? "re-measuring " : "exploring ") + tier_name(r.tier) + what + ", predicted at " +
         ratio + " of " + tier_name(r.best) + (refresh ? "" : ", within what the profile may be off by") +
         (r.wake_aside ? " (its one-off wake-up of oneTBB's workers aside)" : "");
}

std::string wake_text(const Reason& r) {
  char why[224];
  if (r.kind == Reason::Kind::Wake)
    std::snprintf(why, sizeof why,
                  "waking oneTBB's workers: awake, %s measured %.1f us against serial %.1f us here, and calls that "
                  "come before they sleep again keep them awake",
                  tier_name(r.tier), r.us, r.serial_us);
  else
    std::snprintf(why, sizeof why,
                  "waking oneTBB's workers to re-measure %s awake: its %.1f us against serial %.1f us here is from "
                  "an earlier run, too few runs or a while ago",
                  tier_name(r.tier), r.us, r.serial_us);
  return why;
}

}  // namespace

std::string reason_text(const Reason& r, const std::vector<Estimate>& est) {
  std::string why;
  switch (r.kind) {
    case Reason::Kind::NoEligible: return r.forced.empty() ? "no eligible tier" : r.forced;
    case Reason::Kind::Fastest: why = fastest_text(r, est); break;
    case Reason::Kind::Explore:
    case Reason::Kind::Refresh: why = measuring_text(r); break;
    case Reason::Kind::Wake:
    case Reason::Kind::WakeRetry: why = wake_text(r); break;
    case Reason::Kind::Trial:
      why = std::string("trying ") + tier_name(r.tier) +
            " in a stream after waking oneTBB's workers (the first runs after a wake-up are slow)";
      break;
  }
  return r.forced.empty() ? why : r.forced + "; " + why;
}

}  // namespace veda::detail
