// Contenders of the expressions case: four element-wise expressions over
// float vectors, each written as its users write it: a plain loop (serial),
// a hand-fused oneTBB loop (the target), Eigen's array expressions (fused,
// one thread), one pass per operation over temporaries as CuPy and NumPy
// evaluate (veda's ops one at a time, on the cuda tier where a GPU is
// usable, else tbb-auto), and veda's fused expression placed by the cost
// model.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bench::expressions {

enum class Case { Axpy, Rational, LeakySqrt, Normalize };
inline constexpr Case kCases[] = {Case::Axpy, Case::Rational, Case::LeakySqrt, Case::Normalize};

// The expression as veda spells it, and its operation count (the passes
// over memory one operation at a time takes; a fused loop takes one).
inline const char* text(Case c) {
  switch (c) {
    case Case::Axpy: return "2 * x + y";
    case Case::Rational: return "(x - y) * (x + y) / (1 + x * x)";
    case Case::LeakySqrt: return "where(x > 0, x, 0.1 * x) + sqrt(abs(y))";
    default: return "(X - mu) / sd  (mu, sd: one per column)";
  }
}
inline int ops(Case c) {
  switch (c) {
    case Case::Axpy: return 2;
    case Case::Rational: return 6;
    case Case::LeakySqrt: return 6;
    default: return 2;
  }
}

// x, y: n values; mu, sd: `cols` values (Normalize: x is n / cols rows of cols).
struct Data {
  std::vector<float> x, y, mu, sd;
  std::size_t cols = 1024;
};

// The memory every contender reads and writes: veda's Arrays' (veda_setup),
// so that the contenders differ in nothing but their loops, and the cache
// eviction before each batch (main.cpp) empties the same lines for each.
struct Memory {
  const float *x = nullptr, *y = nullptr, *mu = nullptr, *sd = nullptr;
  float* out = nullptr;
  std::size_t n = 0, cols = 1;
};

void serial(Case c, const Memory& m);
void tbb_loop(Case c, const Memory& m);
bool eigen_installed();
void eigen(Case c, const Memory& m);

// veda keeps its own Arrays, filled from `d`; returns their memory.
Memory veda_setup(const Data& d);
void veda_fused(Case c, const std::string& tier = "");  // "": the cost model's choice
void veda_one_op(Case c);
std::vector<float> veda_result();
std::string veda_tier();  // of the thread's latest veda call
std::string one_op_tier();

}  // namespace bench::expressions
