// Reducing a range in independent accumulator lanes, for the CPU tiers.
//
// One chain of dependent adds waits 3-4 cycles per element; enough lanes
// keep several vector adds in flight. 64 bytes of lanes (16 floats, 8
// doubles: four SSE registers, the baseline x86-64 target) measured 3.7x
// faster than 8 scalar lanes combined pairwise on a float sum of 2^20 (GCC
// 12 -O3 did not vectorise that loop at all). The lanes live in an array and
// are combined by halving (lane j with lane j + w), a fixed order, so the
// result depends only on the range. An accumulator type that cannot be
// default constructed folds in one chain.
#pragma once

#include <cstddef>
#include <type_traits>

namespace veda::detail {

template <class Acc>
inline constexpr int kLanes = sizeof(Acc) >= 8 ? 8 : 16;

// Lanes [0, W) take in lanes [W, 2W), then [0, W/2) ... down to lane 0.
// Each level's bound is a constant, so the compiler keeps the lanes in
// registers and folds them with vector adds; a loop over W went through
// memory one lane at a time (10 ns of a 16-float sum's 12 on Zen 4).
template <int W, int L, class Acc, class Op>
Acc combine_lanes(Acc (&lane)[L], const Op& op) {
  if constexpr (W == 0) {
    return lane[0];
  } else {
    for (int j = 0; j < W; ++j) lane[j] = op(lane[j], lane[j + W]);
    return combine_lanes<W / 2>(lane, op);
  }
}

// op over load(i) for i in [lo, hi), starting from identity. The lanes start
// from the first L elements and the identity joins once at the end, which
// gives the same result (op(identity, x) == x): with the identity in every
// lane, GCC -O3 -march=native (AVX2) vectorised the loop across blocks
// instead, with permutes, 1.4x slower on a float sum of 4096.
template <class Acc, class Load, class Op>
Acc reduce_lanes(const Load& load, std::size_t lo, std::size_t hi, const Acc& identity, const Op& op) {
  std::size_t i = lo;
  Acc r = identity;
  if constexpr (std::is_default_constructible_v<Acc>) {
    constexpr int L = kLanes<Acc>;
    if (hi - lo >= static_cast<std::size_t>(L)) {
      Acc lane[L];
      for (int j = 0; j < L; ++j) lane[j] = static_cast<Acc>(load(i + j));
      for (i += L; i + L <= hi; i += L)
        for (int j = 0; j < L; ++j) lane[j] = op(lane[j], static_cast<Acc>(load(i + j)));
      r = op(r, combine_lanes<L / 2>(lane, op));
    }
  }
  for (; i < hi; ++i) r = op(r, static_cast<Acc>(load(i)));
  return r;
}

}  // namespace veda::detail
