// Contract: veda::mpi (veda/mpi/*.hpp) under mpirun -np 1..4: distributions
// and their moves, global reductions equal to the single-process result
// (bitwise in deterministic mode, for any rank count and distribution),
// sample sort, errors that reach every rank without a hang, the rank in
// telemetry. Every rank runs every case; main() fails if any rank failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "veda/mpi.hpp"
#include "veda/par_iter.hpp"
#include "veda/runtime.hpp"
#include "veda/telemetry.hpp"

namespace vm = veda::mpi;

namespace {

std::vector<double> iota_data(std::size_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

// Uneven on purpose: rank r holds r * (r + 2) elements of `all`, the last
// rank the rest; rank 0 holds none.
template <class T>
vm::DistArray<T> uneven(const vm::Comm& c, const std::vector<T>& all) {
  std::vector<std::size_t> counts;
  std::size_t used = 0;
  for (int r = 0; r < c.size(); ++r) {
    std::size_t k = r + 1 == c.size() ? all.size() - used : std::min<std::size_t>(all.size() - used, r * (r + 2));
    counts.push_back(k);
    used += k;
  }
  std::size_t off = 0;
  for (int r = 0; r < c.rank(); ++r) off += counts[r];
  std::vector<T> mine(all.begin() + off, all.begin() + off + counts[c.rank()]);
  return vm::DistArray<T>::from_local(c, veda::Array<T>(std::move(mine)));
}

// Re-initialises veda on every rank with `c`, restores the previous config after.
struct Reinit {
  explicit Reinit(veda::Config c) : old(veda::get_runtime().config()) {
    veda::shutdown();
    veda::init(c);
  }
  ~Reinit() {
    veda::shutdown();
    veda::init(old);
  }
  veda::Config old;
};

}  // namespace

TEST_CASE("block distribution: every size, scatter / gather / allgather round trips") {
  vm::Comm c;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t(c.size() - 1), std::size_t{97}, std::size_t{1000003}}) {
    CAPTURE(n);
    const auto all = iota_data(n);
    auto x = vm::DistArray<double>::scatter(c, all);
    CHECK(x.size() == n);
    CHECK_FALSE(x.is_matrix());
    std::size_t total = 0;
    for (int r = 0; r < c.size(); ++r) {
      CHECK(x.row_offset(r) == total);
      CHECK(x.local_rows(r) + 1 >= n / c.size());
      CHECK(x.local_rows(r) <= n / c.size() + 1);
      total += x.local_rows(r);
    }
    CHECK(total == n);
    const auto mine = std::as_const(x.local()).host();
    REQUIRE(mine.size() == x.local_size());
    for (std::size_t i = 0; i < mine.size(); ++i) CHECK(mine[i] == static_cast<double>(x.offset() + i));
    const auto back = x.gather();
    CHECK(back == (c.rank() == 0 ? all : std::vector<double>{}));
    CHECK(x.allgather() == all);
  }
}

TEST_CASE("2-D row blocks; another root; zeros") {
  vm::Comm c;
  const std::size_t rows = 13, cols = 7;
  const auto all = iota_data(rows * cols);
  const int root = c.size() - 1;
  auto m = vm::DistArray<double>::scatter(c, c.rank() == root ? std::span<const double>(all) : std::span<const double>(),
                                          cols, root);
  CHECK(m.is_matrix());
  CHECK(m.rows() == rows);
  CHECK(m.cols() == cols);
  CHECK(m.local().ndim() == 2);
  CHECK(m.local().rows() == m.local_rows());
  CHECK(m.allgather() == all);
  CHECK(m.gather(root) == (c.rank() == root ? all : std::vector<double>{}));

  vm::DistArray<float> z(c, 5, 3);
  CHECK(z.local_size() == z.local_rows() * 3);
  CHECK(z.allgather() == std::vector<float>(15, 0.0f));

  CHECK_THROWS_AS(m.gather(c.size()), veda::InvalidArgument);
  CHECK_THROWS_AS(vm::DistArray<double>::scatter(c, all, 0, -1), veda::InvalidArgument);
  // 91 elements are not whole rows of 10: the root finds out, every rank throws.
  CHECK_THROWS_AS(vm::DistArray<double>::scatter(c, all, 10), veda::InvalidArgument);
}

