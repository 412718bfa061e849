// Contract: an Array's device copy is ordered across streams (Buffer). A
// reader on another stream waits for the copy that made the device copy
// valid; a writer waits for every reader on every stream; memory an Array
// gave back is reused only after all its readers finished; a failed copy
// leaves nothing writing into freed memory. Runs on the asynchronous emulated
// device, whose streams overtake each other unless events order them, so a
// missing wait shows as a wrong sum here, without a GPU.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/array.hpp"
#include "veda/runtime.hpp"

using veda::Array;
using veda::detail::HostDevice;

namespace {
constexpr std::size_t kN = 1 << 16;

struct AsyncDevice {
  HostDevice* dev;
  AsyncDevice() {
    veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
    auto d = HostDevice::async(200, 7);
    dev = d.get();
    veda::get_runtime().state().install_device(std::move(d));
  }
  ~AsyncDevice() { veda::shutdown(); }
};

void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// A "kernel" on stream s that sums the device copy after `delay_us` of work.
std::shared_ptr<std::int64_t> sum_on(HostDevice& dev, Array<int>& a, void* s, int delay_us = 0) {
  auto out = std::make_shared<std::int64_t>(-1);
  const int* p = static_cast<const int*>(a.buffer()->device_read(dev, s));
  const std::size_t n = a.size();
  dev.launch(s, [=] {
    sleep_us(delay_us);
    std::int64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) t += p[i];
    *out = t;
  });
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
}  // namespace

TEST_CASE("a reader on another stream waits for the copy-in queued behind earlier work") {
  AsyncDevice d;
  HostDevice& dev = *d.dev;
  for (int round = 1; round <= 8; ++round) {
    CAPTURE(round);
    Array<int> a(std::vector<int>(kN, round));  // the pool hands back the last round's block
    dev.launch(dev.stream(0), [] { sleep_us(3000); });  // stream 0 is busy: its copy-in lands late
    auto r0 = sum_on(dev, a, dev.stream(0));
    auto r1 = sum_on(dev, a, dev.stream(1));
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
    sync_all(dev);                                   // the device copy is valid and settled
    auto slow = sum_on(dev, a, dev.stream(0), 3000);  // still reading when the writer comes
    auto fast = sum_on(dev, a, dev.stream(1));
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
      slow = sum_on(dev, a, dev.stream(0), 3000);
      (void)sum_on(dev, a, dev.stream(1));
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
