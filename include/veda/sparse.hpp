// veda/sparse.hpp — compressed sparse row matrices and the sparse
// matrix-vector product, placed by the cost model like every op.
//
//   veda::SparseCsr<double> a(rows, cols, std::move(offsets), std::move(indices), std::move(values));
//                                         // std::vectors (adopted) or veda::Arrays
//   veda::Array<double> y = veda::spmv(a, x);            // y = A x, left where it was computed
//   veda::spmv_into(y, a, x, {.alpha = 2, .beta = 1});   // y = 2 A x + y, in place
//
// Contract:
// - SparseCsr<T> (T float or double) owns three 1-D Arrays: row offsets
//   (rows + 1 int32, starting at 0, non-decreasing, ending at nnz), column
//   indices (nnz int32 in [0, cols)) and values (nnz T). The constructor checks
//   all of it once, on the host, and throws veda::InvalidArgument naming the
//   first thing wrong; the structure cannot change afterwards (the values
//   may: values() gives the Array; one of another size is InvalidArgument
//   at the next spmv). Column indices within a row need not be sorted;
//   duplicates add. nnz and cols must fit in int32 (cuSPARSE's 32-bit CSR).
// - spmv(a, x): x has a.cols() elements; returns y of a.rows(). spmv_into(y,
//   a, x, {alpha, beta}): y = alpha A x + beta y; with beta == 0 y's old
//   contents are never read (NaN included). y must not be x. Wrong sizes are
//   InvalidArgument before any work.
// - Tiers: serial and tbb-auto (one row per index, rows split among the
//   workers in blocks of about equal non-zeros), cuda (veda's kernel: a group
//   of 2-32 lanes per row, sized by the mean row length) and gpu-cusparse
//   (cusparseSpMV). The cost model counts the non-zeros, the bytes and the
//   transfers the operands' residency needs; a matrix used again stays on
//   the device. Each row is summed in one order on the CPU tiers, so results
//   are bitwise identical across thread counts; deterministic mode asks
//   cuSPARSE for its deterministic algorithm.
//
// Thread-safety: a SparseCsr is like an Array (concurrent const use is safe);
// any number of threads may call spmv at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"

namespace veda {

template <class T>
class SparseCsr {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "veda::SparseCsr: float or double values");

 public:
  using value_type = T;
  using index_type = std::int32_t;

  SparseCsr() = default;  // 0 x 0
  SparseCsr(std::size_t rows, std::size_t cols, Array<index_type> row_offsets, Array<index_type> col_indices,
            Array<T> values);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t nnz() const noexcept { return nnz_; }

  const Array<index_type>& row_offsets() const noexcept { return offsets_; }
  const Array<index_type>& col_indices() const noexcept { return indices_; }
  const Array<T>& values() const noexcept { return values_; }
  Array<T>& values() noexcept { return values_; }

 private:
  std::size_t rows_ = 0, cols_ = 0, nnz_ = 0;
  Array<index_type> offsets_{index_type{0}};
  Array<index_type> indices_;
  Array<T> values_;
};

struct SpmvOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "spmv"
  std::string tier;  // force "serial", "tbb-auto", "cuda" or "gpu-cusparse"
  double alpha = 1;  // y = alpha A x + beta y
  double beta = 0;
};

template <class T>
Array<T> spmv(const SparseCsr<T>& a, const Array<T>& x, const SpmvOptions& options = {});

template <class T>
void spmv_into(Array<T>& y, const SparseCsr<T>& a, const Array<T>& x, const SpmvOptions& options = {});

extern template class SparseCsr<float>;
extern template class SparseCsr<double>;
extern template Array<float> spmv(const SparseCsr<float>&, const Array<float>&, const SpmvOptions&);
extern template Array<double> spmv(const SparseCsr<double>&, const Array<double>&, const SpmvOptions&);
extern template void spmv_into(Array<float>&, const SparseCsr<float>&, const Array<float>&, const SpmvOptions&);
extern template void spmv_into(Array<double>&, const SparseCsr<double>&, const Array<double>&, const SpmvOptions&);

}  // namespace veda