TEST_CASE("from_local: uneven parts, empty ranks; mismatched widths fail on every rank") {
  vm::Comm c;
  const auto all = iota_data(101);
  auto u = uneven(c, all);
  CHECK(u.size() == 101);
  CHECK(u.local_rows(0) == (c.size() == 1 ? 101u : 0u));
  CHECK(u.allgather() == all);

  // redistribute to the block layout and back: the same elements in order.
  auto b = u.block();
  CHECK(b.rows_per_rank() == vm::detail::block_rows(101, c.size()));
  CHECK(b.allgather() == all);
  CHECK(b.redistribute(u.rows_per_rank()).allgather() == all);
  CHECK_THROWS_AS(u.redistribute(std::vector<std::size_t>(c.size(), 1000)), veda::InvalidArgument);

  // Rank 0's part is 2-D with 3 columns, the others' 2-D with 4 (or 1-D).
  veda::Array<float> part = c.rank() == 0 ? veda::Array<float>(2, 3) : veda::Array<float>(2, 4);
  if (c.size() == 1) {
    CHECK(vm::DistArray<float>::from_local(c, std::move(part)).cols() == 3);
  } else {
    CHECK_THROWS_AS(vm::DistArray<float>::from_local(c, std::move(part)), veda::InvalidArgument);
  }
}

TEST_CASE("par_iter: global reductions equal the single-process ones, on block and uneven layouts") {
  vm::Comm c;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{97}, std::size_t{1000003}}) {
    CAPTURE(n);
    std::vector<std::int64_t> all(n);
    std::iota(all.begin(), all.end(), std::int64_t{-5});
    for (int layout = 0; layout < 2; ++layout) {
      auto x = layout ? uneven(c, all) : vm::DistArray<std::int64_t>::scatter(c, all);
      auto p = vm::par_iter(x);
      auto sq = [](std::int64_t v) { return v * v; };
      auto odd = [](std::int64_t v) { return v % 2 != 0; };
      CHECK(p.sum() == veda::par_iter(all).sum());
      CHECK(p.map(sq).sum() == veda::par_iter(all).map(sq).sum());
      CHECK(p.filter(odd).count() == veda::par_iter(all).filter(odd).count());
      CHECK(p.min() == veda::par_iter(all).min());
      CHECK(p.max() == veda::par_iter(all).max());
      CHECK(p.reduce(std::int64_t{0}, [](std::int64_t a, std::int64_t b) { return std::max(a, b); }) ==
            (n ? std::max<std::int64_t>(0, all.back()) : 0));
      const auto kept = p.filter(odd).map([](std::int64_t v) { return static_cast<double>(v) / 2; }).collect();
      CHECK(kept.allgather() == veda::par_iter(all).filter(odd).map([](std::int64_t v) { return static_cast<double>(v) / 2; }).collect());
      std::atomic<std::int64_t> seen{0};
      p.for_each([&](std::int64_t v) { seen += v; });
      std::int64_t mine = seen.load(), total = 0;
      MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, c.native());
      CHECK(total == veda::par_iter(all).sum());
    }
  }
  // 10^7 doubles over the ranks: the sum of ones is exact.
  vm::DistArray<double> ones(c, 10'000'000);
  vm::par_iter(ones).for_each([](double) {});
  CHECK(vm::par_iter(ones).map([](double v) { return v + 1; }).sum() == 1e7);
  CHECK(vm::par_iter(ones).max() == 0.0);
}

TEST_CASE("deterministic mode: float sums and reduce are the same bits for any rank count and distribution") {
  vm::Comm c;
  Reinit det(veda::Config::builder(veda::get_runtime().config()).deterministic(7).telemetry(true).build());
  std::mt19937 g(3);
  std::uniform_real_distribution<float> d(-1, 1);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{65537}, std::size_t{1000003}}) {
    CAPTURE(n);
    std::vector<float> all(n);
    for (auto& v : all) v = d(g) * std::exp2(static_cast<float>(static_cast<int>(d(g) * 20)));
    // What any rank count gives: 2^16-element chunks, each a veda sum, folded in order.
    float want = 0, want_max = 0;
    for (std::size_t i = 0; i < n; i += vm::detail::kFoldChunk) {
      std::span<const float> chunk(all.data() + i, std::min(vm::detail::kFoldChunk, n - i));
      want += veda::par_iter(chunk).map([](float v) { return v * 3; }).sum();
      want_max = std::max(want_max, veda::par_iter(chunk).reduce(0.0f, [](float a, float b) { return std::max(a, b); }));
    }
    for (int layout = 0; layout < 2; ++layout) {
      auto x = layout ? uneven(c, all) : vm::DistArray<float>::scatter(c, all);
      const float got = vm::par_iter(x).map([](float v) { return v * 3; }).sum();
      CHECK(std::memcmp(&got, &want, sizeof got) == 0);
      CHECK(vm::par_iter(x).reduce(0.0f, [](float a, float b) { return std::max(a, b); }) == want_max);
    }
  }
  // Telemetry records name the rank.
  CHECK(veda::get_runtime().config().rank() == c.rank());
  const auto s = veda::telemetry::snapshot();
  CHECK(s.rank == c.rank());
  REQUIRE_FALSE(s.recent.empty());
  CHECK(s.recent.back().rank == c.rank());
  CHECK(veda::telemetry::chrome_trace().find("rank " + std::to_string(c.rank()) + ": ") != std::string::npos);
}

