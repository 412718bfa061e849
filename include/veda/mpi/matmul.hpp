// veda/mpi/matmul.hpp — C = alpha A B over the ranks (SUMMA).
//
//   auto c = veda::mpi::matmul(a, b);   // a: [m, k], b: [k, n] 2-D DistArrays
//
// Contract:
// - A and B are 2-D DistArrays over the same group, any row distribution;
//   C comes back [m, n] block-distributed by rows. float or double.
//   MatmulOptions' alpha, placement and tier apply to every local product;
//   transpose_a/b and beta != 0 are InvalidArgument (there is no C to
//   scale), as are mismatched shapes: on every rank, before any work.
// - SUMMA on a near-square pr x pc process grid (MPI_Dims_create): A and B
//   move once into 2-D blocks; for each panel of k (cut where either
//   operand's blocks are cut, so at most pr + pc panels) the grid column
//   owning A's panel broadcasts it along grid rows, the grid row owning B's
//   panel broadcasts it along grid columns, and each rank adds the product
//   of the two into its block of C with veda::matmul_into (placed per call:
//   OpenBLAS, veda's tiled kernel, or its GPU). Where MPI takes device
//   pointers (cuda_aware()) and an operand block or C is on a device, whole
//   blocks are broadcast from there and panels received there. C's blocks
//   then move back to rows. The same grid sums in the same order on every
//   run; another rank count cuts other panels (results equal up to
//   rounding).
//
// Thread-safety: collective (veda/mpi/comm.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "veda/error.hpp"
#include "veda/matmul.hpp"
#include "veda/mpi/dist_array.hpp"

namespace veda::mpi {

namespace detail {

struct Rect {
  std::size_t r0, r1, c0, c1;
  std::size_t rows() const { return r1 > r0 ? r1 - r0 : 0; }
  std::size_t cols() const { return c1 > c0 ? c1 - c0 : 0; }
  std::size_t area() const { return rows() * cols(); }
  friend bool operator==(const Rect&, const Rect&) = default;
  Rect operator&(const Rect& o) const {
    return {std::max(r0, o.r0), std::max(std::max(r0, o.r0), std::min(r1, o.r1)), std::max(c0, o.c0),
            std::max(std::max(c0, o.c0), std::min(c1, o.c1))};
  }
};

// Moves a matrix between two distributions in which rank r owns rectangle
// from[r], then to[r] (row-major each). Collective.
template <class T>
std::vector<T> remap(const Comm& c, std::span<const T> mine, const std::vector<Rect>& from,
                     const std::vector<Rect>& to, const char* op) {
  const auto p = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
  const Rect& f = from[me];
  const Rect& t = to[me];
  std::vector<T> send;
  send.reserve(f.area());
  std::vector<int> sc(p), sd(p), rc(p), rd(p);
  std::size_t received = 0;
  for (std::size_t d = 0; d < p; ++d) {
    const Rect x = f & to[d];
    sd[d] = to_count(send.size(), op);
    for (std::size_t r = x.r0; r < x.r0 + x.rows(); ++r) {
      const T* row = mine.data() + (r - f.r0) * f.cols() + (x.c0 - f.c0);
      send.insert(send.end(), row, row + x.cols());
    }
    sc[d] = to_count(x.area(), op);
    const Rect y = from[d] & t;
    rd[d] = to_count(received, op);
    rc[d] = to_count(y.area(), op);
    received += y.area();
  }
  std::vector<T> got(received), out(t.area());
  ElementType et(sizeof(T));
  check(MPI_Alltoallv(send.data(), sc.data(), sd.data(), et.get(), got.data(), rc.data(), rd.data(), et.get(),
                      c.native()),
        "MPI_Alltoallv");
  for (std::size_t s = 0; s < p; ++s) {
    const Rect y = from[s] & t;
    const T* src = got.data() + rd[s];
    for (std::size_t r = y.r0; r < y.r0 + y.rows(); ++r, src += y.cols())
      std::copy(src, src + y.cols(), out.data() + (r - t.r0) * t.cols() + (y.c0 - t.c0));
  }
  return out;
}

// Rank r's rows of a row-distributed matrix as a rectangle.
std::vector<Rect> row_rects(const std::vector<std::size_t>& rows, std::size_t cols);
// Rank (i, j) = i * pc + j of a grid owns rows block i, columns block j.
std::vector<Rect> grid_rects(const std::vector<std::size_t>& row_off, const std::vector<std::size_t>& col_off,
                             int pc);

// A communicator freed on destruction.
class OwnedComm {
 public:
  OwnedComm(const Comm& parent, int color, int key);
  ~OwnedComm();
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm get() const noexcept { return c_; }

