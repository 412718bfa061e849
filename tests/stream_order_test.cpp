// Contract: an Array's device copy is ordered across streams (Buffer). A
// reader on another stream waits for the copy that made the device copy
// valid; a writer waits for every reader on every stream; memory an Array
// gave back is reused only after all its readers finished; a failed copy
// leaves nothing writing into freed memory. Runs on the asynchronous emulated
// device, whose streams overtake each other unless events order them, so a
// missing wait shows as a wrong sum here, without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
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
  AsyncDevice() : veda_test::AsyncDevice(7) {}
};
using veda_test::sleep_us;

// What a kernel reading the device copy does, in the steps a call takes:
// ask for the device pointer, queue the kernel, report the work done. Tests
// interleave the steps of two calls as two threads would.
const int* read(HostDevice& dev, Array<int>& a, void* s) {
  return static_cast<const int*>(a.buffer()->device_read(dev, s));
}

// A "kernel" on stream s that sums n ints at p after `delay_us` of work.
std::shared_ptr<std::int64_t> sum_kernel(HostDevice& dev, const int* p, std::size_t n, void* s, int delay_us = 0) {
  auto out = std::make_shared<std::int64_t>(-1);
  dev.launch(s, [=] {
    sleep_us(delay_us);
    std::int64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) t += p[i];
    *out = t;
  });
  return out;
}

// A whole reading call on stream s.
std::shared_ptr<std::int64_t> sum_on(HostDevice& dev, Array<int>& a, void* s, int delay_us = 0) {
  auto out = sum_kernel(dev, read(dev, a, s), a.size(), s, delay_us);
  a.buffer()->device_done(s);
  return out;
}

// A "kernel" on stream s that overwrites the whole device copy with v.
void fill_on(HostDevice& dev, Array<int>& a, void* s, int v) {
  int* p = static_cast<int*>(a.buffer()->device_write(dev, s, false));
  const std::size_t n = a.size();
  dev.launch(s, [=] {
    for (std::size_t i = 0; i < n; ++i) p[i] = v;
  });
  a.buffer()->device_done(s);
}

void sync_all(HostDevice& dev) {
  for (std::size_t i = 0; i < 4; ++i) dev.synchronize(dev.stream(i));
}

// Two calls reading `a` on streams 0 and 1, their steps interleaved: both
// get their pointers before either reports its work done. Stream 0's kernel
// runs `slow_us` longer.
std::pair<std::shared_ptr<std::int64_t>, std::shared_ptr<std::int64_t>> two_readers(HostDevice& dev, Array<int>& a,
                                                                                     int slow_us) {
  void* s0 = dev.stream(0);
  void* s1 = dev.stream(1);
  const int* p0 = read(dev, a, s0);
  const int* p1 = read(dev, a, s1);
  auto r0 = sum_kernel(dev, p0, a.size(), s0, slow_us);
  auto r1 = sum_kernel(dev, p1, a.size(), s1);
  a.buffer()->device_done(s0);
  a.buffer()->device_done(s1);
  return {r0, r1};
}
}  // namespace

TEST_CASE("a reader on another stream waits for the copy-in queued behind earlier work") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 1; round <= 8; ++round) {
    CAPTURE(round);
    Array<int> a(std::vector<int>(kN, round));  // the pool hands back the last round's block
    dev.launch(dev.stream(0), [] { sleep_us(3000); });  // stream 0 is busy: its copy-in lands late
    auto [r0, r1] = two_readers(dev, a, 0);
    sync_all(dev);
    CHECK(*r0 == static_cast<std::int64_t>(kN) * round);
    CHECK(*r1 == static_cast<std::int64_t>(kN) * round);
  }
}

TEST_CASE("a writer on a third stream waits for the readers on both others") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 1; round <= 8; ++round) {
    Array<int> a(std::vector<int>(kN, 1));
    (void)sum_on(dev, a, dev.stream(0));
    sync_all(dev);  // the device copy is valid and settled
    auto [slow, fast] = two_readers(dev, a, 3000);  // stream 0 still reads when the writer comes
    fill_on(dev, a, dev.stream(2), 7);
    sync_all(dev);
    CHECK(*slow == static_cast<std::int64_t>(kN));
    CHECK(*fast == static_cast<std::int64_t>(kN));
    const auto v = a.to_vector();  // the copy back comes after the writer
    CHECK(v.front() == 7);
    CHECK(v.back() == 7);
  }
}

