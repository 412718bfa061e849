#include <span>

#include "bench/scan/contenders.hpp"
#include "veda/scan.hpp"

namespace bench::scan {
void veda_scan(const float* in, float* out, std::size_t n, const std::string& tier) {
  veda::ScanOptions o;
  o.tier = tier;
  veda::inclusive_scan(std::span<const float>(in, n), std::span<float>(out, n), o);
}
}  // namespace bench::scan
