// veda/mpi/dist_array.hpp — an array split over the ranks of a Comm.
//
//   veda::mpi::DistArray<double> x(world, n);            // 1-D block, zeros
//   veda::mpi::DistArray<float> g(world, rows, cols);    // 2-D row blocks
//   auto y = veda::mpi::DistArray<float>::scatter(world, data);  // data: root's
//   x.local()                       // this rank's part: a veda::Array
//   std::vector<double> all = x.gather();   // the whole array on the root
//
// Contract:
// - A DistArray of `rows` rows of `cols` elements (a 1-D array: cols = 1)
//   gives each rank a contiguous run of whole rows, in rank order: rank r
//   holds global rows [row_offset(r), row_offset(r) + local_rows(r)). Block
//   distribution: rows / p each, the first rows % p ranks one more. Other
//   distributions come from from_local (any local row counts, empty ranks
//   included) and redistribute.
// - local() is an ordinary veda::Array ([local rows] or [local rows, cols]):
//   veda calls on it are placed per call, and it may live on the GPU.
// - Every member that communicates is collective (veda/mpi/comm.hpp);
//   accessors of the layout are local and cheap.
// - Elements: trivially copyable. Per-rank counts beyond MPI's int counts
//   (2^31 - 1 elements) are InvalidArgument.
//
// Thread-safety: as veda::Array.
#pragma once

#include <cstddef>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/mpi/comm.hpp"

namespace veda::mpi {

namespace detail {

// Rows per rank of a block distribution.
std::vector<std::size_t> block_rows(std::size_t rows, int ranks);
// Exclusive prefix sums (size + 1 entries).
std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts);
// Every rank's `mine`, in rank order (collective).
std::vector<std::size_t> allgather_size(const Comm& c, std::size_t mine);
// The int counts and displacements MPI's v-collectives take for per-rank
// counts of `scale` elements each (InvalidArgument past int, naming `op`).
struct VCounts {
  std::vector<int> n, displ;
};
VCounts vcounts(const std::vector<std::size_t>& counts, const char* op, std::size_t scale = 1);

// Every rank's values, concatenated in rank order (collective).
template <class V>
std::vector<V> allgather_values(const Comm& c, const std::vector<V>& mine, const char* op) {
  static_assert(std::is_trivially_copyable_v<V>, "veda::mpi reductions need trivially copyable results");
  const auto counts = allgather_size(c, mine.size());
  const VCounts v = vcounts(counts, op);
  std::vector<V> all(offsets_of(counts).back());
  ElementType t(sizeof(V));
  check(MPI_Allgatherv(mine.data(), v.n[static_cast<std::size_t>(c.rank())], t.get(), all.data(), v.n.data(),
                       v.displ.data(), t.get(), c.native()),
        "MPI_Allgatherv");
  return all;
}

// What each rank sends to and receives from every other rank to move a
// contiguous distribution with per-rank counts `from` to one with counts
// `to` (same total): the part of its run that another rank's new run covers.
struct Moves {
  explicit Moves(std::size_t ranks = 0) : send(ranks), send_displ(ranks), recv(ranks), recv_displ(ranks) {}
  std::vector<int> send, send_displ, recv, recv_displ;
};
Moves moves_between(const Comm& c, const std::vector<std::size_t>& from, const std::vector<std::size_t>& to,
                    const char* op);

// One MPI_Alltoallv of T elements: from `send` into `recv` (host or device
// addresses). Collective.
template <class T>
void alltoallv(const Comm& c, const T* send, const Moves& m, T* recv) {
  ElementType t(sizeof(T));
  check(MPI_Alltoallv(send, m.send.data(), m.send_displ.data(), t.get(), recv, m.recv.data(), m.recv_displ.data(),
                      t.get(), c.native()),
        "MPI_Alltoallv");
}

// Where a part goes to MPI from: the device holding it when MPI takes device
// pointers and the host copy is stale (nothing is then brought home), else
// -1, the host.
template <class T>
int mpi_device(const Array<T>& a) {
  return !a.empty() && !a.valid_on_host() && pass_device_pointers() ? a.device() : -1;
}
template <class T>
const T* send_address(const Array<T>& a, int dev) {
  return dev >= 0 ? a.device_data(dev) : a.host().data();
}
// Where arriving data is written: device `dev`'s copy of `a` (which is then
// device-resident), or the host when dev is -1 or that device has no room
// (ranks need not agree on where their buffers are).
template <class T>
T* receive_address(Array<T>& a, int dev) {
  if (dev >= 0 && !a.empty()) try {
      return a.device_overwrite(dev);
    } catch (const OutOfMemory&) {
    }
  return a.host().data();
}

// The elements of a contiguous distribution with counts `from` moved to
// counts `to`, on the host.
template <class T>
std::vector<T> redistribute(const Comm& c, std::span<const T> local, const std::vector<std::size_t>& from,
                            const std::vector<std::size_t>& to, const char* op) {
  const Moves m = guarded(c, op, [&] { return moves_between(c, from, to, op); });
  std::vector<T> out(to[static_cast<std::size_t>(c.rank())]);
  alltoallv(c, local.data(), m, out.data());
  return out;
}

// The same for a part held in an Array: from and into the device holding it
// where MPI takes device pointers (mpi_device), through the host otherwise.
// Collective; in both, a count past MPI's ints or a failure choosing the
// addresses reaches every rank before any transfer.
template <class T>
Array<T> redistribute(const Comm& c, const Array<T>& local, const std::vector<std::size_t>& from,
                      const std::vector<std::size_t>& to, const char* op) {
  Moves m;
  Array<T> out(to[static_cast<std::size_t>(c.rank())]);
  const T* send = nullptr;
  T* recv = nullptr;
  guarded(c, op, [&] {
    m = moves_between(c, from, to, op);
    const int dev = mpi_device(local);
    send = send_address(local, dev);
    recv = receive_address(out, dev);
  });
  alltoallv(c, send, m, recv);
  return out;
}

}  // namespace detail

