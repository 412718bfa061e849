#include "backends/cpu/transpose.hpp"

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>

namespace veda::detail::cpu {
namespace {
// Tiles of kBlock x kBlock, walked in Micro x Micro pieces. When a row of
// in or out is a multiple of 1 KiB long, the rows of a tile share few cache
// sets and 32 rows in flight overflowed an 8-way L1 (2x slower than a plain
// tiled loop at 256 and 4096 doubles): then pieces of 8 rows. Elsewhere
// whole 32 x 32 tiles were faster (1000, 4000; measured on an AVX2 EPYC).
constexpr std::size_t kBlock = 64;
// Elements are moved as unsigned words of their size; may_alias keeps that
// legal for whatever type the caller's bytes hold.
typedef std::uint8_t u8a __attribute__((may_alias));
typedef std::uint16_t u16a __attribute__((may_alias));
typedef std::uint32_t u32a __attribute__((may_alias));
typedef std::uint64_t u64a __attribute__((may_alias));

// How an element is stored: copied, or alpha v + beta o for float and
// double (beta 0: the old o is not read, it may hold NaN).
struct Copy {
  template <class U>
  void operator()(U& o, U v) const { o = v; }
};
template <class T>
struct Scale {
  T alpha, beta;
  void operator()(T& o, T v) const { o = beta == T(0) ? alpha * v : alpha * v + beta * o; }
};

template <std::size_t Micro, class U, class Store>
void tiles(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0,
           std::size_t c1, Store store) {
  for (std::size_t i0 = r0; i0 < r1; i0 += kBlock)
    for (std::size_t j0 = c0; j0 < c1; j0 += kBlock) {
      const std::size_t i1 = std::min(r1, i0 + kBlock), j1 = std::min(c1, j0 + kBlock);
      for (std::size_t im = i0; im < i1; im += Micro)
        for (std::size_t jm = j0; jm < j1; jm += Micro) {
          const std::size_t ie = std::min(i1, im + Micro), je = std::min(j1, jm + Micro);
          for (std::size_t i = im; i < ie; ++i)
            for (std::size_t j = jm; j < je; ++j) store(out[j * rows + i], in[i * cols + j]);
        }
    }
}

template <class U, class Store>
void block(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0,
           std::size_t c1, Store store) {
  const bool conflicts = (cols * sizeof(U)) % 1024 == 0 || (rows * sizeof(U)) % 1024 == 0;
  if (conflicts) tiles<8>(in, out, rows, cols, r0, r1, c0, c1, store);
  else tiles<32>(in, out, rows, cols, r0, r1, c0, c1, store);
}

template <class U, class Store = Copy>
void run(CpuExecutor* parallel, const void* in_v, void* out_v, std::size_t rows, std::size_t cols, Store store = {}) {
  const auto* in = static_cast<const U*>(in_v);
  auto* out = static_cast<U*>(out_v);
  if (!parallel) return block(in, out, rows, cols, 0, rows, 0, cols, store);
  parallel->execute([&] {
    tbb::parallel_for(tbb::blocked_range2d<std::size_t>(0, rows, 2 * kBlock, 0, cols, 2 * kBlock),
                      [&](const tbb::blocked_range2d<std::size_t>& r) {
                        block(in, out, rows, cols, r.rows().begin(), r.rows().end(), r.cols().begin(),
                              r.cols().end(), store);
                      });
  });
}
}  // namespace

void transpose(CpuExecutor* parallel, const void* in, void* out, std::size_t rows, std::size_t cols,
               std::size_t elem, double alpha, double beta) {
  if (rows == 0 || cols == 0) return;
  if (alpha != 1 || beta != 0) {
    if (elem == 4) return run<float>(parallel, in, out, rows, cols, Scale<float>{float(alpha), float(beta)});
    return run<double>(parallel, in, out, rows, cols, Scale<double>{alpha, beta});
  }
  switch (elem) {
    case 1: return run<u8a>(parallel, in, out, rows, cols);
    case 2: return run<u16a>(parallel, in, out, rows, cols);
    case 4: return run<u32a>(parallel, in, out, rows, cols);
    default: return run<u64a>(parallel, in, out, rows, cols);
  }
}

}  // namespace veda::detail::cpu