 private:
  MPI_Comm c_ = MPI_COMM_NULL;
};

}  // namespace detail

template <class T>
DistArray<T> matmul(const DistArray<T>& a, const DistArray<T>& b, const MatmulOptions& o = {}) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "veda::mpi::matmul takes float or double");
  const Comm& c = a.comm();
  if (!a.is_matrix() || !b.is_matrix() || a.cols() != b.rows() || c.size() != b.comm().size())
    throw InvalidArgument("veda::mpi::matmul: needs 2-D [m, k] and [k, n] DistArrays over one group; got [" +
                          std::to_string(a.rows()) + ", " + std::to_string(a.cols()) + "] and [" +
                          std::to_string(b.rows()) + ", " + std::to_string(b.cols()) + "]");
  if (o.transpose_a || o.transpose_b || o.beta != 0)
    throw InvalidArgument("veda::mpi::matmul: transpose_a, transpose_b and beta are not supported");
  const std::size_t m = a.rows(), k = a.cols(), n = b.cols();
  int dims[2] = {0, 0};
  detail::check(MPI_Dims_create(c.size(), 2, dims), "MPI_Dims_create");
  const int pr = dims[0], pc = dims[1], gi = c.rank() / pc, gj = c.rank() % pc;
  const auto mo = detail::offsets_of(detail::block_rows(m, pr)), no = detail::offsets_of(detail::block_rows(n, pc));
  const auto ka = detail::offsets_of(detail::block_rows(k, pc)), kb = detail::offsets_of(detail::block_rows(k, pr));
  const std::size_t my_m = mo[gi + 1] - mo[gi], my_n = no[gj + 1] - no[gj];
  const std::size_t my_ka = ka[gj + 1] - ka[gj], my_kb = kb[gi + 1] - kb[gi];
  // Each operand as its grid block: the rank's own Array where its rows
  // already are that block (one rank, or a grid of one column), else moved.
  Array<T> a_moved, b_moved;
  auto blocked = [&](const DistArray<T>& x, const std::vector<detail::Rect>& grid, std::size_t rows, std::size_t cols,
                     Array<T>& moved) -> const Array<T>& {
    const auto mine = detail::row_rects(x.rows_per_rank(), x.cols());
    if (mine == grid) return x.local();
    moved = Array<T>(rows, cols, detail::remap<T>(c, x.local().host(), mine, grid, "matmul"));
    return moved;
  };
  const Array<T>& ab = blocked(a, detail::grid_rects(mo, ka, pc), my_m, my_ka, a_moved);
  const Array<T>& bb = blocked(b, detail::grid_rects(kb, no, pc), my_kb, my_n, b_moved);
  detail::OwnedComm row(c, gi, gj), col(c, gj, gi);

  std::vector<std::size_t> cuts(ka);
  cuts.insert(cuts.end(), kb.begin(), kb.end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  Array<T> cl(my_m, my_n);
  bool first = true;
  detail::ElementType et(sizeof(T));
  // The owner sends its block itself when the panel is all of it, else a
  // copy of the panel. Where MPI takes device pointers and the local
  // products' data is on a device (`dev`), whole blocks go from there and
  // panels arrive there; a panel cut from a block is packed on the host.
  auto bcast = [&](const Array<T>& block, bool owner, bool whole, Array<T>& buf, auto&& pack, int root,
                   MPI_Comm comm, int dev) -> const Array<T>* {
    if (owner && whole) {
      const T* from = dev >= 0 && block.valid_on_device(dev) ? block.device_data(dev) : block.host().data();
      detail::check(MPI_Bcast(const_cast<T*>(from), detail::to_count(block.size(), "matmul"), et.get(), root, comm),
                    "MPI_Bcast");
      return &block;
    }
    if (owner) pack(buf.host().data());
    T* into = owner ? buf.host().data() : detail::receive_address(buf, dev);
    detail::check(MPI_Bcast(into, detail::to_count(buf.size(), "matmul"), et.get(), root, comm), "MPI_Bcast");
    return &buf;
  };
  const bool device_pointers = detail::pass_device_pointers();
  for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
    const std::size_t k0 = cuts[s], w = cuts[s + 1] - k0;
    const int ja = static_cast<int>(std::upper_bound(ka.begin(), ka.end(), k0) - ka.begin()) - 1;
    const int ib = static_cast<int>(std::upper_bound(kb.begin(), kb.end(), k0) - kb.begin()) - 1;
    const bool a_whole = w == ka[ja + 1] - ka[ja], b_whole = w == kb[ib + 1] - kb[ib];
    Array<T> a_buf, b_buf;
    if (gj != ja || !a_whole) a_buf = Array<T>(my_m, w);
    if (gi != ib || !b_whole) b_buf = Array<T>(w, my_n);
    int dev = -1;
    if (device_pointers)
      for (const Array<T>* x : std::array<const Array<T>*, 3>{&cl, &ab, &bb})
        if (dev < 0 && x->valid_on_device()) dev = x->device();
    const Array<T>* ap = bcast(ab, gj == ja, a_whole, a_buf, [&](T* to) {
      const T* from = ab.host().data() + (k0 - ka[ja]);
      for (std::size_t r = 0; r < my_m; ++r) std::copy_n(from + r * my_ka, w, to + r * w);
    }, ja, row.get(), dev);
    const Array<T>* bp = bcast(bb, gi == ib, b_whole, b_buf, [&](T* to) {
      std::copy_n(bb.host().data() + (k0 - kb[ib]) * my_n, w * my_n, to);
    }, ib, col.get(), dev);
    detail::guarded(c, "matmul", [&] {
      if (my_m == 0 || my_n == 0) return;
      MatmulOptions local = o;
      local.beta = first ? 0 : 1;
      matmul_into(cl, *ap, *bp, local);
    });
    first = false;
  }
  // Back to block rows over all ranks (nothing moves where C's blocks are rows already).
  const auto c_rows = detail::block_rows(m, c.size());
  const auto c_grid = detail::grid_rects(mo, no, pc), c_mine = detail::row_rects(c_rows, n);
  Array<T> out = c_grid == c_mine ? std::move(cl)
                                  : Array<T>(c_rows[static_cast<std::size_t>(c.rank())], n,
                                             detail::remap<T>(c, std::as_const(cl).host(), c_grid, c_mine, "matmul"));
  return DistArray<T>::from_local(c, std::move(out));
}

}  // namespace veda::mpi