template <class T>
class DistArray {
  static_assert(std::is_trivially_copyable_v<T>, "veda::mpi::DistArray needs trivially copyable elements");

 public:
  // Zeros, block-distributed: n elements, or rows x cols.
  DistArray(const Comm& comm, std::size_t n) : DistArray(comm, detail::block_rows(n, comm.size()), 1, false) {}
  DistArray(const Comm& comm, std::size_t rows, std::size_t cols)
      : DistArray(comm, detail::block_rows(rows, comm.size()), cols, true) {}

  // Adopts each rank's `local` (1-D, or 2-D with the same cols on every
  // rank: else InvalidArgument on every rank). Collective.
  static DistArray from_local(const Comm& comm, Array<T> local) {
    const bool matrix = local.ndim() == 2;
    const std::size_t cols = matrix ? local.cols() : 1;
    // Every rank's kind and width, so that all of them see a mismatch.
    const std::size_t code = local.ndim() > 2 ? 0 : cols * 2 + matrix;
    const auto codes = detail::allgather_size(comm, code);
    detail::guarded(comm, "DistArray::from_local", [&] {
      for (std::size_t c : codes)
        if (c != code || code == 0)
          throw InvalidArgument("veda::mpi::DistArray::from_local: the local parts must all be 1-D, or all 2-D "
                                "with the same number of columns (this rank's: " +
                                std::to_string(local.ndim()) + "-D, " + std::to_string(cols) + " columns)");
    });
    DistArray d(comm, detail::allgather_size(comm, matrix ? local.rows() : local.size()), cols, matrix, false);
    d.local_ = std::move(local);
    return d;
  }

  // `data` (read on the root only): rows x cols elements, rows = size / cols,
  // block-distributed. cols = 0 gives a 1-D array. Collective.
  static DistArray scatter(const Comm& comm, std::span<const T> data, std::size_t cols = 0, int root = 0) {
    check_root(comm, root, "scatter");
    unsigned long long shape[2] = {data.size(), cols};
    detail::check(MPI_Bcast(shape, 2, MPI_UNSIGNED_LONG_LONG, root, comm.native()), "MPI_Bcast");
    const std::size_t width = shape[1] ? shape[1] : 1;
    detail::guarded(comm, "DistArray::scatter", [&] {
      if (shape[0] % width)
        throw InvalidArgument("veda::mpi::DistArray::scatter: " + std::to_string(shape[0]) +
                              " elements are not whole rows of " + std::to_string(width));
    });
    DistArray d(comm, detail::block_rows(shape[0] / width, comm.size()), width, shape[1] != 0);
    const auto v = detail::vcounts(d.rows_, "scatter", d.cols_);
    detail::ElementType t(sizeof(T));
    detail::check(MPI_Scatterv(data.data(), v.n.data(), v.displ.data(), t.get(), d.local_.host().data(),
                               v.n[static_cast<std::size_t>(comm.rank())], t.get(), root, comm.native()),
                  "MPI_Scatterv");
    return d;
  }

