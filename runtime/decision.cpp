// The decision view: Decision text, the thread's last decision (and its
// plan records), parse_tier.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/scheduler.hpp"
#include "runtime/telemetry.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/error.hpp"

namespace veda {
namespace detail {
Tier parse_tier(std::string_view name) {
  if (name.empty()) return Tier::Count;
  for (int t = 0; t < kTierCount; ++t)
    if (name == tier_name(static_cast<Tier>(t))) return static_cast<Tier>(t);
  throw InvalidArgument("veda: unknown tier '" + std::string(name) + "'");
}

}  // namespace detail

std::string Decision::to_string() const {
  std::ostringstream os;
  os << (name.empty() ? "(unnamed)" : name) << (sizes.size() > 1 ? " shape=" : " n=");
  for (std::size_t i = 0; i < sizes.size(); ++i) os << (i ? "x" : "") << sizes[i];
  os << " -> " << veda::to_string(device) << "/" << tier << ": " << reason;
  char buf[96];
  if (measured_us >= 0)
    std::snprintf(buf, sizeof buf, " [predicted %.3g us, measured %.3g us]", predicted_us, measured_us);
  else
    std::snprintf(buf, sizeof buf, " [predicted %.3g us]", predicted_us);
  os << buf;
  if (!candidates.empty()) {
    os << " {";
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto& c = candidates[i];
      std::snprintf(buf, sizeof buf, "%s%s %.3g us%s", i ? ", " : "", c.tier.c_str(), c.predicted_us,
                    c.from_history ? " (measured)" : "");
      os << buf;
      if (!c.eligible) os << " (ineligible: " << c.note << ")";
    }
    os << "}";
  }
  for (const auto& s : segments) os << "\n  segment: " << s.to_string();
  return os.str();
}

namespace detail {
Decision decision_of(const CallRecord& l) {
  Decision d;
  if (!l.site) return d;
  d.name = l.site->name();
  if (l.ndims) d.sizes.assign(l.dims.begin(), l.dims.begin() + l.ndims);
  else d.sizes = {l.n};
  d.tier = tier_name(l.tier);
  d.device = tier_device(l.tier);
  d.measured_us = l.measured_us;
  std::shared_ptr<const Explanation> e = l.explanation;
  if (!e) {
    std::lock_guard lock(l.bucket->mu);
    e = l.bucket->explanation[l.mask];
  }
  if (e) {
    d.reason = reason_text(e->why, e->estimates);
    d.explored = l.explored;
    for (const auto& est : e->estimates) {
      Candidate c;
      c.tier = tier_name(est.tier);
      c.device = tier_device(est.tier);
      c.predicted_us = est.total_us;
      c.transfer_us = est.transfer_us;
      c.from_history = est.from_history;
      c.eligible = est.eligible;
      c.note = est.note;
      if (est.tier == l.tier) d.predicted_us = est.total_us;
      d.candidates.push_back(std::move(c));
    }
  }
  if (l.forced_tier) {
    d.reason = std::string("forced tier ") + tier_name(l.tier) + " by option";
    d.candidates.clear();
  }
  if (l.fallback)
    d.reason = (l.fault ? "device fault: ran on the CPU; " : "device out of memory: fell back to CPU; ") + d.reason;
  return d;
}

namespace pipe {
// Only the outermost call on the thread records a plan: a pipeline run
// inside another call (a gpu_kernel body, a stage's function) is part of it.
void plan_begin() noexcept {
  if (t_call_depth == 1) last_call().nparts = 0;
}
void plan_add() noexcept {
  LastCall& l = last_call();
  if (t_call_depth == 1 && l.nparts < LastCall::kMaxParts) l.parts[l.nparts++] = static_cast<const CallRecord&>(l);
}
void plan_finish(const std::string& name, std::size_t size) {
  if (t_call_depth != 1) return;
  LastCall& l = last_call();
  l.has_plan = true;
  l.plan_name = name;
  l.plan_size = size;
}
}  // namespace pipe
}  // namespace detail

Decision last_decision() {
  const detail::LastCall& l = detail::last_call();
  if (!l.has_plan) return detail::decision_of(l);
  Decision d;
  for (std::size_t i = 0; i < l.nparts; ++i) d.segments.push_back(detail::decision_of(l.parts[i]));
  if (d.segments.size() == 1) {
    d = d.segments.front();
    d.segments = {d};
  } else {
    d.tier = "plan";
    d.reason = "plan of " + std::to_string(d.segments.size()) + " segments";
    d.device = std::any_of(d.segments.begin(), d.segments.end(),
                           [](const Decision& s) { return s.device == Device::Gpu; })
                   ? Device::Gpu
                   : Device::Cpu;
    d.measured_us = 0;
    for (const auto& s : d.segments) d.measured_us += std::max(0.0, s.measured_us);
  }
  d.name = l.plan_name;
  d.sizes = {l.plan_size};
  return d;
}

}  // namespace veda
