#include "runtime/launch_count.hpp"

#include <atomic>

namespace veda::detail {
namespace {
std::atomic<std::uint64_t> g_launches{0};
}

void count_launch() noexcept { g_launches.fetch_add(1, std::memory_order_relaxed); }
std::uint64_t launch_count() noexcept { return g_launches.load(std::memory_order_relaxed); }

}  // namespace veda::detail
