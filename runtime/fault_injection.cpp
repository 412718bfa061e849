#include "runtime/fault_injection.hpp"

#include <charconv>

#include "runtime/logging.hpp"
#include "veda/error.hpp"

namespace veda::detail {
namespace {
std::atomic<FaultInjector*> g_injector{nullptr};
}

const char* fault_name(FaultKind k) noexcept {
  switch (k) {
    case FaultKind::Alloc: return "alloc";
    case FaultKind::Launch: return "launch";
    case FaultKind::Copy: return "copy";
  }
  return "?";
}

FaultPlan parse_fault_plan(std::string_view spec, const std::string& field) {
  FaultPlan plan;
  const std::string whole(spec);
  auto fail = [&](const std::string& why) -> FaultPlan {
    throw ConfigError(field, whole, why + " (expected e.g. alloc:3,launch:1,copy:2 with counts >= 1)");
  };
  std::size_t pos = 0;
  while (pos < spec.size()) {
    const std::size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string_view item = spec.substr(pos, comma - pos);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) return fail("'" + std::string(item) + "' has no ':'");
    const std::string_view kind = item.substr(0, colon), count = item.substr(colon + 1);
    std::size_t k = kFaultKinds;
    for (std::size_t i = 0; i < kFaultKinds; ++i)
      if (kind == fault_name(static_cast<FaultKind>(i))) k = i;
    if (k == kFaultKinds) return fail("unknown kind '" + std::string(kind) + "'");
    if (plan.nth[k]) return fail("'" + std::string(kind) + "' given twice");
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || end != count.data() + count.size() || count.empty() || n == 0)
      return fail("bad count '" + std::string(count) + "'");
    plan.nth[k] = n;
    pos = comma + 1;
    if (comma + 1 == spec.size()) return fail("trailing ','");
  }
  return plan;
}

bool FaultInjector::hit(FaultKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  if (!plan_.nth[i]) return false;
  if (seen_[i].fetch_add(1, std::memory_order_relaxed) + 1 != plan_.nth[i]) return false;
  injected_[i].fetch_add(1, std::memory_order_relaxed);
  return true;
}

void set_fault_injector(FaultInjector* f) noexcept { g_injector.store(f, std::memory_order_release); }
FaultInjector* fault_injector() noexcept { return g_injector.load(std::memory_order_acquire); }

void fault_point(FaultKind k, const char* where) {
  FaultInjector* f = fault_injector();
  if (!f || !f->hit(k)) return;
  const std::string what = std::string("injected fault (VEDA_FAULT ") + fault_name(k) + "): " + where;
  log().warn("{}", what);
  if (k == FaultKind::Alloc) throw OutOfMemory(what);
  throw DeviceFault(what);
}

}  // namespace veda::detail
