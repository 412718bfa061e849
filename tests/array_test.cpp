// Contract: veda::Array — construction (copy, adopt without a copy, shapes),
// explicit copies, bounds and shape errors, and every residency transition
// (MSI: copy in only when stale, a write invalidates the other side), device
// out-of-memory leaving the array untouched, and data surviving shutdown.
// The device side is a HostDevice, so the transitions run without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/array.hpp"
#include "veda/runtime.hpp"
#include "veda/transpose.hpp"

using veda::Array;
using veda::detail::HostDevice;

namespace {
// Installs a HostDevice in a fresh runtime for the duration of a test.
struct EmulatedDevice {
  HostDevice* dev;
  explicit EmulatedDevice(veda::detail::PoolOptions o = {}) {
    if (!veda::is_running()) veda::init(veda::Config::builder().threads(2).build());
    auto d = std::make_unique<HostDevice>(o);
    dev = d.get();
    veda::get_runtime().state().install_device(std::move(d));
  }
  ~EmulatedDevice() {
    if (veda::is_running()) veda::get_runtime().state().install_device(nullptr);
  }
  // What a kernel writing the whole array on the device does.
  template <class T>
  T* device_write(Array<T>& a) {
    auto* p = static_cast<T*>(a.buffer()->device_write(*dev, dev->stream(), false));
    a.buffer()->device_done(dev->stream());
    return p;
  }
};
}  // namespace

TEST_CASE_TEMPLATE("construction and element access", T, float, double, std::int32_t,
                   std::int64_t, std::uint8_t) {
  Array<T> zeros(5);
  CHECK(zeros.size() == 5);
  CHECK(zeros.ndim() == 1);
  for (T x : zeros.host()) CHECK(x == T(0));

  std::vector<T> v{T(1), T(2), T(3)};
  Array<T> copy(v);
  v[0] = T(9);
  CHECK(copy[0] == T(1));  // a copy, not a view

  Array<T> m(2, 3);
  CHECK(m.rows() == 2);
  CHECK(m.cols() == 3);
  CHECK(m.ndim() == 2);
  m.at(1, 2) = T(7);
  CHECK(m[5] == T(7));

  Array<T> il{T(4), T(5)};
  CHECK(il.to_vector() == std::vector<T>{T(4), T(5)});
  const T raw[] = {T(1), T(2), T(3), T(4)};
  Array<T> from_span{std::span<const T>(raw)};
  CHECK(from_span.size() == 4);
  CHECK(from_span.bytes() == 4 * sizeof(T));
}

TEST_CASE("adopting a moved-in vector does not copy") {
  std::vector<float> v(1000, 1.5f);
  const float* data = v.data();
  Array<float> a(std::move(v));
  CHECK(a.chost().data() == data);
  CHECK(a.size() == 1000);
}

TEST_CASE("moving is free, copying is explicit") {
  Array<int> a{1, 2, 3};
  const int* data = a.chost().data();
  Array<int> b(std::move(a));
  CHECK(b.chost().data() == data);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  CHECK(a.host().empty());
  Array<int> c = b.clone();
  c[0] = 42;
  CHECK(b[0] == 1);
  CHECK(c.chost().data() != b.chost().data());
}

