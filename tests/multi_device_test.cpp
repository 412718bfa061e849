// Contract: several devices in one runtime (Config::devices, and
// VEDA_EMULATE_DEVICES=N in tests). Each device has its own pool and
// streams; an Array keeps at most one copy per device, a read on another
// device copies the data there (through the host), a write on one device
// frees the others' stale copies, readers on two devices each get their own
// copy, a device out of memory leaves the data where it was, and shutdown
// brings data home from every device. Which device a GPU call runs on: the
// one it asks for, else the one where it would finish first (the work
// queued there plus the copies it needs: where most of its operand bytes
// are while no device is busy); with every operand on the host, the one
// free first, then the least used; a large call not on a device without
// room for it, unless none has room. Devices that reach each other (peer
// access) copy straight over, not through the host, and a GPU tier counts
// the bytes it would copy in from either. Each device is predicted with its
// own figures and judged by its own measured runs.
//
// ctest runs this with VEDA_EMULATE_DEVICES=3: three asynchronous
// host-emulated devices (random delays on their streams), so a missing wait
// gives wrong sums here as it would on GPUs.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/clock.hpp"
#include "runtime/history_store.hpp"
#include "runtime/host_device.hpp"
#include "runtime/learning.hpp"
#include "runtime/placement.hpp"
#include "runtime/profile.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/sites.hpp"
#include "runtime/scheduler.hpp"
#include "src/calibration.hpp"
#include "support/private_cache.hpp"
#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/config.hpp"
#include "veda/error.hpp"
#include "veda/memory_stats.hpp"
#include "veda/runtime.hpp"
#include "veda/gpu.hpp"
#if VEDA_HAS_CUDA
#include "src/gemm_tiers.hpp"
#include "src/sort_coexec.hpp"
#include "veda/detail/coexec.hpp"
#endif

using veda::Array;
using veda::detail::HostDevice;
using veda::detail::RuntimeState;

namespace {
struct Running {
  Running() { veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build()); }
  ~Running() { veda::shutdown(); }
  RuntimeState& st() { return veda::get_runtime().state(); }
  HostDevice& dev(std::size_t slot) { return dynamic_cast<HostDevice&>(*st().device_at(slot)); }
};

// A "kernel" on device `d` that sums the device copy of `a` (read there).
std::int64_t sum_on(HostDevice& d, Array<int>& a) {
  void* s = d.stream();
  const int* p = static_cast<const int*>(a.buffer()->device_read(d, s));
  auto out = std::make_shared<std::int64_t>(-1);
  const std::size_t n = a.size();
  d.launch(s, [=] {
    std::int64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) t += p[i];
    *out = t;
  });
  a.buffer()->device_done(s);
  d.synchronize(s);
  return *out;
}

// A "kernel" on device `d` that overwrites a with v (keep: a read-modify-write adding v).
void write_on(HostDevice& d, Array<int>& a, int v, bool keep = false) {
  void* s = d.stream();
  int* p = static_cast<int*>(a.buffer()->device_write(d, s, keep));
  const std::size_t n = a.size();
  d.launch(s, [=] {
    for (std::size_t i = 0; i < n; ++i) p[i] = keep ? p[i] + v : v;
  });
  a.buffer()->device_done(s);
}
// A GPU map of n floats from the host (every device copies the same in),
// placed on the GPU: with a pretended GPU its calls are planned, never launched.
std::pair<veda::detail::Site&, veda::detail::CallDesc> planned_gpu_map(const char* name, std::size_t n) {
  using namespace veda::detail;
  static const TypeKey tag{&type_list_name<float>};
  Site& site = *site_for(&tag, name, OpClass::Map, tier_bit(Tier::Serial) | tier_bit(Tier::Cuda), {});
  CallDesc d;
  d.n = n;
  d.type_key = &tag;
  d.bytes_per_elem = 8;
  d.h2d_bytes = d.n * 4;
  d.gpu_capable = d.nvcc_site = true;
  d.placement = veda::Placement::Gpu;
  return {site, d};
}

// A runtime on three emulated devices with an H100's profile (so GPU tiers
// have predictions) and a pretended usable GPU: calls are only planned,
// never launched. Restored and shut down at scope exit.
struct PlannedGpuRuntime {
  PlannedGpuRuntime() {
    REQUIRE(st.device_count() == 3);
    st.gpu.usable = true;
  }
  ~PlannedGpuRuntime() {
    st.gpu = saved;
    veda::shutdown();
  }
  static RuntimeState& start() {
    veda::init(veda::Config::builder().threads(2).profile(std::string(VEDA_TEST_DATA) + "/profile_h100.json").build());
    return veda::get_runtime().state();
  }
  RuntimeState& st = start();
  const veda::GpuStatus saved = st.gpu;
};
}  // namespace

TEST_CASE("VEDA_EMULATE_DEVICES gives the runtime that many devices, each with its own pool") {
  Running r;
  REQUIRE(r.st().device_count() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.st().device_at(i)->index() == static_cast<int>(i));
  CHECK(r.st().slot_of(2) == 2);
  CHECK(r.st().slot_of(3) == -1);
  CHECK_FALSE(veda::get_runtime().gpu().usable);  // emulated: no GPU tier is a candidate

  Array<int> a(1000), b(10);
  a.to_device(1);
  b.to_device();  // the first device
  CHECK(a.valid_on_device(1));
  CHECK_FALSE(a.valid_on_device(0));
  CHECK(a.device() == 1);
  CHECK(b.device() == 0);
  const veda::MemoryStats m = veda::get_runtime().memory_stats();
  REQUIRE(m.devices.size() == 3);
  CHECK(m.devices[0].used > 0);
  CHECK(m.devices[1].used >= 1000 * sizeof(int));
  CHECK(m.devices[2].used == 0);
}

TEST_CASE("a read on another device copies the data there through the host, once") {
  Running r;
  HostDevice& d0 = r.dev(0);
  HostDevice& d2 = r.dev(2);
  for (std::size_t n : {std::size_t{1}, std::size_t{97}, std::size_t{1} << 20}) {
    CAPTURE(n);
    Array<int> a(n);
    write_on(d0, a, 3);  // the only valid copy is on device 0
    CHECK_FALSE(a.valid_on_host());
    const std::size_t d2h = d0.d2h_copies, h2d = d2.h2d_copies;
    CHECK(sum_on(d2, a) == 3 * static_cast<std::int64_t>(n));
    CHECK(d0.d2h_copies == d2h + 1);
    CHECK(d2.h2d_copies == h2d + 1);
    CHECK(a.valid_on_host());  // reading leaves every copy valid
    CHECK(a.valid_on_device(0));
    CHECK(a.valid_on_device(2));
    CHECK(sum_on(d2, a) == 3 * static_cast<std::int64_t>(n));
    CHECK(d2.h2d_copies == h2d + 1);  // valid there now: no copy
  }
}

