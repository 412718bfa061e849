// CPU transpose tiers: serial and tbb-auto, both in cache blocks so that
// reads and writes each stay within a few cache lines per block (smaller
// pieces at power-of-two row lengths; 4- and 8-byte elements in register
// tiles: see transpose.cpp).
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

// out (cols x rows) = in (rows x cols)^T for elements of elem (1, 2, 4, 8)
// bytes; with alpha != 1 or beta != 0, out = alpha in^T + beta out over
// float (elem 4) or double (elem 8) elements.
void transpose(CpuExecutor* parallel, const void* in, void* out, std::size_t rows, std::size_t cols,
               std::size_t elem, double alpha = 1, double beta = 0);

}  // namespace veda::detail::cpu
