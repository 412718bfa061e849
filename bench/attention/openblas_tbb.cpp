#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "bench/attention/contenders.hpp"

namespace bench::attention {

void openblas_tbb(Problem& p) {
  const int s = static_cast<int>(p.seq), d = static_cast<int>(p.d);
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.d));
  for (std::size_t h = 0; h < p.heads; ++h) {
    const float* q = p.q.data() + h * p.seq * p.d;
    const float* k = p.k.data() + h * p.seq * p.d;
    const float* v = p.v.data() + h * p.seq * p.d;
    float* sc = p.scores.data();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s, s, d, scale, q, d, k, d, 0.0f, sc, s);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, p.seq), [&](const auto& r) {
      for (std::size_t i = r.begin(); i < r.end(); ++i) {
        float* row = sc + i * p.seq;
        const float m = *std::max_element(row, row + p.seq);
        float sum = 0;
        for (std::size_t j = 0; j < p.seq; ++j) sum += (row[j] = std::exp(row[j] - m));
        const float inv = 1.0f / sum;
        for (std::size_t j = 0; j < p.seq; ++j) row[j] *= inv;
      }
    });
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, d, s, 1.0f, sc, s, v, d, 0.0f,
                p.out.data() + h * p.seq * p.d, d);
  }
}

}  // namespace bench::attention