TEST_CASE("a write on one device frees the other devices' copies; the host sees the last write") {
  Running r;
  HostDevice& d0 = r.dev(0);
  HostDevice& d1 = r.dev(1);
  Array<int> a(std::vector<int>(4099, 1));
  CHECK(sum_on(d0, a) == 4099);
  CHECK(sum_on(d1, a) == 4099);
  const std::size_t used0 = d0.pool().stats().bytes_in_use;
  CHECK(used0 >= 4099 * sizeof(int));
  write_on(d1, a, 2, /*keep=*/true);  // 1 + 2 on device 1
  CHECK(a.valid_on_device(1));
  CHECK_FALSE(a.valid_on_device(0));
  CHECK_FALSE(a.valid_on_host());
  CHECK(d0.pool().stats().bytes_in_use < used0);  // its stale copy was freed
  CHECK(sum_on(d0, a) == 3 * 4099);  // comes from device 1
  CHECK(a[4098] == 3);
  a.host()[0] = 10;  // a host write makes both device copies stale
  CHECK_FALSE(a.valid_on_device());
  CHECK(sum_on(d1, a) == 3 * 4098 + 10);
}

TEST_CASE("readers on two devices at once each get their own copy") {
  Running r;
  Array<int> a(std::vector<int>(1 << 16));
  std::iota(a.host().begin(), a.host().end(), 0);
  const std::int64_t want = std::int64_t{(1 << 16) - 1} * (1 << 16) / 2;
  for (int round = 0; round < 20; ++round) {
    std::int64_t s0 = 0, s1 = 0;
    std::thread t0([&] { s0 = sum_on(r.dev(0), a); });
    std::thread t1([&] { s1 = sum_on(r.dev(1), a); });
    t0.join();
    t1.join();
    CHECK(s0 == want);
    CHECK(s1 == want);
    a.host()[0] = 0;  // stale everywhere again: the next round copies in anew
  }
}

// Devices that reach each other (CUDA peer copies): a copy goes straight
// from one to the other on the source's stream, ordered after the work that
// wrote it and before the work that reads it, with no host wait.
void peer_access(Running& r, bool on) {
  for (std::size_t i = 0; i < r.st().device_count(); ++i) r.dev(i).set_peer_access(on);
}

TEST_CASE("with peer access a read on another device copies straight over, not through the host") {
  Running r;
  peer_access(r, true);
  HostDevice& d0 = r.dev(0);
  HostDevice& d2 = r.dev(2);
  for (std::size_t n : {std::size_t{1}, std::size_t{97}, std::size_t{1} << 20}) {
    CAPTURE(n);
    Array<int> a(n);
    write_on(d0, a, 3);  // the only valid copy is on device 0
    const std::size_t peer = d0.peer_copies, d2h = d0.d2h_copies, h2d = d2.h2d_copies;
    CHECK(sum_on(d2, a) == 3 * static_cast<std::int64_t>(n));
    CHECK(d0.peer_copies == peer + 1);
    CHECK(d0.d2h_copies == d2h);  // nothing through the host...
    CHECK(d2.h2d_copies == h2d);
    CHECK_FALSE(a.valid_on_host());  // ...which stays stale
    CHECK(a.valid_on_device(0));
    CHECK(a.valid_on_device(2));
    CHECK(sum_on(d2, a) == 3 * static_cast<std::int64_t>(n));
    CHECK(d0.peer_copies == peer + 1);  // valid there now: no copy
    CHECK(a[n - 1] == 3);               // the host reads it back when asked
  }
}

TEST_CASE("with peer access a chain of writes across devices keeps every value") {
  // Each step adds on the next device (a read-modify-write copied over from
  // the previous one): a copy that overtook the write before it, or a write
  // that overtook the copy reading its input, gives a wrong sum.
  Running r;
  peer_access(r, true);
  constexpr std::size_t n = 4099;
  Array<int> a(std::vector<int>(n, 1));
  int expect = 1;
  for (int step = 0; step < 30; ++step) {
    HostDevice& d = r.dev(static_cast<std::size_t>(step % 3));
    write_on(d, a, step, /*keep=*/true);
    expect += step;
    CHECK(sum_on(r.dev(static_cast<std::size_t>((step + 1) % 3)), a) == std::int64_t{expect} * n);
  }
  CHECK(a.to_vector() == std::vector<int>(n, expect));
  std::size_t peers = 0;
  for (std::size_t i = 0; i < 3; ++i) peers += r.dev(i).peer_copies;
  CHECK(peers == 30);  // one per read; each write finds the copy its device just read
}

TEST_CASE("with peer access readers on two devices copy from a third at once") {
  Running r;
  peer_access(r, true);
  Array<int> a(std::vector<int>(1 << 16));
  for (int round = 0; round < 20; ++round) {
    write_on(r.dev(0), a, round);  // only device 0 holds it
    std::int64_t s1 = 0, s2 = 0;
    std::thread t1([&] { s1 = sum_on(r.dev(1), a); });
    std::thread t2([&] { s2 = sum_on(r.dev(2), a); });
    t1.join();
    t2.join();
    CHECK(s1 == std::int64_t{round} << 16);
    CHECK(s2 == std::int64_t{round} << 16);
  }
}

TEST_CASE("a failed peer copy leaves the data where it was") {
  Running r;
  peer_access(r, true);
  Array<int> a(1000);
  write_on(r.dev(1), a, 6);
  r.dev(1).break_for_good();  // its copies fail from now on
  CHECK_THROWS_AS(a.buffer()->device_read(r.dev(0), r.dev(0).stream()), veda::DeviceFault);
  CHECK_FALSE(a.valid_on_device(0));
  CHECK(a.valid_on_device(1));
}

