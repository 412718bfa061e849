// Contract (the bad-input matrix): every public entry point, given empty
// ranges, mismatched lengths or shapes, sizes whose byte counts overflow,
// overlapping outputs, unknown tiers, bad Config or environment values, or
// called after shutdown(), throws a veda::Error subclass naming the problem
// before it writes anything (outputs keep their sentinel values), and the
// runtime stays usable. Empty inputs are valid and do nothing; NaN and Inf
// flow through as IEEE arithmetic says.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/blas.hpp"
#include "veda/veda.hpp"

namespace {
constexpr float kSentinel = -12345.0f;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max() / 2;

std::vector<float> sentinel(std::size_t n) { return std::vector<float>(n, kSentinel); }
bool untouched(const std::vector<float>& v) {
  for (float x : v)
    if (x != kSentinel) return false;
  return true;
}

// Runs f, which must throw E with `needle` in its message.
template <class E>
void rejects(const std::function<void()>& f, const std::string& needle) {
  CAPTURE(needle);
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  } catch (const std::exception& e) {
    FAIL("wrong exception: " << e.what());
  }
}

struct Running {
  Running() { veda::init(veda::Config::builder().threads(2).build()); }
  ~Running() {
    if (veda::is_running()) veda::shutdown();
  }
};
}  // namespace

TEST_CASE("wrapped calls: mismatched lengths are rejected before the output is touched") {
  Running rt;
  auto add = veda::gpu([](float a, float b) noexcept { return a + b; }, {.name = "add"});
  std::vector<float> a(10, 1.0f), b(11, 1.0f), out = sentinel(10), short_out = sentinel(9);
  rejects<veda::InvalidArgument>([&] { (void)add(a, b); }, "add");
  rejects<veda::InvalidArgument>([&] { add.into(out, a, b); }, "11");
  rejects<veda::InvalidArgument>([&] { add.into(std::span<float>(short_out), a, a); }, "output has 9");
  CHECK(untouched(out));
  CHECK(untouched(short_out));
  add.into(short_out, a, a);  // a std::vector output is resized to fit, by contract
  CHECK(short_out.size() == 10);
  CHECK(add(std::vector<float>{}, std::vector<float>{}).empty());  // empty is fine
  std::span<const float> null_span;                                // null data, size 0
  CHECK(add(null_span, null_span).empty());
  CHECK(add(a, a) == std::vector<float>(10, 2.0f));  // still usable
}

TEST_CASE("par_iter, reductions, scans, sorts, transpose: empty is valid, mismatches are errors") {
  Running rt;
  const std::vector<float> none;
  CHECK(veda::sum(none) == 0);
  CHECK(veda::par_iter(none).map([](float v) { return v + 1; }).collect().empty());
  CHECK(veda::par_iter(none).sum() == 0);
  std::vector<float> out0;
  veda::inclusive_scan(none, out0);
  std::vector<float> keys0;
  veda::sort(keys0);

  std::vector<float> in(100, 1.0f), out = sentinel(99);
  rejects<veda::InvalidArgument>([&] { veda::inclusive_scan(in, out); }, "out has 99");
  CHECK(untouched(out));
  std::vector<float> k(5, 1.0f);
  std::vector<std::int32_t> v(4, 7);
  rejects<veda::InvalidArgument>([&] { veda::sort_by_key(k, v); }, "5 keys");
  CHECK(v == std::vector<std::int32_t>(4, 7));
  std::vector<float> t_out = sentinel(6), t_in(6, 1.0f);
  rejects<veda::InvalidArgument>([&] { veda::transpose(t_in, t_out, 2, 4); }, "2x4");
  rejects<veda::InvalidArgument>([&] { veda::transpose(t_in, t_out, kHuge, 4); }, "transpose");
  CHECK(untouched(t_out));
  rejects<veda::InvalidArgument>([&] { (void)veda::sum(in, {.tier = "warp-drive"}); }, "warp-drive");
}