TEST_CASE("a user function that throws on one rank: every rank throws, none hangs, veda stays usable") {
  vm::Comm c;
  const int bad = c.size() - 1;
  vm::DistArray<double> x = vm::DistArray<double>::scatter(c, iota_data(1000));
  auto boom = [&](double v) {
    if (c.rank() == bad && v == static_cast<double>(x.offset())) throw std::domain_error("bad value");
    return v;
  };
  auto expect = [&](auto&& run) {
    if (c.rank() == bad) {
      CHECK_THROWS_WITH_AS(run(), "bad value", std::domain_error);
    } else {
      try {
        run();
        FAIL("no exception");
      } catch (const vm::RemoteError& e) {
        CHECK(e.rank() == bad);
        CHECK(std::string(e.what()).find("bad value") != std::string::npos);
      }
    }
  };
  expect([&] { return vm::par_iter(x).map(boom).sum(); });
  expect([&] { return vm::par_iter(x).map(boom).count(); });
  expect([&] { return vm::par_iter(x).map(boom).max(); });
  expect([&] { return vm::par_iter(x).map(boom).collect(); });
  expect([&] { vm::par_iter(x).for_each([&](double v) { (void)boom(v); }); });
  CHECK(vm::par_iter(x).sum() == 999.0 * 1000 / 2);
}

TEST_CASE("sort: sorted as a whole, distribution kept; NaN last; duplicates; stable; descending") {
  vm::Comm c;
  std::mt19937 g(11);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{97}, std::size_t{100003}}) {
    CAPTURE(n);
    std::vector<float> all(n);
    for (auto& v : all) v = static_cast<float>(static_cast<int>(g() % 1000) - 500) / 8;
    if (n > 10) all[3] = all[n - 2] = std::nanf("");
    for (bool desc : {false, true}) {
      auto want = all;
      veda::sort(want, {.descending = desc});
      for (int layout = 0; layout < 2; ++layout) {
        auto x = layout ? uneven(c, all) : vm::DistArray<float>::scatter(c, all);
        const auto before = x.rows_per_rank();
        vm::sort(x, {.descending = desc});
        CHECK(x.rows_per_rank() == before);
        const auto got = x.allgather();
        REQUIRE(got.size() == n);
        for (std::size_t i = 0; i < n; ++i)
          CHECK((got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))));
      }
    }
    // Many duplicates: keys 0..2 only.
    std::vector<std::int32_t> keys(n);
    for (auto& k : keys) k = static_cast<std::int32_t>(g() % 3);
    auto k = vm::DistArray<std::int32_t>::scatter(c, keys);
    vm::sort(k, {.stable = true});
    std::sort(keys.begin(), keys.end());
    CHECK(k.allgather() == keys);
  }
  vm::DistArray<float> m(c, 4, 4);
  CHECK_THROWS_AS(vm::sort(m), veda::InvalidArgument);
}