TEST_CASE("a GPU tier counts the bytes it must copy in, from the host or from another device") {
  using veda::detail::CallDesc;
  Running r;
  Array<int> on1(1000), host(500), both(250);
  write_on(r.dev(1), on1, 1);  // valid on device 1 only
  both.to_device(0);
  both.to_device(1);  // valid on both devices, and on the host
  auto describe = [&](int asked) {
    CallDesc d;
    d.device = veda::detail::device_byte(asked);
    veda::detail::CopyIn copy_in;
    for (const Array<int>* a : {&on1, &host, &both}) copy_in.add(d, *a, a->device(), a->bytes());
    const bool all = copy_in.finish(d);
    return std::make_pair(d, all);
  };
  // Not asked, no device busy: where most operand bytes are (device 1: on1 and both).
  auto [d, all] = describe(-1);
  CHECK(d.resident_device == 1);
  CHECK(d.h2d_bytes == 500 * sizeof(int));  // only the host operand
  CHECK(unsigned{d.peer_share} == 0);
  CHECK_FALSE(all);
  // Asked for device 0: on1 comes from device 1, host from the host.
  std::tie(d, all) = describe(0);
  CHECK(d.h2d_bytes == 1500 * sizeof(int));
  CHECK(unsigned{d.peer_share} == 170);  // 1000 of 1500 bytes, in 255ths
  // Asked for device 2: every operand is copied in; `both` from its valid
  // host copy (what Buffer does), only on1 from another device.
  std::tie(d, all) = describe(2);
  CHECK(d.h2d_bytes == 1750 * sizeof(int));
  CHECK(unsigned{d.peer_share} == static_cast<unsigned>(255.0 * 1000 / 1750 + 0.5));
}

TEST_CASE("not asked and no device busy, a GPU tier runs where most of its operand bytes are, the first operand's device on a tie") {
  Running r;
  Array<int> small(100), big(5000), other(5000), host(10);
  small.to_device(0);
  big.to_device(2);
  other.to_device(1);
  auto describe = [&](std::initializer_list<const Array<int>*> ops) {
    veda::detail::CallDesc d;
    veda::detail::CopyIn copy_in;
    for (const Array<int>* a : ops) copy_in.add(d, *a, a->device(), a->bytes());
    const bool all = copy_in.finish(d);
    return std::make_pair(d, all);
  };
  auto [d, all] = describe({&small, &host, &big});
  CHECK(d.resident_device == 2);  // 5000 ints there, 100 on device 0
  CHECK(d.h2d_bytes == 110 * sizeof(int));
  CHECK(veda::detail::device_slot_for(r.st(), d) == 2);
  CHECK_FALSE(all);
  std::tie(d, all) = describe({&other, &big});  // a tie: the first operand's device
  CHECK(d.resident_device == 1);
  CHECK(d.h2d_bytes == 5000 * sizeof(int));
  big.to_device(1);  // now valid on devices 1 and 2: everything is on device 1
  std::tie(d, all) = describe({&small, &big, &other});
  CHECK(d.resident_device == 1);
  CHECK(d.h2d_bytes == 100 * sizeof(int));
  std::tie(d, all) = describe({&big, &other});
  CHECK(all);
  CHECK(d.h2d_bytes == 0);
  std::tie(d, all) = describe({&host});  // nothing on a device: the least used one, later
  CHECK(d.resident_device == -1);
  CHECK_FALSE(all);
}

TEST_CASE("a device out of memory leaves the data on the device that has it") {
  Running r;
  std::vector<std::unique_ptr<veda::detail::DeviceApi>> devs;
  veda::detail::PoolOptions tiny;
  tiny.limit = 1 << 20;
  devs.push_back(HostDevice::async(50, 1));
  devs.push_back(HostDevice::async(50, 2, tiny));
  static_cast<HostDevice&>(*devs[1]).set_index(1);
  r.st().install_devices(std::move(devs));
  HostDevice& d0 = r.dev(0);
  HostDevice& d1 = r.dev(1);
  Array<int> big(std::size_t{1} << 19);  // 2 MiB
  write_on(d0, big, 5);
  CHECK_THROWS_AS(big.buffer()->device_read(d1, d1.stream()), veda::OutOfMemory);
  CHECK(big.valid_on_device(0));
  CHECK_FALSE(big.valid_on_device(1));
  big.to_device(1);  // a hint: the data simply stays where it was
  CHECK_FALSE(big.valid_on_device(1));
  CHECK(sum_on(d0, big) == 5 * (std::int64_t{1} << 19));
  CHECK(big[12345] == 5);
}

TEST_CASE("shutdown brings data home from every device") {
  Array<int> a(300), b(7);
  {
    Running r;
    write_on(r.dev(1), a, 4);
    write_on(r.dev(2), b, 9);
    CHECK(sum_on(r.dev(0), a) == 1200);  // a now on devices 0 and 1
  }
  CHECK(a.valid_on_host());
  CHECK_FALSE(a.valid_on_device());
  CHECK(a[299] == 4);
  CHECK(b.to_vector() == std::vector<int>(7, 9));
}

TEST_CASE("Array::to_device names a device the runtime uses") {
  Running r;
  Array<int> a(5);
  CHECK_THROWS_AS(a.to_device(3), veda::InvalidArgument);
  CHECK_THROWS_AS(a.to_device(-2), veda::InvalidArgument);
  CHECK(a.valid_on_host());
  Array<int> empty;
  empty.to_device(7);  // nothing to place
  a.to_device(2);
  CHECK(a.device() == 2);
}

TEST_CASE("a GPU call runs on the device it asks for, else where its data picked, else the least used of the idle ones") {
  Running r;
  RuntimeState& st = r.st();
  veda::detail::CallDesc d;
  CHECK(veda::detail::device_slot_for(st, d) == 0);  // nothing used anywhere: the first
  Array<int> held(1 << 12);
  held.to_device(0);
  CHECK(veda::detail::device_slot_for(st, d) == 1);  // device 0 holds data now
  Array<int> more(1 << 12);
  more.to_device(1);
  CHECK(veda::detail::device_slot_for(st, d) == 2);
  d.resident_device = 1;  // an operand is on device 1
  CHECK(veda::detail::device_slot_for(st, d) == 1);
  d.device = 0;  // asked for: wins over residency
  CHECK(veda::detail::device_slot_for(st, d) == 0);
}

