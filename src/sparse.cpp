// SparseCsr's checks and spmv: validation, one decision, the chosen tier.
#include "veda/sparse.hpp"

#include <limits>
#include <optional>
#include <string>

#include "backends/cpu/spmv.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/spmv.hpp"
#endif

namespace veda {
namespace {
using detail::Tier;
using detail::tier_bit;

constexpr std::uint32_t kSpmvTiers =
    tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda) | tier_bit(Tier::GpuCusparse);

template <class T>
struct SpmvTag {};

[[noreturn]] void bad_csr(const std::string& what) { throw InvalidArgument("veda::SparseCsr: " + what); }

// The structure, checked once on the host: every later spmv relies on it.
void check_structure(std::size_t rows, std::size_t cols, std::span<const std::int32_t> off,
                     std::span<const std::int32_t> idx, std::size_t n_values) {
  if (off.empty() || off.size() - 1 != rows)  // (rows + 1 would overflow for rows = SIZE_MAX)
    bad_csr("row_offsets has " + std::to_string(off.size()) + " elements; " + std::to_string(rows) +
            " rows need rows + 1 = " + std::to_string(rows + 1));
  if (idx.size() != n_values)
    bad_csr("col_indices has " + std::to_string(idx.size()) + " elements but values has " + std::to_string(n_values));
  if (n_values > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    bad_csr(std::to_string(n_values) + " non-zeros do not fit the 32-bit indices");
  if (cols > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    bad_csr(std::to_string(cols) + " columns do not fit the 32-bit indices");
  if (off[0] != 0) bad_csr("row_offsets[0] is " + std::to_string(off[0]) + ", not 0");
  for (std::size_t r = 0; r < rows; ++r)
    if (off[r + 1] < off[r])
      bad_csr("row_offsets decrease at row " + std::to_string(r) + " (" + std::to_string(off[r]) + " then " +
              std::to_string(off[r + 1]) + ")");
  if (static_cast<std::size_t>(off[rows]) != n_values)
    bad_csr("row_offsets end at " + std::to_string(off[rows]) + " but there are " + std::to_string(n_values) +
            " values");
  for (std::size_t k = 0; k < idx.size(); ++k)
    if (idx[k] < 0 || static_cast<std::size_t>(idx[k]) >= cols)
      bad_csr("col_indices[" + std::to_string(k) + "] = " + std::to_string(idx[k]) + " is outside [0, " +
              std::to_string(cols) + ")");
}

template <class T>
void spmv_arrays(Array<T>& y, const SparseCsr<T>& a, const Array<T>& x, const SpmvOptions& o) {
  const bool keep = o.beta != 0;  // y is read too
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::CallDesc d = detail::op_desc(a.nnz(), sizeof(T), o);
  d.dims[0] = a.rows();
  d.dims[1] = a.cols();
  d.ndims = 2;
  if (keep) detail::describe_operands(d, a.row_offsets(), a.col_indices(), a.values(), x, y);
  else detail::describe_operands(d, a.row_offsets(), a.col_indices(), a.values(), x);
  const T alpha = static_cast<T>(o.alpha), beta = static_cast<T>(o.beta);
  detail::run_op(
      rt, detail::op_site<SpmvTag<T>>(o.name, "spmv", detail::OpClass::Spmv, kSpmvTiers), d,
      [&](const detail::Plan& p) {
        if (a.rows() == 0) return;
        T* hy = static_cast<T*>(detail::host_out(y.buffer(), keep));
        detail::cpu::spmv(p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr, a.rows(),
                          a.row_offsets().host().data(), a.col_indices().host().data(), a.values().host().data(),
                          x.host().data(), hy, alpha, beta);
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        if (a.rows() == 0) return false;
        auto& dev = detail::cuda_device(rt);
        void* s = dev.stream();
        detail::cuda::CsrOnDevice<T> m{a.rows(), a.cols(), a.nnz(), detail::device_in(dev, a.row_offsets(), s),
                                       detail::device_in(dev, a.col_indices(), s), detail::device_in(dev, a.values(), s)};
        const T* dx = detail::device_in(dev, x, s);
        T* dy = static_cast<T*>(detail::device_out(dev, y.buffer(), s, keep));
        const auto cs = static_cast<cudaStream_t>(s);
        std::optional<detail::gpu_bridge::DeviceTemp> scratch;
        // cuSPARSE wants real pointers; an empty matrix is the kernel's (y = beta y).
        if (p.tier == Tier::GpuCusparse && a.nnz() > 0)
          detail::cuda::spmv_cusparse(m, dx, dy, alpha, beta, rt.config().deterministic(), cs, [&](std::size_t bytes) {
            return scratch.emplace(rt, bytes, s).get();
          });
        else
          detail::cuda::spmv_kernel(m, dx, dy, alpha, beta, cs);
        detail::device_done({a.row_offsets().buffer(), a.col_indices().buffer(), a.values().buffer(), x.buffer(),
                             y.buffer()},
                            s);
        return false;
#else
        (void)p;
        return false;
#endif
      });
}

template <class T>
void check_x(const SparseCsr<T>& a, const Array<T>& x, const char* op) {
  if (a.values().size() != a.nnz())
    throw InvalidArgument(std::string(op) + ": A's values were replaced by an Array of " +
                          std::to_string(a.values().size()) + " elements; its structure has " +
                          std::to_string(a.nnz()) + " non-zeros");
  if (x.size() != a.cols())
    throw InvalidArgument(std::string(op) + ": x has " + std::to_string(x.size()) + " elements but A is " +
                          std::to_string(a.rows()) + "x" + std::to_string(a.cols()));
}

}  // namespace

template <class T>
SparseCsr<T>::SparseCsr(std::size_t rows, std::size_t cols, Array<index_type> row_offsets,
                        Array<index_type> col_indices, Array<T> values)
    : rows_(rows), cols_(cols), nnz_(values.size()), offsets_(std::move(row_offsets)),
      indices_(std::move(col_indices)), values_(std::move(values)) {
  check_structure(rows, cols, offsets_.chost(), indices_.chost(), values_.size());
}

template <class T>
Array<T> spmv(const SparseCsr<T>& a, const Array<T>& x, const SpmvOptions& o) {
  check_x(a, x, "veda::spmv");
  if (o.beta != 0)
    throw InvalidArgument("veda::spmv: beta = " + std::to_string(o.beta) +
                          " scales an existing y, which a returning spmv does not have (use spmv_into)");
  auto y = Array<T>::from_storage(detail::make_host_storage(a.rows() * sizeof(T)), a.rows());
  spmv_arrays(y, a, x, o);
  return y;
}

template <class T>
void spmv_into(Array<T>& y, const SparseCsr<T>& a, const Array<T>& x, const SpmvOptions& o) {
  check_x(a, x, "veda::spmv_into");
  if (y.size() != a.rows())
    throw InvalidArgument("veda::spmv_into: y has " + std::to_string(y.size()) + " elements but A has " +
                          std::to_string(a.rows()) + " rows");
  if (y.buffer() && y.buffer() == x.buffer()) throw InvalidArgument("veda::spmv_into: y is x (spmv cannot run in place)");
  if (y.buffer() && y.buffer() == a.values().buffer()) throw InvalidArgument("veda::spmv_into: y is A's values");
  spmv_arrays(y, a, x, o);
}

template class SparseCsr<float>;
template class SparseCsr<double>;
template Array<float> spmv(const SparseCsr<float>&, const Array<float>&, const SpmvOptions&);
template Array<double> spmv(const SparseCsr<double>&, const Array<double>&, const SpmvOptions&);
template void spmv_into(Array<float>&, const SparseCsr<float>&, const Array<float>&, const SpmvOptions&);
template void spmv_into(Array<double>&, const SparseCsr<double>&, const Array<double>&, const SpmvOptions&);

}  // namespace veda