TEST_CASE("matmul and linear: shapes, overflowing sizes, overlaps") {
  Running rt;
  const veda::Array<float> a(3, 4), b(5, 2), v1(7);
  rejects<veda::InvalidArgument>([&] { (void)veda::matmul(a, b); }, "3x4");
  rejects<veda::InvalidArgument>([&] { (void)veda::matmul(v1, b); }, "2-D");
  std::vector<float> A(12, 1.0f), B(8, 1.0f), C = sentinel(5);
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, 3, 4, 2); }, "C has 5");
  CHECK(untouched(C));
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, kHuge, 4, 2); }, "overflows");
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, 2, kHuge, 2); }, "overflows");
  std::vector<float> AB(16, 1.0f);
  std::span<float> overlap(AB.data() + 2, 4);  // C starts inside A
  rejects<veda::InvalidArgument>(
      [&] { veda::matmul<float>(std::span<const float>(AB.data(), 4), std::span<const float>(AB.data(), 4), overlap, 2, 2, 2); },
      "overlaps");
  const veda::Array<float> x(2, 3), w(4, 3), bias(5);
  rejects<veda::InvalidArgument>([&] { (void)veda::linear(x, w, bias); }, "bias has 5");
  // 0-sized products are valid: an m x 0 times 0 x n is all zeros.
  const veda::Array<float> e1(3, 0), e2(0, 2);
  const auto z = veda::matmul(e1, e2);
  CHECK(z.rows() == 3);
  CHECK(z.cols() == 2);
  for (float f : z.host()) CHECK(f == 0.0f);
}

TEST_CASE("Arrays: overflowing shapes, bad reshapes, out-of-range indices") {
  Running rt;
  rejects<veda::InvalidArgument>([] { veda::Array<double> big(kHuge); }, "overflows");
  rejects<veda::InvalidArgument>([] { veda::Array<float> big(kHuge, 3); }, "overflows");
  veda::Array<float> a(std::vector<float>(6, 2.0f));
  rejects<veda::InvalidArgument>([&] { a.reshape(4, 2); }, "reshape");
  CHECK(a.size() == 6);
  CHECK(a.ndim() == 1);
  rejects<veda::InvalidArgument>([&] { (void)a[6]; }, "index 6");
  a.reshape(2, 3);
  rejects<veda::InvalidArgument>([&] { (void)a.at(2, 0); }, "veda::Array");
  rejects<veda::InvalidArgument>([&] { veda::Array<float>(2, 2, std::vector<float>(5)); }, "[2, 2]");
}

TEST_CASE("wrapped calls: an output overlapping an input is rejected, unless it is that input (in place)") {
  Running rt;
  auto twice = veda::gpu([](float v) noexcept { return 2 * v; }, {.name = "twice"});
  auto add = veda::gpu([](float a, float b) noexcept { return a + b; }, {.name = "overlap-add"});
  std::vector<float> x(1000);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<float> before = x;
  const std::vector<float> ones(999, 1.0f);
  // The output shifted over its input, either way: tier- and timing-dependent results before.
  rejects<veda::InvalidArgument>(
      [&] { twice.into(std::span<float>(x.data() + 1, 999), std::span<const float>(x.data(), 999)); },
      "overlaps argument 1");
  rejects<veda::InvalidArgument>(
      [&] { add.into(std::span<float>(x.data(), 999), std::span<const float>(ones), std::span<const float>(x.data() + 1, 999)); },
      "overlaps argument 2");
  // Same first element but another element size: not the same elements.
  auto widen = veda::gpu([](float v) noexcept { return double(v); }, {.name = "widen"});
  rejects<veda::InvalidArgument>(
      [&] { widen.into(std::span<double>(reinterpret_cast<double*>(x.data()), 400), std::span<const float>(x.data(), 400)); },
      "overlaps argument 1");
  // A std::vector output is checked before it is resized: a rejected call
  // does not shrink it.
  rejects<veda::InvalidArgument>([&] { twice.into(x, std::span<const float>(x.data() + 1, 999)); },
                                 "overlaps argument 1");
  CHECK(x == before);
  // An Array output and a span over its host copy: writes would bypass its residency.
  veda::Array<float> arr{std::vector<float>(before)};
  rejects<veda::InvalidArgument>([&] { twice.into(arr, arr.chost()); }, "overlaps argument 1");
  CHECK(arr.to_vector() == before);
  // The input itself as the output is an update in place, on every CPU tier.
  for (const char* tier : {"serial", "tbb-static", "tbb-auto"}) {
    CAPTURE(tier);
    auto f = veda::gpu([](float v) noexcept { return 2 * v; }, {.name = std::string("in-place-") + tier, .tier = tier});
    std::vector<float> y(std::size_t{1} << 16);
    std::iota(y.begin(), y.end(), 0.0f);
    const std::vector<float> y0 = y;
    f.into(std::span<float>(y), std::span<const float>(y));
    bool ok = true;
    for (std::size_t i = 0; i < y.size(); ++i) ok &= y[i] == 2 * y0[i];
    CHECK(ok);
    f.into(y, y);  // the same std::vector
    for (std::size_t i = 0; i < y.size(); ++i) ok &= y[i] == 4 * y0[i];
    CHECK(ok);
    veda::Array<float> a{std::vector<float>(y0)};
    f.into(a, a);  // the same Array
    const auto h = a.host();
    for (std::size_t i = 0; i < h.size(); ++i) ok &= h[i] == 2 * y0[i];
    CHECK(ok);
  }
}

