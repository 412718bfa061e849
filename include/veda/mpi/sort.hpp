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
// - Where MPI takes device pointers (cuda_aware()), a part that veda sorted
//   on a device is not brought home: its samples and bucket bounds are read
//   a key at a time ((p - 1) binary searches, each read a small copy), keys
//   leave from and arrive in device memory, and the result stays there.
// - A 2-D DistArray is InvalidArgument on every rank, before any work.
//
// Thread-safety: collective (veda/mpi/comm.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
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

// The first position in [lo, hi) of a sorted part whose key comes after
// `split`, reading keys through `at`.
template <class K, class At, class Before>
std::size_t upper_bound_at(std::size_t lo, std::size_t hi, K split, const At& at, const Before& before) {
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (before(split, at(mid))) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Sample sort's exchange for parts each sorted already: this rank's bucket
// (runs from every rank in rank order, not yet sorted as a whole). A part
// on a device stays there where MPI takes device pointers: the samples and
// the bucket bounds are read a key at a time ((p - 1) binary searches), the
// keys leave from and arrive in device memory. Collective.
template <class K>
Array<K> exchange_buckets(const Comm& c, const Array<K>& mine, const SortOptions& o) {
  const std::size_t p = static_cast<std::size_t>(c.size()), n = mine.size();
  int dev = -1;
  std::span<const K> host;
  auto at = [&](std::size_t i) {
    if (dev < 0) return host[i];
    K k;
    mine.read(i, std::span<K>(&k, 1));
    return k;
  };
  auto before = [d = o.descending](K x, K y) { return key_before(x, y, d); };
  // Each step that may fail (a device read) runs guarded: every rank learns
  // of a failure before the next collective.
  std::vector<K> samples;
  guarded(c, "sort", [&] {
    dev = mpi_device(mine);
    if (dev < 0) host = mine.host();
    for (std::size_t i = 0; i < p && n > 0; ++i) samples.push_back(at(i * n / p));
  });
  std::vector<K> all = allgather_values(c, samples, "sort");
  std::sort(all.begin(), all.end(), before);

  // Keys up to splitter j (inclusive) that no earlier splitter took go to rank j.
  Moves m(p);
  guarded(c, "sort", [&] {
    std::size_t from = 0;
    for (std::size_t j = 0; j < p; ++j) {
      std::size_t to = n;
      if (j + 1 < p && !all.empty()) to = upper_bound_at(from, n, all[(j + 1) * all.size() / p], at, before);
      m.send[j] = to_count(to - from, "sort");
      m.send_displ[j] = to_count(from, "sort");
      from = to;
    }
  });
  check(MPI_Alltoall(m.send.data(), 1, MPI_INT, m.recv.data(), 1, MPI_INT, c.native()), "MPI_Alltoall");
  std::size_t received = 0;
  for (std::size_t j = 0; j < p; ++j) {
    m.recv_displ[j] = to_count(received, "sort");
    received += static_cast<std::size_t>(m.recv[j]);
  }
  Array<K> bucket(received);
  const K* send = nullptr;
  K* recv = nullptr;
  guarded(c, "sort", [&] {
    send = send_address(mine, dev);
    recv = receive_address(bucket, dev);
  });
  alltoallv(c, send, m, recv);
  return bucket;
}
}  // namespace detail

template <class K>
void sort(DistArray<K>& a, const SortOptions& o = {}) {
  if (a.is_matrix()) throw InvalidArgument("veda::mpi::sort: sorts 1-D DistArrays; this one is 2-D");
  const Comm& c = a.comm();
  detail::guarded(c, "sort", [&] { veda::sort(a.local(), o); });
  if (c.size() == 1) return;
  Array<K> bucket = detail::exchange_buckets(c, std::as_const(a.local()), o);
  // Runs arrive in rank order, so a stable sort keeps equal keys in global order.
  detail::guarded(c, "sort", [&] { veda::sort(bucket, o); });
  a.local() = detail::redistribute(c, std::as_const(bucket), detail::allgather_size(c, bucket.size()),
                                   a.rows_per_rank(), "sort");
}

}  // namespace veda::mpi
