// veda::mpi::matmul's layouts and grid communicators.
#include "veda/mpi/matmul.hpp"

namespace veda::mpi::detail {

std::vector<Rect> row_rects(const std::vector<std::size_t>& rows, std::size_t cols) {
  const auto off = offsets_of(rows);
  std::vector<Rect> out;
  for (std::size_t r = 0; r < rows.size(); ++r) out.push_back({off[r], off[r + 1], 0, cols});
  return out;
}

std::vector<Rect> grid_rects(const std::vector<std::size_t>& row_off, const std::vector<std::size_t>& col_off,
                             int pc) {
  std::vector<Rect> out;
  const std::size_t pr = row_off.size() - 1;
  for (std::size_t i = 0; i < pr; ++i)
    for (std::size_t j = 0; j < static_cast<std::size_t>(pc); ++j)
      out.push_back({row_off[i], row_off[i + 1], col_off[j], col_off[j + 1]});
  return out;
}

OwnedComm::OwnedComm(const Comm& parent, int color, int key) {
  check(MPI_Comm_split(parent.native(), color, key, &c_), "MPI_Comm_split");
}
OwnedComm::~OwnedComm() {
  if (c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);
}

}  // namespace veda::mpi::detail
