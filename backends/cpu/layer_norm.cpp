// Layer normalisation on the CPU: a row at a time, its mean and its variance
// (a second pass: no cancellation), then one pass writing the result. Sums
// are taken in chunks, each in vector lanes (detail/lanes.hpp: sum_vectors), the chunks'
// sums added in double, so a float sum's error grows with the chunk, not
// the row. Workers take whole rows: a row's bits do not depend on the tier.
#include "backends/cpu/layer_norm.hpp"

#include <algorithm>
#include <cmath>

#include "backends/cpu/tasks.hpp"
#include "veda/detail/lanes.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kTask = 1 << 15;  // elements per task

// load(i) summed over [0, n), in chunks of `chunk` elements.
template <class T, class Load>
double sum(const Load& load, std::size_t n, std::size_t chunk) {
  double s = 0;
  for (std::size_t c = 0; c < n; c += chunk)
    s += sum_vectors<T>(load, c, std::min(n, c + chunk));
  return s;
}

template <class T>
void row(const T* x, const T* gamma, const T* beta, T* y, std::size_t d, double eps) {
  // The mean's chunks are short (a lane adds 16 elements): a float lane's
  // error grows with the row's mean, which the deviations do not share.
  const T mean = static_cast<T>(sum<T>([x](std::size_t i) { return x[i]; }, d, 256) / static_cast<double>(d));
  const double var = sum<T>(
                         [x, mean](std::size_t i) {
                           const T c = x[i] - mean;
                           return c * c;
                         },
                         d, 4096) /
                     static_cast<double>(d);
  const T rstd = static_cast<T>(1 / std::sqrt(var + eps));
  // One loop per affine part: a test inside would keep it from vectorising.
  auto write = [&](auto scale, auto shift) {
    for (std::size_t i = 0; i < d; ++i) y[i] = scale(i, (x[i] - mean) * rstd) + shift(i);
  };
  auto scaled = [gamma](std::size_t i, T v) { return v * gamma[i]; };
  auto plain = [](std::size_t, T v) { return v; };
  auto shifted = [beta](std::size_t i) { return beta[i]; };
  auto unshifted = [](std::size_t) { return T(0); };
  if (gamma && beta) write(scaled, shifted);
  else if (gamma) write(scaled, unshifted);
  else if (beta) write(plain, shifted);
  else write(plain, unshifted);
}

template <class T>
void run(CpuExecutor* par, const T* x, const T* gamma, const T* beta, T* y, std::size_t rows, std::size_t d, double eps) {
  for_each_task(par, rows, kTask / d, [&](std::size_t r) { row(x + r * d, gamma, beta, y + r * d, d, eps); });
}

}  // namespace

void layer_norm(CpuExecutor* parallel, ScalarType type, const void* x, const void* gamma, const void* beta, void* out,
                std::size_t rows, std::size_t d, double eps) {
  if (type == ScalarType::F32)
    run(parallel, static_cast<const float*>(x), static_cast<const float*>(gamma), static_cast<const float*>(beta),
        static_cast<float*>(out), rows, d, eps);
  else
    run(parallel, static_cast<const double*>(x), static_cast<const double*>(gamma), static_cast<const double*>(beta),
        static_cast<double*>(out), rows, d, eps);
}

}  // namespace veda::detail::cpu