TEST_CASE("matmul: SUMMA equals the single-process product for every shape, on any row layout") {
  vm::Comm c;
  struct Case {
    std::size_t m, k, n;
  };
  for (Case s : {Case{1, 1, 1}, Case{0, 5, 3}, Case{4, 0, 3}, Case{3, 5, 0}, Case{2, 3, 2}, Case{97, 31, 53},
                 Case{128, 128, 128}}) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    std::vector<double> a(s.m * s.k), b(s.k * s.n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 17) - 8;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 13) / 4 - 1;
    // Integers and quarters: every product and sum is exact, in any order.
    std::vector<double> want(s.m * s.n, 0.0);
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t p = 0; p < s.k; ++p)
        for (std::size_t j = 0; j < s.n; ++j) want[i * s.n + j] += a[i * s.k + p] * b[p * s.n + j];
    auto da = vm::DistArray<double>::scatter(c, a, s.k ? s.k : 1);
    auto db = vm::DistArray<double>::scatter(c, b, s.n ? s.n : 1);
    if (s.k == 0 || s.n == 0) continue;  // scatter needs a width; covered below with from_local
    auto dc = vm::matmul(da, db, {.alpha = 2});
    CHECK(dc.rows() == s.m);
    CHECK(dc.cols() == s.n);
    CHECK(dc.rows_per_rank() == vm::detail::block_rows(s.m, c.size()));
    auto got = dc.allgather();
    for (auto& v : got) v /= 2;
    CHECK(got == want);
    // B held unevenly (rank 0 none when there are several ranks).
    std::vector<std::size_t> rows(c.size(), 0);
    rows.back() = s.k;
    if (c.size() > 1) std::swap(rows.back(), rows[1]);
    CHECK(vm::matmul(da, db.redistribute(rows)).allgather() == want);
  }
  // Empty inner and outer dimensions, from local parts.
  auto zeros = [&](std::size_t rows_here, std::size_t cols) {
    return vm::DistArray<float>::from_local(c, veda::Array<float>(rows_here, cols));
  };
  auto e = vm::matmul(zeros(c.rank() == 0 ? 4 : 0, 0), zeros(0, 3));
  CHECK(e.rows() == 4);
  CHECK(e.allgather() == std::vector<float>(12, 0.0f));
  CHECK(vm::matmul(zeros(2, 3), zeros(c.rank() == 0 ? 3 : 0, 0)).size() == 0);

  vm::DistArray<float> x(c, 4, 3), y(c, 4, 2), v(c, 3);
  CHECK_THROWS_AS(vm::matmul(x, y), veda::InvalidArgument);
  CHECK_THROWS_AS(vm::matmul(x, v), veda::InvalidArgument);
  CHECK_THROWS_AS(vm::matmul(x, vm::DistArray<float>(c, 3, 2), {.transpose_a = true}), veda::InvalidArgument);
}

TEST_CASE("exchange_halo: the neighbouring rows, skipping empty ranks; too few rows fail everywhere") {
  vm::Comm c;
  const std::size_t rows = 4 * static_cast<std::size_t>(c.size()) + 3, cols = 5;
  const auto all = iota_data(rows * cols);
  // Rank 1 (of several) holds nothing: its neighbours see past it.
  auto x = vm::DistArray<double>::scatter(c, all, cols);
  std::vector<std::size_t> layout = x.rows_per_rank();
  if (c.size() > 2) {
    layout[0] += layout[1];
    layout[1] = 0;
  }
  x = x.redistribute(layout);
  for (std::size_t w : {1, 2}) {
    const auto h = vm::exchange_halo(x, w);
    const std::size_t first = x.row_offset(), last = first + x.local_rows();
    const bool top = x.local_rows() == 0 || first == 0, bottom = x.local_rows() == 0 || last == rows;
    CHECK(h.above.rows() == (top ? 0 : w));
    CHECK(h.below.rows() == (bottom ? 0 : w));
    if (!top)
      CHECK(h.above.to_vector() == std::vector<double>(all.begin() + (first - w) * cols, all.begin() + first * cols));
    if (!bottom)
      CHECK(h.below.to_vector() == std::vector<double>(all.begin() + last * cols, all.begin() + (last + w) * cols));
  }
  CHECK_THROWS_AS(vm::exchange_halo(x, rows + 1), veda::InvalidArgument);
}

// Runs f(direct) on a fresh runtime with one emulated device per rank, once
// with the device-pointer path (as with a CUDA-aware MPI) and once without.
template <class F>
void on_emulated_device(F&& f) {
  for (const std::string direct : {"0", "1"}) {
    CAPTURE(direct);
    setenv("VEDA_EMULATE_DEVICES", "1", 1);  // read at start-up
    setenv("VEDA_MPI_DEVICE_POINTERS", direct.c_str(), 1);
    Reinit fresh(veda::get_runtime().config());
    struct Unset {  // before the runtime restarts as it was
      ~Unset() {
        unsetenv("VEDA_EMULATE_DEVICES");
        unsetenv("VEDA_MPI_DEVICE_POINTERS");
      }
    } before_restart;
    f(direct == "1");
  }
}

