// DistArray's layouts: block rows, offsets, every rank's count, the moves
// between two layouts.
#include "veda/mpi/dist_array.hpp"

#include <algorithm>
#include <utility>

namespace veda::mpi::detail {

std::vector<std::size_t> block_rows(std::size_t rows, int ranks) {
  const auto p = static_cast<std::size_t>(ranks);
  std::vector<std::size_t> r(p, rows / p);
  for (std::size_t i = 0; i < rows % p; ++i) ++r[i];
  return r;
}

std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> o(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) o[i + 1] = o[i] + counts[i];
  return o;
}

std::vector<std::size_t> allgather_size(const Comm& c, std::size_t mine) {
  std::vector<unsigned long long> all(static_cast<std::size_t>(c.size()));
  const unsigned long long m = mine;
  check(MPI_Allgather(&m, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, c.native()),
        "MPI_Allgather");
  return {all.begin(), all.end()};
}

VCounts vcounts(const std::vector<std::size_t>& counts, const char* op, std::size_t scale) {
  VCounts v;
  std::size_t off = 0;
  for (std::size_t c : counts) {
    v.n.push_back(to_count(c * scale, op));
    v.displ.push_back(to_count(off, op));
    off += c * scale;
  }
  return v;
}

Moves moves_between(const Comm& c, const std::vector<std::size_t>& from, const std::vector<std::size_t>& to,
                    const char* op) {
  const std::size_t p = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
  const auto fo = offsets_of(from), to_off = offsets_of(to);
  auto overlap = [](std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) {
    return std::pair{std::max(a0, b0), std::max(std::max(a0, b0), std::min(a1, b1))};
  };
  Moves m(p);
  for (std::size_t r = 0; r < p; ++r) {
    const auto [s0, s1] = overlap(fo[me], fo[me + 1], to_off[r], to_off[r + 1]);  // mine that r gets
    m.send[r] = to_count(s1 - s0, op);
    m.send_displ[r] = to_count(s0 - fo[me], op);
    const auto [r0, r1] = overlap(fo[r], fo[r + 1], to_off[me], to_off[me + 1]);  // r's that I get
    m.recv[r] = to_count(r1 - r0, op);
    m.recv_displ[r] = to_count(r0 - to_off[me], op);
  }
  return m;
}

}  // namespace veda::mpi::detail
