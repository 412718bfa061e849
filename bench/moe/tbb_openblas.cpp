#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bench/moe/contenders.hpp"

namespace bench::moe {

void tbb_route(Routing& r) {
  const std::size_t E = r.experts, k = r.k;
  tbb::combinable<std::vector<double>> mass([E] { return std::vector<double>(E, 0.0); });
  tbb::combinable<std::vector<std::int64_t>> counts([E] { return std::vector<std::int64_t>(E, 0); });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, r.tokens), [&](const auto& range) {
    std::vector<std::size_t> idx(E);
    auto& m = mass.local();
    auto& c = counts.local();
    for (std::size_t t = range.begin(); t < range.end(); ++t) {
      const float* l = r.logits.data() + t * E;
      std::iota(idx.begin(), idx.end(), std::size_t{0});
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                        [l](std::size_t a, std::size_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
      const float top = l[idx[0]];
      float z = 0;
      for (std::size_t s = 0; s < k; ++s) z += std::exp(l[idx[s]] - top);
      for (std::size_t s = 0; s < k; ++s) {
        r.ids[t * k + s] = static_cast<std::int64_t>(idx[s]);
        r.gates[t * k + s] = std::exp(l[idx[s]] - top) / z;
        ++c[idx[s]];
      }
      float all = 0;
      for (std::size_t e = 0; e < E; ++e) all += std::exp(l[e] - top);
      for (std::size_t e = 0; e < E; ++e) m[e] += std::exp(l[e] - top) / all;
    }
  });
  std::vector<double> m(E, 0.0);
  r.counts.assign(E, 0);
  mass.combine_each([&](const std::vector<double>& v) { for (std::size_t e = 0; e < E; ++e) m[e] += v[e]; });
  counts.combine_each([&](const std::vector<std::int64_t>& v) { for (std::size_t e = 0; e < E; ++e) r.counts[e] += v[e]; });
  for (std::size_t e = 0; e < E; ++e) r.importance[e] = static_cast<float>(m[e] / static_cast<double>(r.tokens));
  r.offsets[0] = 0;
  for (std::size_t e = 0; e < E; ++e) r.offsets[e + 1] = r.offsets[e] + r.counts[e];
  std::vector<std::int64_t> cursor(r.offsets.begin(), r.offsets.end() - 1);
  for (std::size_t a = 0; a < r.tokens * k; ++a) r.order[static_cast<std::size_t>(cursor[static_cast<std::size_t>(r.ids[a])]++)] = static_cast<std::int64_t>(a);
}

void openblas_experts(Experts& e) {
  const int k = static_cast<int>(e.d_in), n = static_cast<int>(e.d_out);
  std::size_t row = 0;
  for (std::size_t g = 0; g < e.counts.size(); ++g) {
    const int m = static_cast<int>(e.counts[g]);
    if (m)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, e.x.data() + row * e.d_in, k,
                  e.w.data() + g * e.d_in * e.d_out, n, 0.0f, e.y.data() + row * e.d_out, n);
    row += static_cast<std::size_t>(m);
  }
}

}  // namespace bench::moe