TEST_CASE("spans whose byte count overflows are rejected before any work") {
  Running rt;
  // Impossible spans: a valid pointer with a length whose bytes exceed
  // size_t (never dereferenced). 2^61 doubles and 2^62 floats are 2^64 bytes.
  const std::size_t d61 = std::size_t{1} << 61, f62 = std::size_t{1} << 62;
  std::vector<double> din(8, 1.0), dout(8, -1.0);
  std::vector<float> fin(8, 1.0f), out = sentinel(8), keys = sentinel(8);
  std::vector<std::int32_t> vals(8, 7);
  const std::span<const double> hd(din.data(), d61);
  const std::span<double> hd_out(dout.data(), d61);
  const std::span<const float> hf(fin.data(), f62);
  const std::span<float> hf_out(out.data(), f62), hkeys(keys.data(), f62);
  rejects<veda::InvalidArgument>([&] { veda::transpose(hd, hd_out, d61, 1); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { veda::inclusive_scan(hd, hd_out); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { veda::exclusive_scan(hf, hf_out); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { veda::sort(hkeys); }, "overflows a byte count");
  rejects<veda::InvalidArgument>(
      [&] { veda::sort_by_key(hkeys, std::span<std::int32_t>(vals.data(), f62)); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { (void)veda::sum(hf); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { (void)veda::min(hd); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { (void)veda::max(hf); }, "overflows a byte count");
  rejects<veda::InvalidArgument>([&] { (void)veda::reduce(hd, 0.0, std::plus<double>{}); }, "overflows a byte count");
  auto id = veda::gpu([](float v) noexcept { return v; }, {.name = "ovf"});
  rejects<veda::InvalidArgument>([&] { (void)id(hf); }, "argument 1");
  rejects<veda::InvalidArgument>([&] { id.into(hf_out, hf); }, "overflows a byte count");
  // 2^61 floats fit in a byte count, their 2^61 double results do not.
  auto widen = veda::gpu([](float v) noexcept { return double(v); }, {.name = "ovf-widen"});
  rejects<veda::InvalidArgument>([&] { (void)widen(std::span<const float>(fin.data(), d61)); }, "the result");
  CHECK(untouched(out));
  CHECK(untouched(keys));
  CHECK(dout == std::vector<double>(8, -1.0));
  CHECK(vals == std::vector<std::int32_t>(8, 7));
  CHECK(veda::sum(fin) == 8.0f);  // still usable
}

TEST_CASE("options: an unknown placement or an impossible device index is InvalidArgument") {
  Running rt;
  const auto bad = static_cast<veda::Placement>(42);
  std::vector<float> x(8, 1.0f), out = sentinel(8), keys = sentinel(8), t_out = sentinel(8);
  veda::Array<float> arr(std::vector<float>(8, 1.0f));
  const std::vector<std::function<void()>> calls = {
      [&] { (void)veda::sum(x, {.placement = bad}); },
      [&] { (void)veda::min(x, {.placement = bad}); },
      [&] { (void)veda::max(arr, {.placement = bad}); },
      [&] { (void)veda::reduce(x, 0.0f, std::plus<float>{}, {.placement = bad}); },
      [&] { veda::inclusive_scan(x, out, {.placement = bad}); },
      [&] { veda::exclusive_scan(x, out, 0.0f, {.placement = bad}); },
      [&] { (void)veda::inclusive_scan(arr, {.placement = bad}); },
      [&] { veda::sort(keys, {.placement = bad}); },
      [&] { veda::sort(arr, {.placement = static_cast<veda::Placement>(-1)}); },
      [&] { veda::transpose(x, t_out, 2, 4, {.placement = bad}); },
      [&] { (void)veda::transpose(veda::Array<float>(2, 4), {.placement = bad}); },
      [&] { (void)veda::gpu([](float v) noexcept { return v; }, {.placement = bad}); },
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CAPTURE(i);
    rejects<veda::InvalidArgument>(calls[i], "placement");
  }
  CHECK(untouched(out));
  CHECK(untouched(keys));
  CHECK(untouched(t_out));
  CHECK(arr.to_vector() == std::vector<float>(8, 1.0f));

  // Below -1 is never a device; -1 and 0 always run (code written for GPU 0
  // runs without a GPU); an index beyond the machine's devices is a bug.
  auto id = [](int device) {
    return veda::gpu([](float v) noexcept { return v + 1; }, {.device = device, .name = "device-option"});
  };
  rejects<veda::InvalidArgument>([&] { (void)id(-7); }, "device -7");
  rejects<veda::InvalidArgument>([&] { (void)id(std::numeric_limits<int>::min()); }, "device");
  auto far = id(1000);
  rejects<veda::InvalidArgument>([&] { far.into(out, x); }, "device 1000");
  CHECK(untouched(out));
  CHECK(id(-1)(x) == std::vector<float>(8, 2.0f));
  CHECK(id(0)(x) == std::vector<float>(8, 2.0f));
}

TEST_CASE("a machine profile's OpenBLAS kernel set is used only where this CPU can run it") {
  using veda::detail::choose_coretype;
  veda::CpuInfo amd;  // an AVX2 machine without AVX-512, like the red team's
  amd.vendor = "AuthenticAMD";
  amd.model = "AMD EPYC (test)";
  amd.avx2 = amd.fma = true;
  veda::CpuInfo intel = amd;
  intel.vendor = "GenuineIntel";
  veda::CpuInfo skx = intel;
  skx.avx512 = true;
  veda::CpuInfo cpx = skx;
  cpx.avx512_bf16 = true;
  const veda::CpuInfo old;  // no AVX2: veda cannot tell what it runs

  // A profile from an AVX-512 machine: SkylakeX kernels would die with SIGILL here.
  auto c = choose_coretype(amd, "SkylakeX");
  CHECK(c.rejected);
  CHECK(c.core == "Zen");
  CHECK(c.origin.find("SkylakeX needs AVX-512") != std::string::npos);
  CHECK(choose_coretype(intel, "SkylakeX").core == "Haswell");
  CHECK(choose_coretype(intel, "Cooperlake").core == "Haswell");
  CHECK(choose_coretype(skx, "Cooperlake").core == "SkylakeX");  // needs BF16 too
  CHECK(choose_coretype(skx, "SapphireRapids").rejected);
  CHECK(choose_coretype(old, "Haswell").core.empty());  // OpenBLAS's own choice
  CHECK(choose_coretype(old, "Haswell").origin.find("chosen by OpenBLAS") == 0);
  CHECK(choose_coretype(amd, "Bulldozer").rejected);  // unknown to veda: not trusted
  CHECK(choose_coretype(amd, "NEOVERSEN1").rejected);
  // What the CPU can run is taken as measured, in OpenBLAS's spelling.
  for (const auto& [cpu, core] : {std::pair{skx, "SkylakeX"}, {skx, "Haswell"}, {cpx, "Cooperlake"},
                                  {cpx, "SapphireRapids"}, {amd, "Haswell"}, {intel, "Zen"}}) {
    CAPTURE(core);
    const auto ok = choose_coretype(cpu, core);
    CHECK_FALSE(ok.rejected);
    CHECK(ok.core == core);
  }
  CHECK(choose_coretype(skx, "skylakex").core == "SkylakeX");
  // Nothing measured: the choice from the CPU's features.
  CHECK(choose_coretype(amd, "").core == "Zen");
  CHECK_FALSE(choose_coretype(amd, "").rejected);
  CHECK(choose_coretype(cpx, "").core == "Cooperlake");
  CHECK(veda::detail::coretype_missing(amd, "SkylakeX") == "AVX-512");
  CHECK(veda::detail::coretype_missing(skx, "SkylakeX").empty());
}

TEST_CASE("NaN and Inf flow through as IEEE arithmetic says") {
  Running rt;
  std::vector<float> x(1000, 1.0f);
  x[17] = kNaN;
  CHECK(std::isnan(veda::sum(x)));
  x[17] = kInf;
  CHECK(veda::sum(x) == kInf);
  x[18] = -kInf;
  CHECK(std::isnan(veda::sum(x)));  // inf + -inf
  auto sq = veda::gpu([](float v) noexcept { return v * v; }, {.name = "sq"});
  const auto y = sq(std::vector<float>{kNaN, kInf, -kInf, 0.0f});
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == kInf);
  CHECK(y[2] == kInf);
  CHECK(y[3] == 0.0f);
  std::vector<float> k = {3.0f, kNaN, -kInf, 1.0f, kInf};
  veda::sort(k);  // NaN last
  CHECK(k[0] == -kInf);
  CHECK(k[3] == kInf);
  CHECK(std::isnan(k[4]));
  std::vector<float> s(3);
  veda::inclusive_scan(std::vector<float>{1.0f, kInf, 1.0f}, s);
  CHECK(s[2] == kInf);
  const veda::Array<float> m(2, 2, {1.0f, kNaN, 0.0f, 1.0f}), id(2, 2, {1.0f, 0.0f, 0.0f, 1.0f});
  const auto p = veda::matmul(m, id);  // NaN * 0 is NaN: the NaN reaches its whole row
  CHECK(std::isnan(p.host()[0]));
  CHECK(std::isnan(p.host()[1]));
  CHECK(p.host()[2] == 0.0f);
  CHECK(p.host()[3] == 1.0f);
}

TEST_CASE("bad Config and environment values are ConfigErrors naming them; nothing starts") {
  using B = veda::Config::Builder;
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[] { veda::Config::builder().threads(0).build(); }, "threads"},
      {[] { veda::Config::builder().threads(1 << 20).build(); }, "threads"},
      {[] { veda::Config::builder().device(-1).build(); }, "device"},
      {[] { veda::Config::builder().memory_pool_limit(1.5).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().memory_pool_limit(-1).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().memory_pool_limit(std::nan("")).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().pinned_staging(100).build(); }, "pinned_staging"},
      {[] { veda::Config::builder().faults("boom").build(); }, "faults"},
  };
  (void)sizeof(B);
  for (const auto& [f, field] : cases) rejects<veda::ConfigError>(f, field);
  const std::vector<std::pair<std::string, std::string>> env = {
      {"VEDA_GPU", "maybe"},         {"VEDA_THREADS", "0"},         {"VEDA_THREADS", "two"},
      {"VEDA_DEVICE", "-3"},         {"VEDA_MEMORY_POOL_LIMIT", "0"}, {"VEDA_MEMORY_POOL_LIMIT", "12 parsecs"},
      {"VEDA_PRECISION", "fp8"},     {"VEDA_CALIBRATION", "sometimes"}, {"VEDA_LOG_LEVEL", "loud"},
      {"VEDA_DETERMINISTIC", "-1"},  {"VEDA_TELEMETRY", "2"},       {"VEDA_PINNED_STAGING", "1k"},
      {"VEDA_FAULT", "copy:0"},
  };
  for (const auto& [var, value] : env) {
    auto get = [&](std::string_view n) -> std::optional<std::string> {
      if (n == var) return value;
      return std::nullopt;
    };
    rejects<veda::ConfigError>([&] { veda::apply_environment(veda::Config::builder().build(), get); }, var);
  }
  CHECK_FALSE(veda::is_running());
}

TEST_CASE("every entry point after shutdown() throws veda::Error and writes nothing") {
  veda::init();
  auto f = veda::gpu([](float v) noexcept { return v + 1; }, {.name = "after"});
  veda::Array<float> arr(std::vector<float>(4, 1.0f));
  veda::shutdown();
  std::vector<float> x(8, 1.0f), out = sentinel(8), keys = sentinel(8);
  const std::vector<std::function<void()>> calls = {
      [&] { f.into(out, x); },
      [&] { (void)veda::sum(x); },
      [&] { (void)veda::par_iter(x).sum(); },
      [&] { veda::inclusive_scan(x, out); },
      [&] { veda::sort(keys); },
      [&] { veda::transpose(x, out, 2, 4); },
      [&] { (void)veda::matmul(veda::Array<float>(2, 2), veda::Array<float>(2, 2)); },
      [&] { arr.to_device(); },
      [&] { (void)veda::get_runtime(); },
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CAPTURE(i);
    rejects<veda::Error>(calls[i], "shut down");
  }
  CHECK(untouched(out));
  CHECK(untouched(keys));
  CHECK(arr[3] == 1.0f);  // host data survives shutdown
  veda::init();  // and a new runtime works
  CHECK(veda::sum(x) == 8.0f);
  veda::shutdown();
}