TEST_CASE("memory an Array gave back is reused only after all of its readers") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 1; round <= 8; ++round) {
    std::shared_ptr<std::int64_t> slow;
    {
      Array<int> a(std::vector<int>(kN, 1));
      (void)sum_on(dev, a, dev.stream(0));
      sync_all(dev);
      slow = two_readers(dev, a, 3000).first;
    }  // freed while stream 0 may still read it
    Array<int> b(kN);
    fill_on(dev, b, dev.stream(1), 9);  // the pool's block for stream 1
    sync_all(dev);
    CHECK(*slow == static_cast<std::int64_t>(kN));
  }
}

TEST_CASE("threads sharing one Array on their own streams read it whole; host copies stay right") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  const Array<int> shared(std::vector<int>(kN, 3));
  constexpr int kThreads = 8;
  std::vector<std::int64_t> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto& a = const_cast<Array<int>&>(shared);  // device reads only: the const contract
      for (int k = 0; k < 20; ++k) {
        auto r = sum_on(dev, a, dev.stream(), (t * 37 + k * 11) % 300);
        dev.synchronize(dev.stream());
        if (*r != 3 * static_cast<std::int64_t>(kN)) ++bad[static_cast<std::size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(bad[static_cast<std::size_t>(t)] == 0);
  CHECK(shared.to_vector() == std::vector<int>(kN, 3));
}

TEST_CASE("shutdown with device work in flight brings every Array home") {
  auto d = std::make_unique<AsyncDevice>();
  HostDevice& dev = *d->dev;
  Array<int> a(std::vector<int>(kN, 1));
  fill_on(dev, a, dev.stream(0), 5);  // queued behind nothing but the random delay
  CHECK_FALSE(a.valid_on_host());
  d.reset();  // veda::shutdown(): evict_all copies back after the writer
  CHECK(a.valid_on_host());
  CHECK(a.to_vector() == std::vector<int>(kN, 5));
}

TEST_CASE("device_data hands out the device copy with every stream's work on it finished") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 1; round <= 6; ++round) {
    CAPTURE(round);
    Array<int> a(std::vector<int>(kN, 1));
    fill_on(dev, a, dev.stream(round % 4), round);  // queued behind a random delay
    auto reader = sum_on(dev, a, dev.stream((round + 1) % 4), 2000);
    const Array<int>& ca = a;
    const int* p = ca.device_data();  // a read: the device copy stays the only valid one
    CHECK(*reader == static_cast<std::int64_t>(kN) * round);  // finished already
    CHECK(p[0] == round);
    CHECK(p[kN - 1] == round);
    CHECK_FALSE(a.valid_on_host());
    int* w = a.device_data(0);  // a write, done by "outside" code here
    CHECK(w == p);
    w[5] = -1;
    const auto v = a.to_vector();
    CHECK(v[5] == -1);
    CHECK(v[6] == round);
  }
  // On the host the write version makes the host copy stale.
  Array<int> b(std::vector<int>{1, 2, 3});
  int* q = b.device_data();
  REQUIRE(q != nullptr);
  CHECK_FALSE(b.valid_on_host());
  q[1] = 7;
  CHECK(b.to_vector() == std::vector<int>{1, 7, 3});
  CHECK(Array<int>().device_data() == nullptr);
  CHECK_THROWS_AS(b.device_data(3), veda::InvalidArgument);
}

TEST_CASE("device_overwrite hands out the device copy without copying the old contents in") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  Array<int> a(std::vector<int>(kN, 1));
  auto reader = sum_on(dev, a, dev.stream(1), 2000);  // a reader in flight on the device copy
  const std::size_t h2d = dev.h2d_copies;
  int* p = a.device_overwrite();
  CHECK(*reader == static_cast<std::int64_t>(kN));  // finished before the address was handed out
  CHECK(dev.h2d_copies == h2d);
  CHECK_FALSE(a.valid_on_host());
  for (std::size_t i = 0; i < kN; ++i) p[i] = 4;
  CHECK(a.to_vector() == std::vector<int>(kN, 4));
  Array<int> fresh(kN);  // never on the device: nothing is copied in either
  REQUIRE(fresh.device_overwrite() != nullptr);
  CHECK(dev.h2d_copies == h2d);
}

TEST_CASE("device_data without a device is nullptr; another index is InvalidArgument") {
  veda::init(veda::Config::builder().threads(2).gpu(false).calibration(veda::CalibrationMode::Off).build());
  Array<int> a(std::vector<int>{1, 2, 3});
  CHECK(a.device_data() == nullptr);
  CHECK(a.valid_on_host());
  CHECK_THROWS_AS(a.device_data(1), veda::InvalidArgument);
  veda::shutdown();
}
