#include "backends/cpu/transpose.hpp"

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/cpu_isa.hpp"

namespace veda::detail::cpu {
namespace {
// Tiles of kBlock x kBlock, walked in Micro x Micro pieces: 32 x 32 pieces
// of register tiles for 4- and 8-byte elements; for 1- and 2-byte ones,
// element by element, in 8 x 8 pieces when a row of in or out is a multiple
// of 1 KiB long (the rows of a tile then share few cache sets and 32 rows in
// flight overflowed an 8-way L1: 2x slower than a plain tiled loop at 256
// and 4096 doubles, before register tiles), else 32 x 32 (faster at 1000
// and 4000; measured on an AVX2 EPYC).
constexpr std::size_t kBlock = 64;
// Elements are moved as unsigned words of their size; may_alias keeps that
// legal for whatever type the caller's bytes hold.
typedef std::uint8_t u8a __attribute__((may_alias));
typedef std::uint16_t u16a __attribute__((may_alias));
typedef std::uint32_t u32a __attribute__((may_alias));
typedef std::uint64_t u64a __attribute__((may_alias));

// 8- and 4-byte elements move in register tiles: 4 x 4 and 8 x 8 in AVX's
// 32-byte registers, 2 x 2 and 4 x 4 in SSE2's 16-byte ones. For 16
// doubles in AVX: 4 loads, 8 shuffles and 4 stores against 16 loads and 16
// stores one by one (B += A^T at 250^2 doubles: 20 us vs 27). GCC's vector
// types rather than intrinsics, so that one walker compiles for either
// target; read and written through unaligned, may_alias twins, one load or
// store each (memcpy into an array of registers went through the stack, 16
// bytes at a time).
template <std::size_t Bytes, std::size_t Width>
struct Regs {
  using Lane = std::conditional_t<Bytes == 8, double, float>;
  typedef Lane V __attribute__((vector_size(Width)));
  typedef Lane VU __attribute__((vector_size(Width), aligned(Bytes), may_alias));
};
template <std::size_t Bytes, std::size_t Width>
[[gnu::always_inline]] inline const typename Regs<Bytes, Width>::VU& reg_at(const void* p) {
  return *static_cast<const typename Regs<Bytes, Width>::VU*>(p);
}
template <std::size_t Bytes, std::size_t Width>
[[gnu::always_inline]] inline typename Regs<Bytes, Width>::VU& reg_at(void* p) {
  return *static_cast<typename Regs<Bytes, Width>::VU*>(p);
}

// How an element (or a row of a register tile) is stored: copied, or
// alpha v + beta o for float and double (beta 0: the old o is not read, it
// may hold NaN). The vector form rounds as the scalar one does (no FMA).
struct Copy {
  template <class U>
  void operator()(U& o, U v) const { o = v; }
  template <class V>
  [[gnu::always_inline]] void vec(void* o, const V& v) const { reg_at<sizeof(v[0]), sizeof(V)>(o) = v; }
};
template <class T>
struct Scale {
  T alpha, beta;
  void operator()(T& o, T v) const { o = beta == T(0) ? alpha * v : alpha * v + beta * o; }
  template <class V>
  [[gnu::always_inline]] void vec(void* o, const V& v) const {
    auto& r = reg_at<sizeof(T), sizeof(V)>(o);
    r = beta == T(0) ? alpha * v : alpha * v + beta * r;
  }
};

// The register tile at in row i, column j: out rows j.., columns i.., as
// many of each as a register of Width bytes holds elements.
template <std::size_t Width, class U, class Store>
[[gnu::always_inline]] inline void reg_tile(const U* in, U* out, std::size_t rows, std::size_t cols, Store store) {
  using V = typename Regs<sizeof(U), Width>::V;
  using VU = typename Regs<sizeof(U), Width>::VU;  // named: auto would deduce V's alignment
  const auto row = [&](std::size_t k) -> const VU& { return reg_at<sizeof(U), Width>(in + k * cols); };
  if constexpr (sizeof(U) == 8 && Width == 16) {
    const V r0 = row(0), r1 = row(1);
    store.vec(out, __builtin_shufflevector(r0, r1, 0, 2));
    store.vec(out + rows, __builtin_shufflevector(r0, r1, 1, 3));
  } else if constexpr (sizeof(U) == 8 || Width == 16) {
    // Four rows of four: pairs of rows interleaved, then pairs of pairs.
    const V r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
    const V lo01 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6), hi01 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
    const V lo23 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6), hi23 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
    store.vec(out, __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5));
    store.vec(out + rows, __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5));
    store.vec(out + 2 * rows, __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7));
    store.vec(out + 3 * rows, __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7));
  } else {
    // Pairs of rows interleaved, then pairs of pairs: u[q] holds columns q
    // and q + 4 of four rows (rows 0-3 for q < 4, 4-7 above), whose halves
    // are out's rows.
    V u[8];
    for (std::size_t h = 0; h < 2; ++h) {
      const V a = row(4 * h), b = row(4 * h + 1), c = row(4 * h + 2), d = row(4 * h + 3);
      const V ab_lo = __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13);
      const V ab_hi = __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15);
      const V cd_lo = __builtin_shufflevector(c, d, 0, 8, 1, 9, 4, 12, 5, 13);
      const V cd_hi = __builtin_shufflevector(c, d, 2, 10, 3, 11, 6, 14, 7, 15);
      u[4 * h] = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 8, 9, 4, 5, 12, 13);
      u[4 * h + 1] = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 10, 11, 6, 7, 14, 15);
      u[4 * h + 2] = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 8, 9, 4, 5, 12, 13);
      u[4 * h + 3] = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (std::size_t q = 0; q < 4; ++q) {
      store.vec(out + q * rows, __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11));
      store.vec(out + (q + 4) * rows, __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15));
    }
  }
}

