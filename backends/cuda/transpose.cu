#include "backends/cuda/transpose.hpp"

#include <cstdint>

#include "backends/cuda/cuda_check.hpp"

namespace veda::detail::cuda {
namespace {
constexpr int kTile = 32, kRows = 8;

// Scaled: out = alpha in^T + beta out (beta 0: out is not read).
template <class W, bool Scaled>
__global__ void transpose_tiles(const W* in, W* out, std::size_t rows, std::size_t cols, W alpha, W beta) {
  __shared__ W tile[kTile][kTile + 1];  // +1: the column reads hit different banks
  // Grid x walks column tiles, grid z * y row tiles (y is limited to 65535).
  const std::size_t tile_row = (static_cast<std::size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * kTile;
  const std::size_t tile_col = static_cast<std::size_t>(blockIdx.x) * kTile;
  for (int r = threadIdx.y; r < kTile; r += kRows) {
    const std::size_t i = tile_row + r, j = tile_col + threadIdx.x;
    if (i < rows && j < cols) tile[r][threadIdx.x] = in[i * cols + j];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += kRows) {
    const std::size_t j = tile_col + r, i = tile_row + threadIdx.x;  // out row j, column i
    if (i >= rows || j >= cols) continue;
    W& o = out[j * rows + i];
    if constexpr (Scaled) o = beta == W(0) ? alpha * tile[threadIdx.x][r] : alpha * tile[threadIdx.x][r] + beta * o;
    else o = tile[threadIdx.x][r];
  }
}

template <class W, bool Scaled = false>
void launch(const void* in, void* out, std::size_t rows, std::size_t cols, cudaStream_t s, double alpha = 1,
            double beta = 0) {
  const std::size_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  if (col_tiles > 0x7fffffffu) throw InvalidArgument("veda::transpose: too many columns for the GPU tier");
  const std::size_t y = std::min<std::size_t>(row_tiles, 65535), z = (row_tiles + y - 1) / y;
  transpose_tiles<W, Scaled>
      <<<dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(y), static_cast<unsigned>(z)), dim3(kTile, kRows),
         0, s>>>(static_cast<const W*>(in), static_cast<W*>(out), rows, cols, static_cast<W>(alpha),
                 static_cast<W>(beta));
  launched("transpose kernel");
}
}  // namespace

void transpose_device(const void* in, void* out, std::size_t rows, std::size_t cols, std::size_t elem,
                      cudaStream_t s, double alpha, double beta) {
  if (rows == 0 || cols == 0) return;
  if (alpha != 1 || beta != 0) {
    if (elem == 4) return launch<float, true>(in, out, rows, cols, s, alpha, beta);
    return launch<double, true>(in, out, rows, cols, s, alpha, beta);
  }
  switch (elem) {
    case 1: return launch<std::uint8_t>(in, out, rows, cols, s);
    case 2: return launch<std::uint16_t>(in, out, rows, cols, s);
    case 4: return launch<std::uint32_t>(in, out, rows, cols, s);
    default: return launch<std::uint64_t>(in, out, rows, cols, s);
  }
}

}  // namespace veda::detail::cuda
