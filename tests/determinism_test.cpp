// Contract: with Config::deterministic(seed), a program's results are
// bitwise identical across repeated runs and across thread counts, and its
// placement decisions are identical across repeated runs. A run's decisions
// can be recorded (Config::record / VEDA_RECORD) and replayed
// (Config::replay / VEDA_REPLAY): the replaying run makes the same
// placements, even with another thread count; a record from another
// program is rejected with veda::ReplayMismatch, a file that is not a
// record with veda::ConfigError, before any work.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "veda/veda.hpp"

namespace {
struct Results {
  std::vector<std::uint32_t> bits;  // every result's bit pattern, in order
  bool operator==(const Results&) const = default;
  void add(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    bits.push_back(b);
  }
  void add(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    bits.push_back(static_cast<std::uint32_t>(b));
    bits.push_back(static_cast<std::uint32_t>(b >> 32));
  }
  void add(const std::vector<float>& v) {
    for (float x : v) add(x);
  }
};

// The program: sums, pipelines, element-wise maps, scans, sorts and a
// matmul over awkward float data (magnitudes spread over 2^-20..2^20, so
// the order of additions shows in the last bits), sizes 0 to 10^6.
Results program() {
  Results r;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-20, 20);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{97}, std::size_t{4099}, std::size_t{100'003},
                        std::size_t{1'000'000}}) {
    std::vector<float> x(n);
    for (auto& v : x) v = std::ldexp(mant(rng), expo(rng));
    r.add(veda::sum(x, {.name = "det-sum"}));
    r.add(veda::par_iter(x, {.name = "det-pipe"}).map([](float v) { return v * 1.5f; }).sum());
    static const auto f = veda::gpu([](float v) noexcept { return v * v - 1.0f; }, {.name = "det-map"});
    r.add(f(x));
    std::vector<float> s(n);
    veda::inclusive_scan(x, s, {.name = "det-scan"});
    r.add(s);
    auto sorted = x;
    veda::sort(sorted, {.name = "det-sort"});
    r.add(sorted);
  }
  const std::size_t m = 301;
  std::vector<float> a(m * m);
  for (auto& v : a) v = mant(rng);
  const veda::Array<float> A(m, m, a);
  const auto C = veda::matmul(A, A, {.name = "det-matmul"});
  r.add(std::vector<float>(C.host().begin(), C.host().end()));
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp(const char* name) {
  return (std::filesystem::temp_directory_path() / ("veda-" + std::to_string(getpid()) + "-" + name)).string();
}

Results run(int threads, const std::string& record = "", const std::string& replay = "") {
  veda::init(veda::Config::builder().threads(threads).deterministic(42).record(record).replay(replay).build());
  Results r = program();
  veda::shutdown();
  return r;
}
}  // namespace

TEST_CASE("deterministic mode: bitwise-identical results over runs and thread counts, same decisions") {
  const std::string rec1 = temp("det-1.rec"), rec2 = temp("det-2.rec"), rec4 = temp("det-4.rec");
  const Results one = run(1), two = run(2, rec1), two_again = run(2, rec2), four = run(4, rec4);
  CHECK(one.bits.size() > 1'000'000);
  CHECK(two == one);
  CHECK(two_again == one);
  CHECK(four == one);
  const std::string d1 = slurp(rec1);
  CHECK(d1.size() > 100);
  CHECK(d1 == slurp(rec2));  // repeated runs decide alike
  std::remove(rec1.c_str());
  std::remove(rec2.c_str());
  std::remove(rec4.c_str());
}

TEST_CASE("replay repeats a recorded run's placements, with another thread count too") {
  const std::string rec = temp("replay-src.rec"), again = temp("replay-again.rec");
  veda::init(veda::Config::builder().threads(2).record(rec).build());  // not deterministic: learning on
  const Results first = program();
  veda::shutdown();
  const Results replayed = [&] {
    veda::init(veda::Config::builder().threads(1).record(again).replay(rec).build());
    Results r = program();
    veda::shutdown();
    return r;
  }();
  CHECK(slurp(again) == slurp(rec));  // the same tier for every call
  (void)first;
  (void)replayed;
  std::remove(again.c_str());

  SUBCASE("a record from another program is rejected at the first call it does not have") {
    veda::init(veda::Config::builder().replay(rec).build());
    std::vector<float> x(10, 1.0f);
    try {
      (void)veda::sum(x, {.name = "not-in-the-record"});
      FAIL("accepted");
    } catch (const veda::ReplayMismatch& e) {
      CHECK(std::string(e.what()).find("not-in-the-record") != std::string::npos);
    }
    std::vector<float> y(12345, 1.0f);  // a site it has, with another size
    try {
      (void)veda::sum(y, {.name = "det-sum"});
      FAIL("accepted");
    } catch (const veda::ReplayMismatch& e) {
      CHECK(std::string(e.what()).find("12345") != std::string::npos);
    }
    CHECK(veda::sum(std::vector<float>{}, {.name = "det-sum"}) == 0);  // the recorded first call: n = 0
    veda::shutdown();
  }
  SUBCASE("a file that is not a record stops init with a ConfigError") {
    const std::string bad = temp("not-a-record.rec");
    std::ofstream(bad) << "hello\n";
    CHECK_THROWS_AS(veda::init(veda::Config::builder().replay(bad).build()), veda::ConfigError);
    CHECK_FALSE(veda::is_running());
    std::ofstream(bad) << "# veda decision record v1: op-class<TAB>n<TAB>tier<TAB>site\n0\tten\tserial\tx\n";
    try {
      veda::init(veda::Config::builder().replay(bad).build());
      FAIL("accepted");
    } catch (const veda::ConfigError& e) {
      CHECK(std::string(e.what()).find("line 2") != std::string::npos);
    }
    CHECK_THROWS_AS(veda::init(veda::Config::builder().replay(temp("missing.rec")).build()), veda::ConfigError);
    std::remove(bad.c_str());
  }
  std::remove(rec.c_str());
}