// How a call walks its cache blocks, chosen once from its shape (walk_for):
// element by element in 32 x 32 pieces (8 x 8 where rows conflict), or in
// register tiles with in's rows outer (reads in order) or out's rows outer
// (writes in order).
enum class Walk { Tiles, Pieces, RegsInRows, RegsOutRows };

template <Walk W, std::size_t Width, class U, class Store>
[[gnu::always_inline]] inline void tiles(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0,
                                         std::size_t r1, std::size_t c0, std::size_t c1, Store store) {
  constexpr std::size_t Micro = W == Walk::Pieces ? 8 : 32;
  for (std::size_t i0 = r0; i0 < r1; i0 += kBlock)
    for (std::size_t j0 = c0; j0 < c1; j0 += kBlock) {
      const std::size_t i1 = std::min(r1, i0 + kBlock), j1 = std::min(c1, j0 + kBlock);
      for (std::size_t im = i0; im < i1; im += Micro)
        for (std::size_t jm = j0; jm < j1; jm += Micro) {
          const std::size_t ie = std::min(i1, im + Micro), je = std::min(j1, jm + Micro);
          std::size_t iv = im, jv = jm;  // [im, iv) x [jm, jv): the register tiles' part
          if constexpr (W == Walk::RegsInRows || W == Walk::RegsOutRows) {
            constexpr std::size_t R = Width / sizeof(U);  // a register tile's rows and columns
            iv += (ie - im) / R * R;
            jv += (je - jm) / R * R;
            const auto tile = [&](std::size_t i, std::size_t j) {
              reg_tile<Width>(in + i * cols + j, out + j * rows + i, rows, cols, store);
            };
            if constexpr (W == Walk::RegsInRows) {
              for (std::size_t i = im; i < iv; i += R)
                for (std::size_t j = jm; j < jv; j += R) tile(i, j);
            } else {
              for (std::size_t j = jm; j < jv; j += R)
                for (std::size_t i = im; i < iv; i += R) tile(i, j);
            }
          }
          for (std::size_t i = im; i < iv; ++i)
            for (std::size_t j = jv; j < je; ++j) store(out[j * rows + i], in[i * cols + j]);
          for (std::size_t i = iv; i < ie; ++i)
            for (std::size_t j = jm; j < je; ++j) store(out[j * rows + i], in[i * cols + j]);
        }
    }
}

// The walks, compiled for the baseline target (16-byte registers) and for
// AVX (32-byte ones).
template <class U, class Store>
void tiles_baseline(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1,
                    std::size_t c0, std::size_t c1, Store store, Walk w) {
  if constexpr (sizeof(U) >= 4) {
    if (w == Walk::RegsInRows) tiles<Walk::RegsInRows, 16>(in, out, rows, cols, r0, r1, c0, c1, store);
    else tiles<Walk::RegsOutRows, 16>(in, out, rows, cols, r0, r1, c0, c1, store);
  } else {
    if (w == Walk::Pieces) tiles<Walk::Pieces, 16>(in, out, rows, cols, r0, r1, c0, c1, store);
    else tiles<Walk::Tiles, 16>(in, out, rows, cols, r0, r1, c0, c1, store);
  }
}

template <class U, class Store>
[[gnu::target("avx")]] void tiles_avx(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0,
                                      std::size_t r1, std::size_t c0, std::size_t c1, Store store, Walk w) {
  if (w == Walk::RegsInRows) tiles<Walk::RegsInRows, 32>(in, out, rows, cols, r0, r1, c0, c1, store);
  else tiles<Walk::RegsOutRows, 32>(in, out, rows, cols, r0, r1, c0, c1, store);
}

// Copies move in 16-byte registers whatever the CPU has: at every order from
// 250 to 4096, a copy took 0.16-0.90x a 32 x 32 tiled loop's time in 2 x 2
// doubles and 4 x 4 floats, 0.23-1.18x in AVX's 4 x 4 and 8 x 8, and
// 0.62-1.03x element by element (doubles beyond L2, the walk used there
// before). alpha/beta, which read the old out too, gain from AVX's wider
// tiles at most orders (B += A^T at 250^2 doubles 0.67x the loop against
// 0.80x; 4096^2 0.50x against 0.67x).
template <class U, class Store>
void block(const U* in, U* out, std::size_t rows, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0,
           std::size_t c1, Store store, Walk w) {
  if constexpr (sizeof(U) >= 4 && !std::is_same_v<Store, Copy>)
    if ((w == Walk::RegsInRows || w == Walk::RegsOutRows) && cpu_has(Isa::Avx))
      return tiles_avx(in, out, rows, cols, r0, r1, c0, c1, store, w);
  tiles_baseline(in, out, rows, cols, r0, r1, c0, c1, store, w);
}

// Measured (Intel Xeon model 167; n x n, n from 180 to 4096): register
// tiles always win for 4- and 8-byte elements, with out's rows outer for a
// copy and where a row is a multiple of 1 KiB (cache-set conflicts: 256^2
// B += A^T doubles 30 us vs 46 with in's rows outer), in's rows outer
// elsewhere.
template <class U, class Store>
Walk walk_for(std::size_t rows, std::size_t cols) {
  const bool conflicts = (cols * sizeof(U)) % 1024 == 0 || (rows * sizeof(U)) % 1024 == 0;
  if (sizeof(U) >= 4) return std::is_same_v<Store, Copy> || conflicts ? Walk::RegsOutRows : Walk::RegsInRows;
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
