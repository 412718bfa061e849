// The seed workloads with raw oneTBB, as a user writes them by hand.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <cmath>
#include <functional>

#include "bench/seeds/contenders.hpp"

namespace bench::seeds {

double pi_tbb(std::uint64_t n) {
  const std::uint64_t hits = tbb::parallel_reduce(
      tbb::blocked_range<std::uint64_t>(0, n), std::uint64_t{0},
      [](const tbb::blocked_range<std::uint64_t>& r, std::uint64_t acc) {
        for (std::uint64_t i = r.begin(); i != r.end(); ++i) acc += inside(i);
        return acc;
      },
      std::plus<>());
  return 4.0 * static_cast<double>(hits) / static_cast<double>(n);
}

double blur_tbb(Images& w) {
  std::vector<double> means(w.count);
  tbb::parallel_for(0, w.count, [&](int i) {
    w.blur(i);
    means[i] = w.mean(i);
  });
  double s = 0;
  for (double m : means) s += m;
  return s;
}

double regression_tbb(const Regression& w) {
  std::vector<float> wt(w.k, 0.0f);
  using Grad = std::vector<float>;
  for (std::size_t step = 0; step < w.steps; ++step) {
    const Grad grad = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, w.m), Grad(w.k, 0.0f),
        [&](const tbb::blocked_range<std::size_t>& r, Grad acc) {
          for (std::size_t i = r.begin(); i != r.end(); ++i) {
            const float* row = &w.x[i * w.k];
            float p = 0;
            for (std::size_t j = 0; j < w.k; ++j) p += row[j] * wt[j];
            const float e = p - w.y[i];
            for (std::size_t j = 0; j < w.k; ++j) acc[j] += e * row[j];
          }
          return acc;
        },
        [](Grad a, const Grad& b) {
          for (std::size_t j = 0; j < a.size(); ++j) a[j] += b[j];
          return a;
        });
    for (std::size_t j = 0; j < w.k; ++j) wt[j] -= w.lr * 2.0f * grad[j] / static_cast<float>(w.m);
  }
  double s = 0;
  for (float v : wt) s += v;
  return s;
}

double normalize_tbb(Normalize& w) {
  // Column statistics: each task owns a block of columns (no shared sums).
  std::vector<float> m(w.d), sd(w.d);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.d, 16), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t j = r.begin(); j != r.end(); ++j) {
      double s = 0, q = 0;
      for (std::size_t i = 0; i < w.n; ++i) {
        const double v = w.x[i * w.d + j];
        s += v;
        q += v * v;
      }
      m[j] = static_cast<float>(s / w.n);
      sd[j] = static_cast<float>(std::sqrt(q / w.n - (s / w.n) * (s / w.n)));
    }
  });
  tbb::parallel_for(std::size_t{0}, w.n, [&](std::size_t i) {
    for (std::size_t j = 0; j < w.d; ++j) w.z[i * w.d + j] = (w.x[i * w.d + j] - m[j]) / sd[j];
  });
  gram_openblas(w.z.data(), w.n, w.d, w.g.data());
  return trace(w.g, w.n);
}

}  // namespace bench::seeds
