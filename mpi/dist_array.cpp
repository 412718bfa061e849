// DistArray's layouts: block rows, offsets, every rank's count.
#include "veda/mpi/dist_array.hpp"

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

}  // namespace veda::mpi::detail
