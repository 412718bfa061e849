// Contenders of the scan case: std::inclusive_scan, tbb::parallel_scan
// written as its users write it, and veda::inclusive_scan (a tier forced,
// or auto); all out of place over floats.
#pragma once

#include <cstddef>
#include <string>

namespace bench::scan {

void std_scan(const float* in, float* out, std::size_t n);
void tbb_scan(const float* in, float* out, std::size_t n);
void veda_scan(const float* in, float* out, std::size_t n, const std::string& tier);

}  // namespace bench::scan
