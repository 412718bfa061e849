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
// - Every rank holding rows must hold at least `width` of them (else
//   InvalidArgument on every rank, before any transfer). Collective.
//
// Thread-safety: collective (veda/mpi/comm.hpp).
#pragma once

#include <string>

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
  const T* mine = a.local().host().data();
  detail::ElementType t(sizeof(T));
  const int count = detail::to_count(n, "exchange_halo");
  // My first rows go up while the rows below arrive, then the other way.
  detail::check(MPI_Sendrecv(mine, up == MPI_PROC_NULL ? 0 : count, t.get(), up, 0, h.below.host().data(),
                             down == MPI_PROC_NULL ? 0 : count, t.get(), down, 0, c.native(), MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
  detail::check(MPI_Sendrecv(holds ? mine + (a.local_size() - n) : mine, down == MPI_PROC_NULL ? 0 : count, t.get(),
                             down, 1, h.above.host().data(), up == MPI_PROC_NULL ? 0 : count, t.get(), up, 1,
                             c.native(), MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
  return h;
}

}  // namespace veda::mpi