  // The whole array in row-major order: on the root (empty elsewhere), or on
  // every rank. Collective.
  std::vector<T> gather(int root = 0) const {
    check_root(comm_, root, "gather");
    const auto v = detail::vcounts(rows_, "gather", cols_);
    std::vector<T> all(comm_.rank() == root ? size() : 0);
    detail::ElementType t(sizeof(T));
    detail::check(MPI_Gatherv(local_.host().data(), v.n[static_cast<std::size_t>(comm_.rank())], t.get(), all.data(),
                              v.n.data(), v.displ.data(), t.get(), root, comm_.native()),
                  "MPI_Gatherv");
    return all;
  }
  std::vector<T> allgather() const {
    const auto v = detail::vcounts(rows_, "allgather", cols_);
    std::vector<T> all(size());
    detail::ElementType t(sizeof(T));
    detail::check(MPI_Allgatherv(local_.host().data(), v.n[static_cast<std::size_t>(comm_.rank())], t.get(),
                                 all.data(), v.n.data(), v.displ.data(), t.get(), comm_.native()),
                  "MPI_Allgatherv");
    return all;
  }

  // The same data with `rows_per_rank` rows on each rank (their sum must be
  // rows(): else InvalidArgument). Collective.
  DistArray redistribute(const std::vector<std::size_t>& rows_per_rank) const {
    if (rows_per_rank.size() != static_cast<std::size_t>(comm_.size()) ||
        std::accumulate(rows_per_rank.begin(), rows_per_rank.end(), std::size_t{0}) != rows())
      throw InvalidArgument("veda::mpi::DistArray::redistribute: the new layout needs one row count per rank (" +
                            std::to_string(comm_.size()) + ") summing to " + std::to_string(rows()));
    auto scale = [&](const std::vector<std::size_t>& r) {
      std::vector<std::size_t> e(r);
      for (auto& x : e) x *= cols_;
      return e;
    };
    DistArray d(comm_, rows_per_rank, cols_, matrix_, false);
    d.local_ = detail::redistribute(comm_, local_, scale(rows_), scale(rows_per_rank), "DistArray::redistribute");
    if (matrix_) d.local_.reshape(rows_per_rank[static_cast<std::size_t>(comm_.rank())], cols_);
    return d;
  }
  DistArray block() const { return redistribute(detail::block_rows(rows(), comm_.size())); }

  // ---------------------------------------------------------------- layout
  const Comm& comm() const noexcept { return comm_; }
  bool is_matrix() const noexcept { return matrix_; }
  std::size_t rows() const noexcept { return row_off_.back(); }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t size() const noexcept { return rows() * cols_; }
  std::size_t local_rows(int rank) const { return rows_.at(static_cast<std::size_t>(rank)); }
  std::size_t row_offset(int rank) const { return row_off_.at(static_cast<std::size_t>(rank)); }
  std::size_t local_rows() const { return local_rows(comm_.rank()); }
  std::size_t row_offset() const { return row_offset(comm_.rank()); }
  std::size_t local_size() const { return local_rows() * cols_; }
  std::size_t offset() const { return row_offset() * cols_; }  // of the first local element
  const std::vector<std::size_t>& rows_per_rank() const noexcept { return rows_; }

  Array<T>& local() noexcept { return local_; }
  const Array<T>& local() const noexcept { return local_; }

 private:
  DistArray(const Comm& comm, std::vector<std::size_t> rows, std::size_t cols, bool matrix, bool allocate = true)
      : comm_(comm), cols_(cols), matrix_(matrix), rows_(std::move(rows)), row_off_(detail::offsets_of(rows_)) {
    if (allocate) local_ = shaped(std::vector<T>(local_size()), local_rows());
  }

  Array<T> shaped(std::vector<T> v, std::size_t local_rows) const {
    return matrix_ ? Array<T>(local_rows, cols_, std::move(v)) : Array<T>(std::move(v));
  }
  static void check_root(const Comm& c, int root, const char* op) {
    if (root < 0 || root >= c.size())
      throw InvalidArgument(std::string("veda::mpi::DistArray::") + op + ": root " + std::to_string(root) +
                            " is not a rank of a group of " + std::to_string(c.size()));
  }

  Comm comm_;
  std::size_t cols_;
  bool matrix_;
  std::vector<std::size_t> rows_, row_off_;
  Array<T> local_;
};

}  // namespace veda::mpi