TEST_CASE("bounds and shapes are checked") {
  Array<float> a(6);
  CHECK_THROWS_AS(a[6], veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(std::as_const(a)[100], doctest::Contains("index 100"), veda::InvalidArgument);
  CHECK_THROWS_AS(a.at(0, 1), veda::InvalidArgument);
  a.reshape(2, 3);
  CHECK(a.rows() == 2);
  CHECK_THROWS_WITH_AS(a.reshape(4, 2), doctest::Contains("[4, 2] (8 elements) does not fit [2, 3]"),
                       veda::InvalidArgument);
  CHECK(a.rows() == 2);  // unchanged by the failed reshape
  CHECK_THROWS_AS(Array<float>(2, 2, std::vector<float>(5)), veda::InvalidArgument);
  CHECK_THROWS_AS(Array<double>(std::size_t{1} << 62, 8), veda::InvalidArgument);
  a.flatten();
  CHECK(a.ndim() == 1);
  CHECK(a.size() == 6);
}

TEST_CASE("3-D shapes: extents, row-major offsets, reshape, moves and clones keep them") {
  Array<int> v(2, 3, 5);
  CHECK(v.ndim() == 3);
  CHECK(v.size() == 30);
  CHECK((v.extent(0) == 2 && v.extent(1) == 3 && v.extent(2) == 5 && v.extent(3) == 1));
  CHECK((v.rows() == 2 && v.cols() == 15));  // the matrix view 2-D ops would take
  v.at(1, 2, 4) = 7;
  CHECK(v.host()[(1 * 3 + 2) * 5 + 4] == 7);
  CHECK(v.at(1, 14) == 7);
  CHECK_THROWS_AS(v.at(0, 3, 0), veda::InvalidArgument);
  CHECK_THROWS_AS(v.at(2, 0, 0), veda::InvalidArgument);
  const Array<int> c = v.clone();
  CHECK((c.ndim() == 3 && c.extent(2) == 5 && c.at(1, 2, 4) == 7));
  Array<int> m = std::move(v);
  CHECK((m.ndim() == 3 && m.extent(1) == 3));
  CHECK((v.size() == 0 && v.ndim() == 1));
  m.reshape(5, 3, 2);
  CHECK((m.extent(0) == 5 && m.extent(2) == 2));
  CHECK_THROWS_WITH_AS(m.reshape(5, 3, 3), doctest::Contains("[5, 3, 2]"), veda::InvalidArgument);
  CHECK_THROWS_AS(Array<double>(std::size_t{1} << 30, std::size_t{1} << 30, 64), veda::InvalidArgument);
  Array<float> empty(4, 0, 3);
  CHECK((empty.empty() && empty.ndim() == 3 && empty.extent(0) == 4));
  CHECK_THROWS_WITH_AS((void)veda::transpose(Array<float>(2, 2, 2)), doctest::Contains("3-D"), veda::InvalidArgument);
}

TEST_CASE("Shapes of 1 to 4 dimensions: Shape{...}, shape(), reshape without a copy") {
  const veda::Shape s{2, 3, 4, 5};
  CHECK((s.ndim() == 4 && s.size() == 120 && s[3] == 5 && s[4] == 1 && s.str() == "[2, 3, 4, 5]"));
  CHECK((veda::Shape{}.ndim() == 1 && veda::Shape{}.size() == 0));
  CHECK_THROWS_WITH_AS(veda::Shape(2, -3), doctest::Contains("extent 1 is negative"), veda::InvalidArgument);
  Array<int> x(s);
  CHECK((x.ndim() == 4 && x.size() == 120 && x.shape() == s && x.rows() == 2 && x.cols() == 60));
  x.at(1, 2, 3, 4) = 9;
  CHECK(x.host()[119] == 9);
  CHECK_THROWS_AS(x.at(0, 0, 0, 5), veda::InvalidArgument);
  const int* data = x.chost().data();
  x.reshape(veda::Shape{6, 20});
  CHECK((x.ndim() == 2 && x.at(5, 19) == 9 && x.chost().data() == data));  // same storage
  CHECK_THROWS_WITH_AS(x.reshape(veda::Shape{7, 20}), doctest::Contains("[7, 20] (140 elements) does not fit [6, 20]"),
                       veda::InvalidArgument);
  x.reshape(veda::Shape{120});
  CHECK(x.ndim() == 1);
  const Array<float> y(veda::Shape{3, 1, 2}, {1, 2, 3, 4, 5, 6});
  CHECK((y.ndim() == 3 && y.at(2, 0, 1) == 6));
  CHECK_THROWS_AS(Array<float>(veda::Shape{2, 2}, std::vector<float>(5)), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(Array<double>(veda::Shape{std::size_t{1} << 20, 1 << 20, 1 << 20, 2}), doctest::Contains("overflows"),
                       veda::InvalidArgument);
  const Array<float> none(veda::Shape{3, 0, std::size_t{1} << 62, 5});  // a zero extent: no overflow, no elements
  CHECK((none.empty() && none.ndim() == 4));
  const Array<float> moved = Array<float>(veda::Shape{1, 1, 1, 7});
  CHECK((moved.ndim() == 4 && moved.extent(3) == 7));
}

TEST_CASE("zero-length arrays") {
  Array<float> a(0);
  CHECK(a.empty());
  CHECK(a.host().empty());
  CHECK(a.to_vector().empty());
  a.to_device();
  CHECK(a.valid_on_host());
  Array<float> d;
  CHECK(d.empty());
  CHECK(d.valid_on_host());
  CHECK_FALSE(d.valid_on_device());
}

TEST_CASE("without a device, placement hints leave data on the host") {
  veda::init(veda::Config::builder().gpu(false).build());
  Array<float> a{1, 2, 3};
  a.to_device();
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());
  auto p = Array<float>::pinned(3);
  CHECK_FALSE(p.pinned_host());
  CHECK(p.to_vector() == std::vector<float>{0, 0, 0});
  veda::shutdown();
}

TEST_CASE("pinned(n) rejects an n whose byte count overflows, before allocating") {
  // 2^61 + 4 doubles are 2^64 + 32 bytes: 32 once the multiplication wraps,
  // and size() would then promise far more than was allocated.
  const std::size_t wraps = (std::size_t{1} << 61) + 4;
  for (bool running : {false, true}) {
    CAPTURE(running);
    if (running && !veda::is_running()) veda::init(veda::Config::builder().threads(2).build());
    try {
      auto a = Array<double>::pinned(wraps);
      FAIL("no exception: size() " << a.size() << ", bytes() " << a.bytes());
    } catch (const veda::InvalidArgument& e) {
      CHECK(std::string(e.what()).find("overflows") != std::string::npos);  // Shape::checked_size's wording
    }
    CHECK_THROWS_AS(Array<float>::pinned(std::numeric_limits<std::size_t>::max()), veda::InvalidArgument);
    auto ok = Array<double>::pinned(4);
    CHECK(ok.size() == 4);
    CHECK(ok.bytes() == 32);
    CHECK(ok.to_vector() == std::vector<double>(4, 0.0));
    CHECK(Array<double>::pinned(0).empty());
  }
  if (veda::is_running()) veda::shutdown();
}

TEST_CASE("residency transitions copy only when a side is stale") {
  veda::init(veda::Config::builder().threads(2).build());
  EmulatedDevice emu;
  HostDevice& dev = *emu.dev;
  Array<float> a{1, 2, 3, 4};
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());

  a.to_device();  // host -> device
  CHECK(a.valid_on_host());
  CHECK(a.valid_on_device());
  CHECK(dev.h2d_copies == 1);
  a.to_device();  // already valid: no copy
  CHECK(dev.h2d_copies == 1);
  (void)a.chost();  // host valid: no copy
  CHECK(dev.d2h_copies == 0);

  float* d = emu.device_write(a);  // a kernel writes on the device
  d[0] = 10;
  CHECK_FALSE(a.valid_on_host());
  CHECK(a.valid_on_device());

  CHECK(a.chost()[0] == 10);  // host read of stale host copy: one copy back
  CHECK(dev.d2h_copies == 1);
  CHECK(a.valid_on_host());
  CHECK(a.valid_on_device());  // reading does not invalidate
  (void)a.to_vector();
  CHECK(dev.d2h_copies == 1);

  a.host()[1] = 20;  // a host write invalidates the device copy
  CHECK_FALSE(a.valid_on_device());
  a.to_device();
  CHECK(dev.h2d_copies == 2);
  CHECK(static_cast<const float*>(a.buffer()->device_read(dev, dev.stream()))[1] == 20);

  a.to_host();  // frees the device copy
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());
  CHECK(dev.pool().stats().bytes_in_use == 0);
  veda::shutdown();
}

