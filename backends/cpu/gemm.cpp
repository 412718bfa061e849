#include "backends/cpu/gemm.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace veda::detail::cpu {

template <class T>
void gemm_reference(const GemmShape& s, const T* a, const T* b, T* c) {
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p < s.k; ++p) acc += static_cast<double>(op_a(s, a, i, p)) * op_b(s, b, p, j);
      T& out = c[i * s.n + j];
      out = static_cast<T>(s.beta == 0 ? s.alpha * acc : s.alpha * acc + s.beta * static_cast<double>(out));
    }
}

template <class T>
bool gemm_blas(const Blas& blas, int threads, const GemmShape& s, const T* a, const T* b, T* c) {
  constexpr std::size_t kIntMax = 0x7fffffff;  // CBLAS takes int dimensions
  if (!blas.available || s.m > kIntMax || s.n > kIntMax || s.k > kIntMax) return false;
  if constexpr (kTsanBuild) threads = 1;  // OpenBLAS's threads are invisible to TSan too
  if (blas.set_threads && blas.get_threads && blas.get_threads() != threads) blas.set_threads(threads);
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  const int ta = s.trans_a ? kTrans : kNoTrans, tb = s.trans_b ? kTrans : kNoTrans;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = static_cast<int>(std::max<std::size_t>(s.lda(), 1));
  const int ldb = static_cast<int>(std::max<std::size_t>(s.ldb(), 1));
  const int ldc = std::max(n, 1);
  const T alpha = static_cast<T>(s.alpha), beta = static_cast<T>(s.beta);
  // A vector on either side: gemv over the matrix operand. C = op(A) x when
  // n == 1; C^T = op(B)^T a when m == 1 (then B is the matrix, transposed
  // the other way). A vector's stride is its row stride when stored as a
  // column.
  if ((n == 1 || m == 1) && k > 0 && (std::is_same_v<T, float> ? blas.sgemv != nullptr : blas.dgemv != nullptr)) {
    const bool by_a = n == 1;
    const T* mat = by_a ? a : b;
    const T* vec = by_a ? b : a;
    const bool mat_t = by_a ? s.trans_a : !s.trans_b;  // trans flag for gemv over the stored matrix
    const int rows = by_a ? (s.trans_a ? k : m) : (s.trans_b ? n : k);
    const int cols = by_a ? (s.trans_a ? m : k) : (s.trans_b ? k : n);
    const int ld = by_a ? lda : ldb;
    const int inc = by_a ? (s.trans_b ? 1 : ldb) : (s.trans_a ? lda : 1);
    if constexpr (std::is_same_v<T, float>)
      blas.sgemv(kRowMajor, mat_t ? kTrans : kNoTrans, rows, cols, alpha, mat, ld, vec, inc, beta, c, 1);
    else
      blas.dgemv(kRowMajor, mat_t ? kTrans : kNoTrans, rows, cols, alpha, mat, ld, vec, inc, beta, c, 1);
    return true;
  }
  if constexpr (std::is_same_v<T, float>)
    blas.sgemm(kRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    blas.dgemm(kRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}

template <class T>
void bias_activation(CpuExecutor& ex, T* c, std::size_t m, std::size_t n, const T* bias, Activation act) {
  auto rows = [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] = activate(c[i * n + j] + (bias ? bias[j] : T(0)), act);
  };
  if (m * n < (std::size_t{1} << 16)) {
    rows(0, m);
    return;
  }
  ex.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m), [&](const auto& r) { rows(r.begin(), r.end()); });
  });
}

#define VEDA_GEMM_INSTANTIATE(T)                                                                        \
  template void gemm_reference<T>(const GemmShape&, const T*, const T*, T*);                          \
  template bool gemm_blas<T>(const Blas&, int, const GemmShape&, const T*, const T*, T*);             \
  template void bias_activation<T>(CpuExecutor&, T*, std::size_t, std::size_t, const T*, Activation);
VEDA_GEMM_INSTANTIATE(float)
VEDA_GEMM_INSTANTIATE(double)
#undef VEDA_GEMM_INSTANTIATE

}  // namespace veda::detail::cpu