TEST_CASE("exchange_halo from local parts on a device: only the rows sent cross, or none with device pointers") {
  vm::Comm c;
  const std::size_t rows = 3 * static_cast<std::size_t>(c.size()) + 2, cols = 33, w = 2;
  const auto all = iota_data(rows * cols);
  on_emulated_device([&](bool direct) {
    auto x = vm::DistArray<double>::scatter(c, all, cols);
    REQUIRE(x.local().device_data() != nullptr);  // "written" there: the host copy is stale
    REQUIRE_FALSE(x.local().valid_on_host());
    const auto h = vm::exchange_halo(x, w);
    const std::size_t first = x.row_offset(), last = first + x.local_rows();
    CHECK_FALSE(x.local().valid_on_host());  // nothing brought the whole part home
    if (first > 0) {
      CHECK(h.above.valid_on_device() == direct);
      CHECK(h.above.to_vector() == std::vector<double>(all.begin() + (first - w) * cols, all.begin() + first * cols));
    }
    if (last < rows) {
      CHECK(h.below.valid_on_device() == direct);
      CHECK(h.below.to_vector() == std::vector<double>(all.begin() + last * cols, all.begin() + (last + w) * cols));
    }
  });
}

TEST_CASE("matmul from operands on a device: panels from and into device memory with device pointers") {
  vm::Comm c;
  const std::size_t m = 37, k = 4 * static_cast<std::size_t>(c.size()) + 1, n = 29;
  std::vector<double> a(m * k), b(k * n), want(m * n, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 11) - 5;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 7) / 2;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n; ++j) want[i * n + j] += a[i * k + p] * b[p * n + j];
  on_emulated_device([&](bool) {
    auto da = vm::DistArray<double>::scatter(c, a, k);
    auto db = vm::DistArray<double>::scatter(c, b, n);
    REQUIRE(da.local().device_data() != nullptr);  // device-only operands
    REQUIRE(db.local().device_data() != nullptr);
    CHECK(vm::matmul(da, db).allgather() == want);
  });
}

TEST_CASE("redistribute from local parts on a device: from and into device memory with device pointers") {
  vm::Comm c;
  const std::size_t rows = 5 * static_cast<std::size_t>(c.size()) + 3, cols = 7;
  const auto all = iota_data(rows * cols);
  on_emulated_device([&](bool direct) {
    auto x = vm::DistArray<double>::scatter(c, all, cols);
    REQUIRE(x.local().device_data() != nullptr);  // the host copy is stale
    std::vector<std::size_t> layout(static_cast<std::size_t>(c.size()), 0);
    layout.back() = rows - 1;  // all but one row on the last rank, one on the first
    layout.front() += 1;
    const auto y = x.redistribute(layout);
    CHECK(x.local().valid_on_host() == !direct);  // with device pointers, not brought home
    CHECK(y.rows_per_rank() == layout);
    CHECK(y.local().shape() == veda::Shape{y.local_rows(), cols});
    if (y.local_size()) CHECK(y.local().valid_on_device() == direct);
    CHECK(y.allgather() == all);
  });
}

TEST_CASE("sort from local parts on a device: sorted parts are not brought home with device pointers") {
  vm::Comm c;
  std::mt19937 g(7);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{97}, std::size_t{20011}}) {
    CAPTURE(n);
    std::vector<std::int64_t> keys(n);
    for (auto& k : keys) k = static_cast<std::int64_t>(g() % 5000) - 2500;
    auto want = keys;
    std::sort(want.begin(), want.end());
    on_emulated_device([&](bool direct) {
      // The whole sort, from device-only parts: the keys right either way.
      auto x = vm::DistArray<std::int64_t>::scatter(c, keys);
      if (x.local_size()) REQUIRE(x.local().device_data() != nullptr);
      vm::sort(x);
      CHECK(x.allgather() == want);
      // The exchange from parts sorted on a device (here the local sorts ran
      // on the CPU): samples and bounds read a key at a time, the buckets
      // received into device memory.
      auto s = vm::DistArray<std::int64_t>::scatter(c, want);
      if (s.local_size()) REQUIRE(s.local().device_data() != nullptr);
      const auto bucket = vm::detail::exchange_buckets(c, std::as_const(s.local()), {});
      CHECK(s.local().valid_on_host() == (!direct || s.local_size() == 0));
      if (bucket.size()) CHECK(bucket.valid_on_device() == direct);
      CHECK(vm::detail::allgather_values(c, bucket.to_vector(), "test") == want);  // sorted runs, in rank order
    });
  }
}

int main(int argc, char** argv) {
  vm::Environment env(argc, argv);
  doctest::Context ctx(argc, argv);
  int mine = ctx.run(), any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}