TEST_CASE("a device's backlog: queued work adds after what is queued, drains with the clock, moves with finished calls") {
  Running r;
  veda::detail::DeviceApi& d = *r.st().device_at(1);
  const std::int64_t t = veda::detail::now_ns();
  CHECK(d.backlog_us(t) == 0);
  CHECK(d.queue_work(100, t) == t + 100'000);
  CHECK(d.backlog_us(t) == doctest::Approx(100));
  CHECK(d.queue_work(50, t + 20'000) == t + 150'000);  // queued behind the first
  CHECK(d.backlog_us(t + 20'000) == doctest::Approx(130));
  CHECK(d.backlog_us(t + 150'000) == 0);
  const std::int64_t u = t + 1'000'000;
  const std::int64_t first = d.queue_work(50, u);  // an idle device starts it now
  CHECK(d.backlog_us(u) == doctest::Approx(50));
  for (double bad : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN()}) CHECK(d.queue_work(bad, u) == first);
  d.queue_work(30, u);
  d.work_done(first, u + 10'000);  // the first finished 40 us early: the second starts now
  CHECK(d.backlog_us(u + 10'000) == doctest::Approx(30));
  const std::int64_t late = d.queue_work(20, u + 10'000);  // due at u + 60 us
  d.work_done(late - 20'000, u + 15'000);  // one due at u + 40 us, done 25 us early
  CHECK(d.backlog_us(u + 15'000) == doctest::Approx(20));
  d.work_done(u + 10'000, u + 30'000);  // one 20 us late: what follows it is too
  CHECK(d.backlog_us(u + 30'000) == doctest::Approx(25));
  d.work_done(u + 2'000'000, u + 30'000);  // more than is queued: idle, not negative
  CHECK(d.backlog_us(u + 30'000) == 0);
}

TEST_CASE("not asked, a GPU call goes where it would finish first: past a busy device when copying is quicker") {
  Running r;
  RuntimeState& st = r.st();
  const double mib_us = (1 << 20) / st.profile().gpu.h2d_staged_gbps * 1e-3;  // one MiB in from the host
  Array<int> a(1 << 18);  // 1 MiB
  a.to_device(1);         // on device 1 and the host
  Array<int> only1(1 << 18);
  write_on(r.dev(1), only1, 3);  // on device 1 alone: elsewhere it comes device to device
  auto pick = [&](std::initializer_list<const Array<int>*> ops) {
    veda::detail::CallDesc d;
    veda::detail::CopyIn copy_in;
    for (const Array<int>* x : ops) copy_in.add(d, *x, x->device(), x->bytes());
    copy_in.finish(d);
    return std::make_pair(int{d.resident_device}, d.h2d_bytes);
  };
  const std::int64_t now = veda::detail::now_ns();
  st.device_at(1)->queue_work(mib_us / 4, now);  // busy for less than the copy takes: stay
  CHECK(pick({&a}) == std::make_pair(1, std::size_t{0}));
  st.device_at(1)->queue_work(1e6, now);  // busy for a second: the copy to device 0 is quicker
  CHECK(pick({&a}) == std::make_pair(0, a.bytes()));
  CHECK(pick({&only1, &a}).first == 0);  // device to device still beats a second's wait
  st.device_at(0)->queue_work(2e6, now);  // device 0 busier still: device 2 (the first free one)
  CHECK(pick({&a}) == std::make_pair(2, a.bytes()));

  // Nothing on a device: every device copies the same, so the one free first.
  veda::detail::CallDesc host_only;
  CHECK(veda::detail::device_slot_for(st, host_only) == 2);
  st.device_at(2)->queue_work(3e6, now);
  CHECK(veda::detail::device_slot_for(st, host_only) == 1);
}

TEST_CASE("a large call passes over a device without room for what it moves there, unless none has room") {
  Running r;
  RuntimeState& st = r.st();
  auto devices = [](std::size_t first_limit, std::size_t others) {
    std::vector<std::unique_ptr<veda::detail::DeviceApi>> devs;
    for (int i = 0; i < 3; ++i) {
      veda::detail::PoolOptions o;
      o.limit = i == 0 ? first_limit : others;
      devs.push_back(HostDevice::async(50, static_cast<std::uint64_t>(i + 1), o));
      static_cast<HostDevice&>(*devs.back()).set_index(i);
    }
    return devs;
  };
  st.install_devices(devices(std::size_t{1} << 20, std::size_t{1} << 30));  // device 0: 1 MiB
  veda::detail::CallDesc big;
  big.h2d_bytes = std::size_t{96} << 20;  // 96 MiB in from the host
  CHECK(veda::detail::device_slot_for(st, big) == 1);  // all idle and empty, but device 0 is too small
  veda::detail::CallDesc small;
  small.h2d_bytes = std::size_t{512} << 10;
  CHECK(veda::detail::device_slot_for(st, small) == 0);  // under the check's threshold: the first

  Array<int> a(1 << 16);  // 256 KiB, on device 0 (which has room for it)
  a.to_device(0);
  const veda::detail::HeldOperand held[] = {{a.buffer(), a.bytes()}};
  CHECK(veda::detail::pick_device(held, 1, 0) == 0);  // the data is there
  CHECK(veda::detail::pick_device(held, 1, std::size_t{96} << 20) == 1);  // with 96 MiB more: no room there

  st.install_devices(devices(std::size_t{1} << 20, std::size_t{1} << 20));  // no device has room
  CHECK(veda::detail::device_slot_for(st, big) == 0);  // the best regardless; its memory check then says no
}

TEST_CASE("the scheduler queues a GPU call's predicted time on its device; the next call goes to an idle one") {
  using namespace veda::detail;
  PlannedGpuRuntime planned;
  RuntimeState& st = planned.st;
  auto [site, d] = planned_gpu_map("queued", std::size_t{1} << 20);
  Plan first = begin_call(veda::get_runtime(), site, d);
  REQUIRE(first.tier == Tier::Cuda);
  const std::size_t slot = RuntimeState::thread_device();
  CHECK(slot == 0);  // all idle and empty: the first
  const float predicted = first.bucket->gpu_us.load();
  CHECK(predicted > 0);
  CHECK(st.device_at(0)->backlog_us(now_ns()) > 0);
  CHECK(st.device_at(0)->backlog_us(now_ns()) <= predicted);
  Plan second = begin_call(veda::get_runtime(), site, d);  // the first is still queued
  CHECK(RuntimeState::thread_device() == 1);
  end_call(veda::get_runtime(), first, d, true);  // synchronised: its share leaves device 0
  CHECK(st.device_at(0)->backlog_us(now_ns()) == 0);
  end_call(veda::get_runtime(), second, d, false);  // left on its stream: still queued
  CHECK(st.device_at(1)->backlog_us(now_ns()) > 0);
  Plan third = begin_call(veda::get_runtime(), site, d);
  CHECK(RuntimeState::thread_device() == 0);
  end_call(veda::get_runtime(), third, d, true);
}

TEST_CASE("calibration measures the copy rate between every ordered pair of devices, and frees what it used") {
  Running r;
  RuntimeState& st = r.st();
  veda::detail::MachineProfile p = st.profile();
  p.other_gpus.assign(2, p.gpu);
  veda::detail::calibrate_peers(st.all_devices(), p, std::size_t{4} << 20);
  for (std::size_t to = 0; to < 3; ++to) {
    const auto& in = p.gpu_at(to).peer_in_gbps;
    REQUIRE(in.size() == 3);
    for (std::size_t from = 0; from < 3; ++from) {
      CAPTURE(from);
      CAPTURE(to);
      if (from == to)
        CHECK(in[from] == 0);
      else
        CHECK(in[from] > 0);
    }
    CHECK(st.device_at(to)->pool().stats().bytes_in_use == 0);
  }
  // A single device has no pairs: nothing measured, nothing set.
  veda::detail::MachineProfile single = st.profile();
  veda::detail::calibrate_peers({st.device_at(0)}, single);
  CHECK(single.gpu.peer_in_gbps.empty());
}

TEST_CASE("each device is judged by its own figures: its host link, the links into it") {
  Running r;
  RuntimeState& st = r.st();
  const veda::detail::MachineProfile base = st.profile();
  veda::detail::MachineProfile p = base;
  p.other_gpus.assign(2, p.gpu);
  // Devices 0 and 1 behind slow host links; device 2 fast.
  p.gpu.h2d_staged_gbps = p.other_gpus[0].h2d_staged_gbps = 0.5;
  st.set_profile(p);
  veda::detail::CallDesc host_only;
  host_only.h2d_bytes = std::size_t{1} << 20;
  CHECK(veda::detail::device_slot_for(st, host_only) == 2);  // all idle: the quickest copy

  // Data on device 1 alone, which is busy: the device with the faster link
  // from device 1 wins (device 2), not the first (device 0).
  p = base;
  p.other_gpus.assign(2, p.gpu);
  p.gpu.peer_in_gbps = {0, 0.5, 0};
  p.other_gpus[1].peer_in_gbps = {0, 200, 0};
  st.set_profile(p);
  Array<int> only1(1 << 18);
  write_on(r.dev(1), only1, 3);
  st.device_at(1)->queue_work(1e6, veda::detail::now_ns());
  const veda::detail::HeldOperand held[] = {{only1.buffer(), only1.bytes()}};
  CHECK(veda::detail::pick_device(held, 1, 0) == 2);
  p.other_gpus[1].peer_in_gbps = {0, 0.1, 0};  // now device 0's link is the faster
  st.set_profile(p);
  CHECK(veda::detail::pick_device(held, 1, 0) == 0);
  st.set_profile(base);
}

TEST_CASE("the scheduler predicts a GPU call with the figures of the device it would run on") {
  using namespace veda::detail;
  PlannedGpuRuntime planned;
  RuntimeState& st = planned.st;
  MachineProfile p = st.profile();
  p.other_gpus.assign(2, p.gpu);
  p.other_gpus[0].h2d_staged_gbps = p.gpu.h2d_staged_gbps / 10;  // device 1's host link: ten times slower
  st.set_profile(p);
  CHECK(&st.profile_for(0) == &st.profile());
  CHECK(st.profile_for(1).gpu.h2d_staged_gbps == p.other_gpus[0].h2d_staged_gbps);
  CHECK(st.profile_for(7).gpu.h2d_staged_gbps == p.gpu.h2d_staged_gbps);  // not described: the first's
  auto [site, d] = planned_gpu_map("per-device", std::size_t{1} << 22);
  Plan first = begin_call(veda::get_runtime(), site, d);
  REQUIRE(RuntimeState::thread_device() == 0);
  const float on0 = first.bucket->gpu_us.load();
  // Devices 0 and 2 busy for seconds: the next goes to 1 despite its link.
  st.device_at(0)->queue_work(1e7, now_ns());
  st.device_at(2)->queue_work(1e7, now_ns());
  Plan second = begin_call(veda::get_runtime(), site, d);
  REQUIRE(RuntimeState::thread_device() == 1);
  const float on1 = second.bucket->gpu_us.load();
  // 16 MiB in: the slower link adds about 9 x its time on device 0's link.
  const double extra = 9.0 * static_cast<double>(d.h2d_bytes) / p.gpu.h2d_staged_gbps * 1e-3;
  CHECK(on1 > on0 + 0.8 * extra);
  end_call(veda::get_runtime(), first, d, true);
  end_call(veda::get_runtime(), second, d, true);
}

TEST_CASE("each device learns its own GPU times: what one device measured does not decide another's calls") {
  using namespace veda::detail;
  PlannedGpuRuntime planned;
  auto [site, desc] = planned_gpu_map("own-history", std::size_t{1} << 22);
  desc.placement = veda::Placement::Auto;  // serial or cuda, by what the call's device measured
  // The truth, injected: cuda 0.2 ms on device 0 and 50 ms on device 1, serial 5 ms.
  auto run = [&, &site = site, &desc = desc](int device) {
    CallDesc c = desc;
    c.device = device_byte(device);
    Plan p = begin_call(veda::get_runtime(), site, c);
    if (p.tier == Tier::Cuda) CHECK(p.device_slot == device);
    const std::int64_t t = p.tier != Tier::Cuda ? 5'000'000 : device == 0 ? 200'000 : 50'000'000;
    end_call(veda::get_runtime(), p, c, true, t);
    return p.tier;
  };
  for (int i = 0; i < 6; ++i) run(0);
  CHECK(run(0) == Tier::Cuda);
  // Device 1 learns from its own runs: with device 0's samples mixed in,
  // the lower median stayed at 0.2 ms and kept it on cuda.
  Tier on1 = Tier::Cuda;
  for (int i = 0; i < 6; ++i) on1 = run(1);
  CHECK(on1 == Tier::Serial);
  // Device 0's settled decision was made for it: it still holds there.
  for (int i = 0; i < 3; ++i) CHECK(run(0) == Tier::Cuda);
  CHECK(run(1) == Tier::Serial);
}

TEST_CASE("exploration and re-measurement are booked per device: a GPU tier explored on one is unexplored on another") {
  using namespace veda::detail;
  BucketState b;
  std::vector<Estimate> est(2);
  est[0].tier = Tier::Cuda;
  est[1].tier = Tier::TbbStatic;
  for (auto& e : est) {
    e.total_us = 10;
    e.overhead_us = 1;
  }
  const auto cuda = static_cast<std::size_t>(Tier::Cuda), tbb = static_cast<std::size_t>(Tier::TbbStatic);
  Choice c;
  c.explored = true;
  c.tier = Tier::Cuda;
  note_choice(b, c, 0, 1);
  c.tier = Tier::TbbStatic;
  note_choice(b, c, 0, 1);  // a CPU tier: one book whatever the device
  CHECK(history_view(b, est, 1000, 0, 1)[cuda].explored == 1);
  CHECK(history_view(b, est, 1000, 0, 0)[cuda].explored == 0);
  CHECK(history_view(b, est, 1000, 0, 2)[cuda].explored == 0);
  CHECK(history_view(b, est, 1000, 0, 0)[tbb].explored == 1);
  // A re-measurement's runs and stamp, and a measured run's stamp, too.
  c.tier = Tier::Cuda;
  c.refreshed = true;
  note_choice(b, c, 5000, 2);
  CHECK(b.book_on(Tier::Cuda, 2).refresh == kRefreshRuns - 1);
  CHECK(b.book_on(Tier::Cuda, 2).last_sample_ns == 5000);
  CHECK(b.book_on(Tier::Cuda, 0).refresh == 0);
  CHECK(b.book_on(Tier::Cuda, 1).last_sample_ns == 0);
}

TEST_CASE("stored history keeps each device's GPU samples: a later run starts each device from its own") {
  using namespace veda::detail;
  veda_test::PrivateCache cache("veda-device-history-");
  const std::string path = profile_cache_dir() + "/history-devices.json";
  static const TypeKey tag{&type_list_name<float>};
  Site& site = *site_for(&tag, "device-history", OpClass::Map, tier_bit(Tier::Serial) | tier_bit(Tier::Cuda), {});
  TypeSlot& slot = site.slot(&tag);
  BucketState& b = slot.bucket(20, 0, 0);
  const std::uint64_t gen = 424242;
  {
    std::lock_guard lock(b.mu);
    b.generation = gen;
    b.samples_on(Tier::Cuda, 0).add(100, 1 << 20);
    for (int i = 0; i < 3; ++i) b.samples_on(Tier::Cuda, 2).add(900, 1 << 20);  // device 2: nine times slower
    b.samples_on(Tier::Serial, 2).add(500, 1 << 20);  // a CPU tier: one history for every device
  }
  auto no_blas = [] { return std::string("none"); };
  {
    HistoryStore h(path, no_blas);
    REQUIRE(h.save(gen));
  }
  const HistoryStore h(path, no_blas);
  BucketState fresh;
  fresh.index = b.index;
  h.seed(site, slot, fresh);
  CHECK(fresh.samples_on(Tier::Cuda, 0).count() == 1);
  CHECK(fresh.samples_on(Tier::Cuda, 2).count() == 3);
  CHECK(fresh.samples_on(Tier::Cuda, 2).median_us() == doctest::Approx(900));
  CHECK(fresh.samples_on(Tier::Cuda, 1).count() == 0);
  CHECK(fresh.samples_on(Tier::Serial, 0).count() == 1);
  CHECK(fresh.book_on(Tier::Cuda, 2).seeded);  // unconfirmed until this run measures there
  CHECK(fresh.book_on(Tier::Cuda, 0).seeded);
  CHECK_FALSE(fresh.book_on(Tier::Cuda, 1).seeded);
}

TEST_CASE("a co-executed call's GPU part is shared by the idle devices of the call's device's kind") {
  using namespace veda::detail;
  PlannedGpuRuntime planned;
  RuntimeState& st = planned.st;
  const MachineProfile base = st.profile();
  MachineProfile p = base;
  p.other_gpus.assign(2, p.gpu);
  st.set_profile(p);
  auto idle = [&](std::size_t slot) { st.device_at(slot)->work_done(now_ns() + 1'000'000'000'000, now_ns()); };
  // The call's device leads, the others follow by backlog; busy ones are
  // left out where only idle ones may share.
  CHECK(share_devices(st, 1, true) == std::vector<std::size_t>{1, 0, 2});
  st.device_at(0)->queue_work(5000, now_ns());
  CHECK(share_devices(st, 1, false) == std::vector<std::size_t>{1, 2, 0});
  CHECK(share_devices(st, 1, true) == std::vector<std::size_t>{1, 2});
  idle(0);
  // Taking the shares of a call on device 1: the others hold its predicted
  // time in their backlogs until released (the call's own device holds it
  // through the call's plan); two shares take the least busy other device.
  std::vector<DeviceShare> shares = take_shares(st, 1, 3, 500);
  REQUIRE(shares.size() == 3);
  CHECK(shares[0].slot == 1);
  CHECK(shares[0].due_ns == 0);
  CHECK(st.device_at(1)->backlog_us(now_ns()) == 0);
  CHECK(st.device_at(0)->backlog_us(now_ns()) > 0);
  CHECK(st.device_at(2)->backlog_us(now_ns()) > 0);
  release_shares(st, shares);
  for (std::size_t i = 0; i < 3; ++i) CHECK(st.device_at(i)->backlog_us(now_ns()) == 0);
  st.device_at(0)->queue_work(5000, now_ns());
  shares = take_shares(st, 1, 2, 500);
  REQUIRE(shares.size() == 2);
  CHECK(shares[1].slot == 2);
  release_shares(st, shares);
  idle(0);
  CHECK(take_shares(st, 1, 1, 500).size() == 1);
  // Another model, or a host link a third slower, is another kind: an equal
  // share would not finish with the others.
  p.other_gpus[1].name = "another GPU";
  st.set_profile(p);
  CHECK(share_devices(st, 0, true) == std::vector<std::size_t>{0, 1});
  p.other_gpus[1] = p.gpu;
  p.other_gpus[0].h2d_staged_gbps = p.gpu.h2d_staged_gbps / 1.5;
  st.set_profile(p);
  CHECK(share_devices(st, 0, true) == std::vector<std::size_t>{0, 2});
  st.set_profile(base);

  // The scheduler: a compute-heavy map of host data that the CPU and the
  // GPUs could share; with all three devices idle the model's split counts
  // three, with one busy two, and a call asking for a device is not split.
  static const TypeKey tag{&type_list_name<float>};
  Site& site = *site_for(&tag, "co-executed", OpClass::Map,
                         tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::Cuda) | tier_bit(Tier::CoExec),
                         veda::CostHint{5000, 0});
  CallDesc d;
  d.n = std::size_t{1} << 22;  // under kRoomCheckBytes (emulated devices report no free memory)
  d.type_key = &tag;
  d.bytes_per_elem = 8;
  d.h2d_bytes = d.d2h_bytes = d.n * 4;
  d.gpu_capable = d.nvcc_site = true;
  auto coexec_devices = [&](const Plan& plan) {
    const auto e = std::static_pointer_cast<const Explanation>(plan.explanation);
    REQUIRE(e);
    for (const auto& est : e->estimates)
      if (est.tier == Tier::CoExec) return est.gpu_devices;
    return 0;
  };
  d.forced_tier = Tier::CoExec;  // the split as the model makes it, whatever it chooses
  Plan all = begin_call(veda::get_runtime(), site, d);
  CHECK(coexec_devices(all) == 3);
  REQUIRE(all.tier == Tier::CoExec);
  CHECK(all.gpu_devices == 3);
  CHECK(all.gpu_fraction > 0.5);  // the CPU is far slower (2 threads, 5000 flops an element)
  end_call(veda::get_runtime(), all, d, true);
  d.forced_tier = Tier::Count;
  for (std::size_t i = 0; i < 3; ++i) idle(i);
  st.device_at(2)->queue_work(1e6, now_ns());
  d.n /= 2;  // (another bucket, each decided afresh)
  Plan two = begin_call(veda::get_runtime(), site, d);
  CHECK(coexec_devices(two) == 2);
  end_call(veda::get_runtime(), two, d, true);
  for (std::size_t i = 0; i < 3; ++i) idle(i);
  d.device = 1;
  d.n /= 2;
  Plan asked = begin_call(veda::get_runtime(), site, d);
  CHECK(coexec_devices(asked) == 1);
  end_call(veda::get_runtime(), asked, d, true);
}

TEST_CASE("veda::gpu offers cpu+gpu only to a map of host ranges into a host result") {
  // Contract (gpu.hpp): co-execution splits host ranges; a call with an
  // Array operand or output stays whole where its data lives.
  using namespace veda::detail;
  struct Key {};
  const veda::GpuOptions o;
  const std::vector<float> x(7);
  const Array<float> a(7);
  constexpr std::uint32_t co = tier_bit(Tier::CoExec);
  CHECK((veda::detail::kMapTiers & co) != 0);
  CHECK((describe_map<Key, float>(7, true, o, x, 2.0f).exclude_tiers & co) == 0);
  CHECK((describe_map<Key, float>(7, true, o, std::span<const float>(x)).exclude_tiers & co) == 0);
  CHECK((describe_map<Key, float>(7, false, o, x).exclude_tiers & co) != 0);  // into an Array
  CHECK((describe_map<Key, float>(7, true, o, x, a).exclude_tiers & co) != 0);
}

#if VEDA_HAS_CUDA
TEST_CASE("coexec_parts: the devices' shares and the CPU part cover the range once, in source order") {
  // Contract (detail/coexec.hpp), run with emulated devices: each share on
  // a helper holding its own device; a share failing recoverably redone on
  // the CPU; any other exception reaches the caller after every helper.
  using namespace veda::detail;
  Running r;
  veda::Runtime& rt = veda::get_runtime();
  Plan p;
  p.gpu_devices = 3;
  struct Part {
    std::size_t lo, hi;
    bool operator==(const Part&) const = default;
  };
  using veda::detail::coexec_parts;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1009}}) {
    for (std::size_t g : {std::size_t{0}, n / 2, n * 7 / 10, n}) {
      CAPTURE(n);
      CAPTURE(g);
      std::vector<int> hits(n, 0);
      std::vector<std::size_t> where(n, 99);  // the device slot, or 9 for the CPU
      auto parts = coexec_parts<Part>(
          rt, p, g, n,
          [&](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) ++hits[i], where[i] = RuntimeState::thread_device();
            return Part{lo, hi};
          },
          [&](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) ++hits[i], where[i] = 9;
            return Part{lo, hi};
          });
      CHECK(std::count(hits.begin(), hits.end(), 1) == static_cast<std::ptrdiff_t>(n));
      REQUIRE(!parts.empty());
      CHECK(parts.front().lo == 0);
      CHECK(parts.back().hi == n);
      for (std::size_t i = 1; i < parts.size(); ++i) CHECK(parts[i].lo == parts[i - 1].hi);
      // The first g elements in three equal shares, each on a device of its
      // own (the first share on the calling thread's); the rest on the CPU.
      auto share_of = [&](std::size_t i) {
        std::size_t s = 0;
        while (g * (s + 1) / 3 <= i) ++s;
        return s;
      };
      std::size_t device_of[3] = {99, 99, 99};
      for (std::size_t i = 0; i < n; ++i) {
        if (i >= g) {
          if (where[i] != 9) FAIL_CHECK("element " << i << " ran on " << where[i] << ", not the CPU");
          continue;
        }
        std::size_t& dev = device_of[share_of(i)];
        if (dev == 99) dev = where[i];
        if (where[i] != dev || dev > 2) FAIL_CHECK("element " << i << " ran on " << where[i]);
      }
      if (g > 2) CHECK(device_of[0] == RuntimeState::thread_device());
      for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b)
          if (device_of[a] != 99) CHECK(device_of[a] != device_of[b]);
    }
  }
  // The second share's device out of memory: the CPU redoes it; the parts stay in source order.
  std::vector<std::size_t> where(90, 99);
  auto parts = coexec_parts<Part>(
      rt, p, 60, 90,
      [&](std::size_t lo, std::size_t hi) {
        if (lo == 20) throw veda::OutOfMemory("device full");
        for (std::size_t i = lo; i < hi; ++i) where[i] = RuntimeState::thread_device();
        return Part{lo, hi};
      },
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) where[i] = 9;
        return Part{lo, hi};
      });
  CHECK(parts == std::vector<Part>{{0, 20}, {20, 40}, {40, 60}, {60, 90}});
  CHECK(where[0] == RuntimeState::thread_device());
  CHECK(where[25] == 9);
  CHECK(where[45] <= 2);
  CHECK(where[45] != where[0]);
  CHECK(where[89] == 9);
  // Other errors, from a share or from the CPU part, reach the caller.
  auto fine = [](std::size_t lo, std::size_t hi) { return Part{lo, hi}; };
  auto user_error = [](std::size_t, std::size_t) -> Part { throw std::runtime_error("user function failed"); };
  CHECK_THROWS_WITH(coexec_parts<Part>(rt, p, 60, 90, user_error, fine), "user function failed");
  CHECK_THROWS_WITH(coexec_parts<Part>(rt, p, 60, 90, fine, user_error), "user function failed");
  CHECK(coexec_parts<Part>(rt, p, 60, 90, fine, fine).size() == 4);  // still usable
}

TEST_CASE("a split matmul: C's first rows in equal shares on the devices, the rest on the CPU, equal to one GEMM") {
  // gemm_coexec (src/gemm_tiers.hpp) over three emulated devices; each
  // device share runs the reference GEMM on its rows and records its device.
  using namespace veda::detail;
  Running r;
  veda::Runtime& rt = veda::get_runtime();
  Plan p;
  p.gpu_devices = 3;
  for (const auto [m, k, n] : {std::tuple{0, 3, 5}, {1, 3, 5}, {7, 1, 1}, {1009, 13, 6}, {64, 0, 4}}) {
    for (double beta : {0.0, 0.5}) {
      for (float share : {0.0f, 0.5f, 1.0f}) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(beta);
        CAPTURE(share);
        GemmShape s{static_cast<std::size_t>(m), static_cast<std::size_t>(n), static_cast<std::size_t>(k)};
        s.alpha = 2;
        s.beta = beta;
        std::vector<double> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n), want;
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 17) - 8;
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) * 0.25;
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<double>(i % 3);
        want = c;
        veda::detail::cpu::gemm_reference(s, a.data(), b.data(), want.data());
        p.gpu_fraction = share;
        std::vector<std::size_t> row_device(s.m, 9);  // 9: the CPU
        std::atomic<bool> rows_match{true};  // (set on helper threads: checked after)
        gemm_coexec(rt, p, s, a.data(), b.data(), c.data(), [&](const GemmShape& part, const double* pa, double* pc) {
          veda::detail::cpu::gemm_reference(part, pa, b.data(), pc);
          if (pa != a.data() + (pc - c.data()) / s.n * s.k) rows_match = false;  // A's rows for C's
          const auto first = static_cast<std::size_t>(pc - c.data()) / s.n;
          for (std::size_t i = 0; i < part.m; ++i) row_device[first + i] = RuntimeState::thread_device();
        });
        CHECK(c == want);
        CHECK(rows_match);
        const auto g = coexec_gpu_count(p, s.m);
        for (std::size_t i = 0; i < s.m; ++i) {
          if (i >= g) CHECK(row_device[i] == 9);
          else CHECK(row_device[i] <= 2);
        }
        if (g >= 3) CHECK(row_device[0] != row_device[g - 1]);  // the first and last shares: two devices
      }
    }
  }
}

TEST_CASE("a split sort: the first keys in equal shares on the devices, the rest on the CPU, merged: equal to one sort") {
  // sort_coexec (src/sort_coexec.hpp) over three emulated devices; each
  // device share is sorted stably on the host, as the devices' radix sort
  // does, and records its device. Keys with many ties, -0.0 and NaNs.
  using namespace veda::detail;
  Running r;
  veda::Runtime& rt = veda::get_runtime();
  Plan p;
  p.gpu_devices = 3;
  auto before = [](float a, float b, bool descending) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return descending ? b < a : a < b;
  };
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1009}, std::size_t{100003}})
    for (float share : {0.0f, 0.5f, 1.0f})
      for (bool stable : {true, false})
        for (bool descending : {false, true}) {
          CAPTURE(n);
          CAPTURE(share);
          CAPTURE(stable);
          CAPTURE(descending);
          std::vector<float> keys(n);
          std::vector<std::uint64_t> values(n);
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t x = i * 7919 % 61;
            keys[i] = x == 0   ? std::numeric_limits<float>::quiet_NaN()
                      : x == 1 ? -0.0f
                               : static_cast<float>(x % 23) - 11;
            values[i] = i;
          }
          const std::vector<float> original = keys;
          std::vector<std::size_t> want(n);
          std::iota(want.begin(), want.end(), std::size_t{0});
          std::stable_sort(want.begin(), want.end(),
                           [&](std::size_t a, std::size_t b) { return before(original[a], original[b], descending); });
          p.gpu_fraction = share;
          std::vector<std::size_t> key_device(n, 9);  // 9: the CPU
          sort_coexec(rt, p, keys.data(), values.data(), sizeof(std::uint64_t), n, stable, descending,
                      [&](float* k, void* v, std::size_t len) {
                        const auto lo = static_cast<std::size_t>(k - keys.data());
                        for (std::size_t i = 0; i < len; ++i) key_device[values[lo + i]] = RuntimeState::thread_device();
                        cpu::sort_keys<float>(nullptr, k, v, sizeof(std::uint64_t), len, true, descending);
                      });
          // Stable: exactly the stable sort (keys bit for bit, values with
          // them); unstable: equal keys in any order, each value with its key.
          bool ordered = true, with_keys = true;
          std::vector<int> seen(n, 0);
          for (std::size_t i = 0; i < n; ++i) {
            const float got = keys[i], expected = original[want[i]];
            ordered &= stable ? std::memcmp(&got, &expected, sizeof(float)) == 0 && values[i] == want[i]
                              : !before(got, expected, descending) && !before(expected, got, descending);
            with_keys &= values[i] < n && std::memcmp(&keys[i], &original[values[i]], sizeof(float)) == 0;
            if (values[i] < n) ++seen[values[i]];
          }
          CHECK(ordered);
          CHECK(with_keys);
          CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(n));
          // The first g keys (by position before the sort) on the devices, each share on one, the rest on the CPU.
          const std::size_t g = coexec_gpu_count(p, n);
          bool placed = true;
          for (std::size_t i = 0; i < n; ++i) placed &= i < g ? key_device[i] <= 2 : key_device[i] == 9;
          CHECK(placed);
          if (g >= 3) CHECK(key_device[0] != key_device[g - 1]);
        }
}
#endif