TEST_CASE("a read-modify-write on the device brings the device copy up to date first") {
  veda::init();
  EmulatedDevice emu;
  Array<int> a{5, 6, 7};
  auto* p = static_cast<int*>(a.buffer()->device_write(*emu.dev, emu.dev->stream(), true));
  CHECK(emu.dev->h2d_copies == 1);
  CHECK(p[2] == 7);
  p[2] += 1;
  a.buffer()->device_done(emu.dev->stream());
  CHECK(a.to_vector() == std::vector<int>{5, 6, 8});
  veda::shutdown();
}

TEST_CASE("device out of memory leaves the array as it was") {
  veda::init();
  veda::detail::PoolOptions tiny;
  tiny.limit = 1 << 20;
  EmulatedDevice emu(tiny);
  Array<double> big(std::vector<double>(1 << 18, 2.0));  // 2 MiB
  big.to_device();  // a hint: stays on the host
  CHECK(big.valid_on_host());
  CHECK_FALSE(big.valid_on_device());
  CHECK_THROWS_AS(big.buffer()->device_read(*emu.dev, emu.dev->stream()), veda::OutOfMemory);
  CHECK(big.valid_on_host());
  CHECK(big[12345] == 2.0);
  CHECK(emu.dev->pool().stats().oom_failures == 2);
  veda::shutdown();
}

TEST_CASE("shutdown moves device-only data back to the host") {
  veda::init();
  auto owned = std::make_unique<HostDevice>();
  HostDevice& dev = *owned;
  veda::get_runtime().state().install_device(std::move(owned));
  Array<int> a(1000);
  int* d = static_cast<int*>(a.buffer()->device_write(dev, dev.stream(), false));
  std::iota(d, d + 1000, 0);
  a.buffer()->device_done(dev.stream());
  CHECK_FALSE(a.valid_on_host());
  veda::shutdown();  // destroys the device: the data must come home first
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());
  CHECK(a[999] == 999);
  CHECK(std::accumulate(a.chost().begin(), a.chost().end(), 0L) == 999L * 1000 / 2);
}

TEST_CASE("concurrent readers of a device-only array copy it back once") {
  veda::init();
  EmulatedDevice emu;
  Array<float> a(std::vector<float>(100000, 0.f));
  float* d = emu.device_write(a);
  for (int i = 0; i < 100000; ++i) d[i] = static_cast<float>(i);
  std::vector<std::thread> readers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t)
    readers.emplace_back([&] {
      const Array<float>& ca = a;
      if (ca.chost()[99999] != 99999.f) ++bad;
    });
  for (auto& t : readers) t.join();
  CHECK(bad == 0);
  CHECK(emu.dev->d2h_copies == 1);
  veda::shutdown();
}

TEST_CASE("a 10^7-element array round-trips through the device intact") {
  veda::init();
  EmulatedDevice emu;
  std::vector<std::int64_t> v(10'000'019);
  std::iota(v.begin(), v.end(), std::int64_t{-5'000'000});
  const auto expect = std::accumulate(v.begin(), v.end(), std::int64_t{0});
  Array<std::int64_t> a(std::move(v));
  a.to_device();
  auto* d = emu.device_write(a);  // keep contents: the device copy is valid already
  CHECK(d[0] == -5'000'000);
  const auto got = a.to_vector();
  CHECK(std::accumulate(got.begin(), got.end(), std::int64_t{0}) == expect);
  veda::shutdown();
}
