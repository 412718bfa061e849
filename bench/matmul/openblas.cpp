// OpenBLAS called as its users call it: cblas_sgemm/dgemm, row-major. The
// library is opened at run time (the same one, and so the same instance and
// kernel set, that veda uses), so that main() can choose OPENBLAS_CORETYPE
// before it loads.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "bench/matmul/contenders.hpp"

namespace bench::matmul {
namespace {
template <class T>
using Gemm = void (*)(int, int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int);

struct Lib {
  Gemm<float> sgemm = nullptr;
  Gemm<double> dgemm = nullptr;
  char* (*corename)() = nullptr;
};

const Lib& lib() {
  static const Lib l = [] {
    void* h = dlopen(VEDA_OPENBLAS_PATH, RTLD_NOW);
    if (!h) {
      std::fprintf(stderr, "cannot open OpenBLAS: %s\n", dlerror());
      std::exit(1);
    }
    Lib r;
    r.sgemm = reinterpret_cast<Gemm<float>>(dlsym(h, "cblas_sgemm"));
    r.dgemm = reinterpret_cast<Gemm<double>>(dlsym(h, "cblas_dgemm"));
    r.corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
    return r;
  }();
  return l;
}
constexpr int kRowMajor = 101, kNoTrans = 111;
}  // namespace

template <>
void openblas_gemm<float>(const float* a, const float* b, float* c, std::size_t n, float beta) {
  const int N = static_cast<int>(n);
  lib().sgemm(kRowMajor, kNoTrans, kNoTrans, N, N, N, 1.0f, a, N, b, N, beta, c, N);
}
template <>
void openblas_gemm<double>(const double* a, const double* b, double* c, std::size_t n, double beta) {
  const int N = static_cast<int>(n);
  lib().dgemm(kRowMajor, kNoTrans, kNoTrans, N, N, N, 1.0, a, N, b, N, beta, c, N);
}

std::string openblas_core() { return lib().corename ? lib().corename() : "unknown"; }

}  // namespace bench::matmul
