#include "backends/cpu/transpose.hpp"

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

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

// Where the CPU has AVX, 8-byte elements move in 4 x 4 register tiles: 4
// loads, 8 shuffles and 4 stores for 16 elements, against 16 loads and 16
// stores one by one (B += A^T at 250^2 doubles: 20 us vs 27). GCC's vector
// type rather than intrinsics, so that one walker compiles for either target.
using Quad = double __attribute__((vector_size(32)));
// Read and written through an unaligned, may_alias twin: one load or store
// each (memcpy into an array of them went through the stack, 16 bytes at a
// time).
typedef double QuadU __attribute__((vector_size(32), aligned(8), may_alias));
[[gnu::always_inline]] inline const QuadU& quad_at(const void* p) { return *static_cast<const QuadU*>(p); }
[[gnu::always_inline]] inline QuadU& quad_at(void* p) { return *static_cast<QuadU*>(p); }

// How an element (or a row of a register tile) is stored: copied, or
// alpha v + beta o for float and double (beta 0: the old o is not read, it
// may hold NaN). The vector form rounds as the scalar one does (no FMA).
struct Copy {
  template <class U>
  void operator()(U& o, U v) const { o = v; }
  [[gnu::always_inline]] void vec(void* o, const Quad& v) const { quad_at(o) = v; }
};
template <class T>
struct Scale {
  T alpha, beta;
  void operator()(T& o, T v) const { o = beta == T(0) ? alpha * v : alpha * v + beta * o; }
  [[gnu::always_inline]] void vec(void* o, const Quad& v) const {
    quad_at(o) = beta == T(0) ? alpha * v : alpha * v + beta * quad_at(o);
  }
};

// out rows j..j+3, columns i..i+3 from in rows i..i+3, columns j..j+3.
template <class U, class Store>
[[gnu::always_inline]] inline void quad(const U* in, U* out, std::size_t rows, std::size_t cols, Store store) {
  const Quad r0 = quad_at(in), r1 = quad_at(in + cols), r2 = quad_at(in + 2 * cols), r3 = quad_at(in + 3 * cols);
  const Quad lo01 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6), hi01 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
  const Quad lo23 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6), hi23 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
  store.vec(out, __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5));
  store.vec(out + rows, __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5));
  store.vec(out + 2 * rows, __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7));
  store.vec(out + 3 * rows, __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7));
}

// How a piece is walked: element by element, or in register tiles with in's
// rows outer (reads in order) or out's rows outer (writes in order).
enum class Order { Elements, InRows, OutRows };

template <std::size_t Micro, Order W, class U, class Store>
[[gnu::always_inline]] inline void tiles(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0,
                                         std::size_t r1, std::size_t c0, std::size_t c1, Store store) {
  for (std::size_t i0 = r0; i0 < r1; i0 += kBlock)
    for (std::size_t j0 = c0; j0 < c1; j0 += kBlock) {
      const std::size_t i1 = std::min(r1, i0 + kBlock), j1 = std::min(c1, j0 + kBlock);
      for (std::size_t im = i0; im < i1; im += Micro)
        for (std::size_t jm = j0; jm < j1; jm += Micro) {
          const std::size_t ie = std::min(i1, im + Micro), je = std::min(j1, jm + Micro);
          std::size_t iv = im, jv = jm;  // [im, iv) x [jm, jv): the register tiles' part
          if constexpr (W != Order::Elements) {
            iv += (ie - im) / 4 * 4;
            jv += (je - jm) / 4 * 4;
            if constexpr (W == Order::InRows) {
              for (std::size_t i = im; i < iv; i += 4)
                for (std::size_t j = jm; j < jv; j += 4) quad(in + i * cols + j, out + j * rows + i, rows, cols, store);
            } else {
              for (std::size_t j = jm; j < jv; j += 4)
                for (std::size_t i = im; i < iv; i += 4) quad(in + i * cols + j, out + j * rows + i, rows, cols, store);
            }
          }
          for (std::size_t i = im; i < iv; ++i)
            for (std::size_t j = jv; j < je; ++j) store(out[j * rows + i], in[i * cols + j]);
          for (std::size_t i = iv; i < ie; ++i)
            for (std::size_t j = jm; j < je; ++j) store(out[j * rows + i], in[i * cols + j]);
        }
    }
}

// The walk of a whole call, chosen once from its shape (see walk_for).
enum class Walk { Tiles, Pieces, QuadsInRows, QuadsOutRows };

template <class U, class Store>
void tiles_baseline(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1,
                    std::size_t c0, std::size_t c1, Store store, Walk w) {
  if (w == Walk::Pieces) tiles<8, Order::Elements>(in, out, rows, cols, r0, r1, c0, c1, store);
  else tiles<32, Order::Elements>(in, out, rows, cols, r0, r1, c0, c1, store);
}

template <class U, class Store>
[[gnu::target("avx")]] void tiles_avx(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0,
                                      std::size_t r1, std::size_t c0, std::size_t c1, Store store, Walk w) {
  if (w == Walk::QuadsInRows) tiles<32, Order::InRows>(in, out, rows, cols, r0, r1, c0, c1, store);
  else tiles<32, Order::OutRows>(in, out, rows, cols, r0, r1, c0, c1, store);
}

template <class U, class Store>
void block(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0,
           std::size_t c1, Store store, Walk w) {
  if constexpr (sizeof(U) == 8)
    if (w == Walk::QuadsInRows || w == Walk::QuadsOutRows)
      return tiles_avx(in, out, rows, cols, r0, r1, c0, c1, store, w);
  tiles_baseline(in, out, rows, cols, r0, r1, c0, c1, store, w);
}

// Measured on 8-byte elements (Intel Xeon model 167; 180-4096 doubles):
// register tiles always win when the old out is read (out's rows outer where
// rows conflict: 256^2 30 us vs 46); a plain copy gains from them only while
// in and out fit in one core's L2 (beyond it, 10-20% slower than elements).
template <class U, class Store>
Walk walk_for(std::size_t rows, std::size_t cols) {
  const bool conflicts = (cols * sizeof(U)) % 1024 == 0 || (rows * sizeof(U)) % 1024 == 0;
  static const bool avx = __builtin_cpu_supports("avx");
  static const std::size_t l2 = [] {
    const long s = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return s > 0 ? std::size_t(s) : std::size_t(1) << 20;
  }();
  if (sizeof(U) == 8 && avx) {
    if (!std::is_same_v<Store, Copy>) return conflicts ? Walk::QuadsOutRows : Walk::QuadsInRows;
    if (2 * rows * cols * sizeof(U) <= l2) return Walk::QuadsOutRows;
  }
  return conflicts ? Walk::Pieces : Walk::Tiles;
}

template <class U, class Store = Copy>
void run(CpuExecutor* parallel, const void* in_v, void* out_v, std::size_t rows, std::size_t cols, Store store = {}) {
  const auto* in = static_cast<const U*>(in_v);
  auto* out = static_cast<U*>(out_v);
  const Walk w = walk_for<U, Store>(rows, cols);
  if (!parallel) return block(in, out, rows, cols, 0, rows, 0, cols, store, w);
  parallel->execute([&] {
    tbb::parallel_for(tbb::blocked_range2d<std::size_t>(0, rows, 2 * kBlock, 0, cols, 2 * kBlock),
                      [&](const tbb::blocked_range2d<std::size_t>& r) {
                        block(in, out, rows, cols, r.rows().begin(), r.rows().end(), r.cols().begin(),
                              r.cols().end(), store, w);
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
