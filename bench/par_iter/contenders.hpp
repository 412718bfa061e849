// Contenders of the par_iter case, each written by hand the way its users
// would, with the same arithmetic and accumulator types:
//   compute: map -> filter -> map -> sum over floats (branchy, compute-bound here)
//   stream:  map -> sum over doubles (memory-bound), against STREAM triad
#pragma once

#include <cstddef>

namespace bench::par_iter {

// The stage functions, shared so every contender computes the same thing.
inline float stage1(float v) { return v * 2.0f - 1.0f; }
inline bool keep(float v) { return v > 0.0f; }
inline float stage2(float v) { return v * v; }
inline double scale(double v) { return v * 1.5; }

float serial(const float* x, std::size_t n);
float tbb_fused(const float* x, std::size_t n);
float omp_fused(const float* x, std::size_t n);
float veda_pipeline(const float* x, std::size_t n);

double serial_stream(const double* x, std::size_t n);
double tbb_stream(const double* x, std::size_t n);
double omp_stream(const double* x, std::size_t n);
double veda_stream(const double* x, std::size_t n);

// STREAM triad a = b + s*c with oneTBB: the machine's memory bandwidth, GB/s.
double triad_gbps(std::size_t n);

}  // namespace bench::par_iter
