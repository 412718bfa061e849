// veda/mpi/halo.hpp — the neighbouring rows of a row-distributed DistArray.
//
//   auto h = veda::mpi::exchange_halo(u, 1);   // h.above: [1, cols], h.below: [1, cols]
//   // a stencil reads row -1 from h.above and row local_rows() from h.below
//
// Contract:
// - above holds the `width` global rows just before this rank's first row,
//   below the `width` rows just after its last ([width, cols] Arrays); at the
//   top and bottom of the global array (and on a rank holding no rows) they
//   have 0 rows. Ranks holding no rows are skipped: the neighbours are the
//   nearest ranks that hold some.
// - A local part on a device stays there: with an MPI that takes device
//   pointers (cuda_aware()) the rows go from and into device memory (above
//   and below are then on that device), else only the rows sent cross to
//   the host (Array::read).
// - Every rank holding rows must hold at least `width` of them (else
//   InvalidArgument on every rank, before any transfer). Collective.
//
// Thread-safety: collective (veda/mpi/comm.hpp).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "veda/mpi/dist_array.hpp"

namespace veda::mpi {

template <class T>
struct Halo {
  Array<T> above;
  Array<T> below;
};

template <class T>
Halo<T> exchange_halo(const DistArray<T>& a, std::size_t width = 1) {
  const Comm& c = a.comm();
  const int me = c.rank();
  for (int r = 0; r < c.size(); ++r)
    if (a.local_rows(r) != 0 && a.local_rows(r) < width)
      throw InvalidArgument("veda::mpi::exchange_halo: rank " + std::to_string(r) + " holds " +
                            std::to_string(a.local_rows(r)) + " rows, fewer than the halo width " +
                            std::to_string(width));
  auto neighbour = [&](int step) {
    for (int r = me + step; r >= 0 && r < c.size(); r += step)
      if (a.local_rows(r)) return r;
    return MPI_PROC_NULL;
  };
  const bool holds = a.local_rows() != 0;
  const int up = holds ? neighbour(-1) : MPI_PROC_NULL, down = holds ? neighbour(1) : MPI_PROC_NULL;
  const std::size_t cols = a.cols(), n = width * cols;
  Halo<T> h{Array<T>(up == MPI_PROC_NULL ? 0 : width, cols), Array<T>(down == MPI_PROC_NULL ? 0 : width, cols)};
  const Array<T>& local = a.local();
  const std::size_t n_up = up == MPI_PROC_NULL ? 0 : n, n_down = down == MPI_PROC_NULL ? 0 : n;
  // From a local part on a device: straight from and into device memory
  // where MPI takes device pointers, else only the rows that leave cross to
  // the host. A failure here reaches every rank before any transfer.
  std::vector<T> staged;
  const T *first = nullptr, *last = nullptr;
  T *above = nullptr, *below = nullptr;
  detail::guarded(c, "exchange_halo", [&] {
    if (const int dev = detail::mpi_device(local); dev >= 0) {
      first = detail::send_address(local, dev);
      last = first + (local.size() - n_down);
      above = detail::receive_address(h.above, dev);
      below = detail::receive_address(h.below, dev);
      return;
    }
    staged.resize(n_up + n_down);
    local.read(0, std::span<T>(staged.data(), n_up));
    local.read(local.size() - n_down, std::span<T>(staged.data() + n_up, n_down));
    first = staged.data();
    last = staged.data() + n_up;
    above = h.above.host().data();
    below = h.below.host().data();
  });
  detail::ElementType t(sizeof(T));
  const int count = detail::to_count(n, "exchange_halo");
  // My first rows go up while the rows below arrive, then the other way.
  detail::check(MPI_Sendrecv(first, n_up ? count : 0, t.get(), up, 0, below, n_down ? count : 0, t.get(), down, 0,
                             c.native(), MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
  detail::check(MPI_Sendrecv(last, n_down ? count : 0, t.get(), down, 1, above, n_up ? count : 0, t.get(), up, 1,
                             c.native(), MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
  return h;
}

}  // namespace veda::mpi
