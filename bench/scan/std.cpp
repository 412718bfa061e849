#include <numeric>

#include "bench/scan/contenders.hpp"

namespace bench::scan {
void std_scan(const float* in, float* out, std::size_t n) { std::inclusive_scan(in, in + n, out); }
}  // namespace bench::scan
