// veda/mpi/sort.hpp — sorting a 1-D DistArray across ranks.
//
//   veda::mpi::sort(keys);                          // ascending
//   veda::mpi::sort(keys, {.stable = true, .descending = true});
//
// Contract:
// - Afterwards, rank r's part holds the sorted keys of global positions
//   [offset(r), offset(r) + local_size(r)): the array is sorted as a whole
//   and keeps its distribution.
// - Keys and order as veda::sort (veda/sort.hpp): -0.0 equals +0.0, NaNs go
//   last. stable = true keeps equal keys in global order.
// - A sample sort: each rank sorts its part with veda::sort (placed per call,
//   so possibly on its GPU), the ranks pick p - 1 splitters from p regular
//   samples of every part, exchange keys with one MPI_Alltoallv, sort what
//   they received, and move it back to the original distribution. Equal
//   keys all go to one rank, so many duplicates load that rank more.
// - A 2-D DistArray is InvalidArgument on every rank, before any work.
//
// Thread-safety: collective (veda/mpi/comm.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "veda/mpi/dist_array.hpp"
#include "veda/sort.hpp"

namespace veda::mpi {

namespace detail {
// veda::sort's order: NaN after every number, either direction.
template <class K>
bool key_before(K a, K b, bool descending) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(b)) return !std::isnan(a);
    if (std::isnan(a)) return false;
  }
  return descending ? b < a : a < b;
}
}  // namespace detail

template <class K>
void sort(DistArray<K>& a, const SortOptions& o = {}) {
  if (a.is_matrix()) throw InvalidArgument("veda::mpi::sort: sorts 1-D DistArrays; this one is 2-D");
  const Comm& c = a.comm();
  const int p = c.size();
  detail::guarded(c, "sort", [&] { veda::sort(a.local(), o); });
  if (p == 1) return;

  auto before = [d = o.descending](K x, K y) { return detail::key_before(x, y, d); };
  const std::span<const K> mine = std::as_const(a.local()).host();
  std::vector<K> samples;
  for (int i = 0; i < p && !mine.empty(); ++i) samples.push_back(mine[static_cast<std::size_t>(i) * mine.size() / p]);
  std::vector<K> all = detail::allgather_values(c, samples, "sort");
  std::sort(all.begin(), all.end(), before);

  // Keys up to splitter j (inclusive) that no earlier splitter took go to rank j.
  std::vector<int> sc(p, 0), rc(p, 0), sd(p, 0), rd(p, 0);
  std::size_t from = 0;
  for (int j = 0; j < p; ++j) {
    std::size_t to = mine.size();
    if (j + 1 < p && !all.empty()) {
      const K split = all[static_cast<std::size_t>(j + 1) * all.size() / p];
      to = std::max(from, static_cast<std::size_t>(std::upper_bound(mine.begin(), mine.end(), split, before) - mine.begin()));
    }
    sc[j] = detail::to_count(to - from, "sort");
    sd[j] = detail::to_count(from, "sort");
    from = to;
  }
  detail::check(MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, c.native()), "MPI_Alltoall");
  std::size_t received = 0;
  for (int j = 0; j < p; ++j) {
    rd[j] = detail::to_count(received, "sort");
    received += static_cast<std::size_t>(rc[j]);
  }
  std::vector<K> bucket(received);
  detail::ElementType t(sizeof(K));
  detail::check(MPI_Alltoallv(mine.data(), sc.data(), sd.data(), t.get(), bucket.data(), rc.data(), rd.data(), t.get(),
                              c.native()),
                "MPI_Alltoallv");
  // Runs arrive in rank order, so a stable sort keeps equal keys in global order.
  Array<K> sorted(std::move(bucket));
  detail::guarded(c, "sort", [&] { veda::sort(sorted, o); });

  const auto bucket_sizes = detail::allgather_size(c, sorted.size());
  a.local() = Array<K>(detail::redistribute<K>(c, std::as_const(sorted).host(), bucket_sizes, a.rows_per_rank(), "sort"));
}

}  // namespace veda::mpi
