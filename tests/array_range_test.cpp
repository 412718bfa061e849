// Contract: Array::read and Array::write (veda/array.hpp) copy a range of
// elements out and in without moving the rest. On the host they are plain
// copies; with the data on a device only the range crosses, after the work
// queued on the device copy on any stream, and no copy changes validity;
// a range past the end is InvalidArgument before any copy; a failed device
// write leaves every copy that stays valid holding the new values. Runs on
// the asynchronous emulated device, whose streams overtake each other unless
// events order them, so a missing wait shows as a wrong value here.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "runtime/host_device.hpp"
#include "support/async_device.hpp"
#include "veda/array.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

using veda::Array;
using veda::detail::HostDevice;

namespace {
constexpr std::size_t kN = 1 << 16;

struct AsyncDevice : veda_test::AsyncDevice {
  AsyncDevice() : veda_test::AsyncDevice(11) {}
};
using veda_test::sleep_us;

// A "kernel" on stream s, after `delay_us`, writing v[i] = base + i over the
// whole device copy (the host copy becomes stale).
void iota_on(HostDevice& dev, Array<int>& a, void* s, int base, int delay_us) {
  int* p = static_cast<int*>(a.buffer()->device_write(dev, s, false));
  const std::size_t n = a.size();
  dev.launch(s, [=] {
    sleep_us(delay_us);
    for (std::size_t i = 0; i < n; ++i) p[i] = base + static_cast<int>(i);
  });
  a.buffer()->device_done(s);
}

// A "kernel" on stream s that copies the device copy into `out` after `delay_us`.
void snapshot_on(HostDevice& dev, Array<int>& a, void* s, std::vector<int>& out, int delay_us) {
  const int* p = static_cast<const int*>(a.buffer()->device_read(dev, s));
  out.resize(a.size());
  int* o = out.data();
  const std::size_t n = a.size();
  dev.launch(s, [=] {
    sleep_us(delay_us);
    std::copy(p, p + n, o);
  });
  a.buffer()->device_done(s);
}

std::vector<int> iota_vec(std::size_t n, int base) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), base);
  return v;
}
}  // namespace

TEST_CASE("on the host: read and write copy exactly the range, at every edge") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1009}}) {
    CAPTURE(n);
    Array<double> a(std::vector<double>(n, 1.5));
    for (std::size_t first : {std::size_t{0}, n / 2, n}) {
      std::vector<double> in(n - first);
      std::iota(in.begin(), in.end(), 10.0 * static_cast<double>(first));
      a.write(first, in);
      std::vector<double> out(n - first, -1.0);
      a.read(first, out);
      CHECK(out == in);
    }
    std::vector<double> none;
    a.read(n, none);  // an empty range at the end is fine
    CHECK_THROWS_AS(a.read(n + 1, none), veda::InvalidArgument);
    std::vector<double> one(1);
    CHECK_THROWS_AS(a.read(n, one), veda::InvalidArgument);
    CHECK_THROWS_AS(a.write(n, one), veda::InvalidArgument);
  }
  // Out of range says which range, and changes nothing.
  Array<int> b(std::vector<int>{1, 2, 3});
  const std::vector<int> four{9, 9, 9, 9};
  try {
    b.write(1, four);
    FAIL("no throw");
  } catch (const veda::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("[1, 1 + 4)") != std::string::npos);
    CHECK(std::string(e.what()).find("size 3") != std::string::npos);
  }
  CHECK(b.to_vector() == std::vector<int>{1, 2, 3});
  // A 2-D array's row, by its first element.
  Array<int> m(3, 4, iota_vec(12, 0));
  std::vector<int> row(4);
  m.read(2 * 4, row);
  CHECK(row == std::vector<int>{8, 9, 10, 11});
}

TEST_CASE("from a device copy, read brings only the range, after the writer, and the host copy stays stale") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    Array<int> a(kN);
    iota_on(dev, a, dev.stream(round % 3), 100 * round, 2000);  // still running when read() comes
    const std::size_t d2h = dev.d2h_copies, bytes = dev.d2h_bytes;
    std::vector<int> out(37);
    a.read(kN - 100, out);
    CHECK(out == iota_vec(37, 100 * round + static_cast<int>(kN) - 100));
    CHECK(dev.d2h_copies == d2h + 1);
    CHECK(dev.d2h_bytes == bytes + 37 * sizeof(int));
    CHECK_FALSE(a.valid_on_host());
    CHECK(a.valid_on_device());
  }
}

TEST_CASE("into a device copy, write lands after readers in flight and before later work, on any stream") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    Array<int> a(kN);
    iota_on(dev, a, dev.stream(0), 0, 0);
    std::vector<int> before, after;
    snapshot_on(dev, a, dev.stream(1), before, 2000);  // a slow reader on another stream
    const std::size_t h2d = dev.h2d_copies, bytes = dev.h2d_bytes;
    const std::vector<int> in(5, -7);
    a.write(1000, in);
    CHECK(dev.h2d_copies == h2d + 1);
    CHECK(dev.h2d_bytes == bytes + 5 * sizeof(int));
    CHECK_FALSE(a.valid_on_host());
    snapshot_on(dev, a, dev.stream(2 + round % 2), after, 0);  // a reader that comes later
    for (std::size_t i = 0; i < 4; ++i) dev.synchronize(dev.stream(i));
    CHECK(before == iota_vec(kN, 0));  // the write waited for it
    std::vector<int> want = iota_vec(kN, 0);
    std::fill(want.begin() + 1000, want.begin() + 1005, -7);
    CHECK(after == want);
    CHECK(a.to_vector() == want);
  }
}

TEST_CASE("with both copies valid, write updates both and moves nothing else") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  Array<int> a(iota_vec(kN, 0));
  a.to_device();
  REQUIRE(a.valid_on_host());
  REQUIRE(a.valid_on_device());
  const std::size_t d2h = dev.d2h_copies;
  const std::vector<int> in{-1, -2, -3};
  a.write(kN - 3, in);
  CHECK(a.valid_on_host());
  CHECK(a.valid_on_device());
  std::vector<int> seen;
  snapshot_on(dev, a, dev.stream(1), seen, 0);
  dev.synchronize(dev.stream(1));
  std::vector<int> want = iota_vec(kN, 0);
  std::copy(in.begin(), in.end(), want.end() - 3);
  CHECK(seen == want);
  CHECK(a.to_vector() == want);
  CHECK(dev.d2h_copies == d2h);  // read and checked on each side, never copied back
}

TEST_CASE("a failed device write: the host keeps the new values and the device copy turns stale") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  Array<int> a(iota_vec(1000, 0));
  a.to_device();
  dev.break_for_good();
  const std::vector<int> in{5, 5};
  CHECK_THROWS_AS(a.write(10, in), veda::DeviceFault);
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());
  std::vector<int> want = iota_vec(1000, 0);
  want[10] = want[11] = 5;
  CHECK(a.to_vector() == want);
}
