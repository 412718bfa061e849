// CPU scan tiers: serial, and a three-pass blocked scan on oneTBB
// (tbb-auto). out may equal in.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

// inclusive: out[i] = in[0] + ... + in[i]; otherwise out[i] = init + in[0] + ... + in[i-1].
template <class T>
void scan_serial(const T* in, T* out, std::size_t n, bool inclusive, T init);
template <class T>
void scan_parallel(CpuExecutor& ex, const T* in, T* out, std::size_t n, bool inclusive, T init);

}  // namespace veda::detail::cpu