TEST_CASE("Config::devices: a list of distinct indices, or all of them") {
  using veda::Config;
  const Config two = Config::builder().devices({1, 0}).build();
  CHECK(two.device() == 1);  // the first is the one used first
  CHECK(two.devices() == std::vector<int>{1, 0});
  CHECK(two.to_string().find("devices=1,0") != std::string::npos);
  CHECK(Config::builder().all_devices().build().all_devices());
  CHECK(Config::builder().devices({0, 1}).device(2).build().devices() == std::vector<int>{2});
  CHECK_THROWS_AS(Config::builder().devices({}).build(), veda::ConfigError);
  CHECK_THROWS_AS(Config::builder().devices({0, 0}).build(), veda::ConfigError);
  CHECK_THROWS_AS(Config::builder().devices({0, -1}).build(), veda::ConfigError);
  try {
    (void)Config::builder().devices({2, 3, 2}).build();
    FAIL("expected ConfigError");
  } catch (const veda::ConfigError& e) {
    CHECK(e.field() == "devices");
    CHECK(std::string(e.what()).find("twice") != std::string::npos);
  }
}

TEST_CASE("VEDA_EMULATE_DEVICES out of range stops start-up with a ConfigError; the next start works") {
  for (const char* bad : {"0", "17", "two", "3x"}) {
    CAPTURE(bad);
    setenv("VEDA_EMULATE_DEVICES", bad, 1);
    CHECK_THROWS_AS(veda::init(), veda::Error);
    CHECK_FALSE(veda::is_running());
  }
  setenv("VEDA_EMULATE_DEVICES", "2", 1);
  {
    Running r;
    CHECK(r.st().device_count() == 2);
  }
  setenv("VEDA_EMULATE_DEVICES", "3", 1);
}
