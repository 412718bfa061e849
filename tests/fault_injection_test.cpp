// Contract: Config::faults / VEDA_FAULT make exactly the Nth device
// allocation or copy fail; the runtime recovers (a copy is retried once, an
// allocation that fails leaves the data on the host), the data is identical
// to a run without faults, the fault is counted (memory_stats, telemetry)
// and the runtime stays usable. Malformed specs are ConfigErrors naming the
// field or variable. Runs over the host-emulated device; the GPU paths
// (launch faults, GPU calls falling back to the CPU) are in
// fault_injection_gpu_test.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "runtime/fault_injection.hpp"
#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

using veda::Array;
using veda::detail::FaultKind;
using veda::detail::HostDevice;
using veda::detail::parse_fault_plan;

namespace {
// A runtime with `faults` armed and a host-emulated device installed.
struct Faulty {
  HostDevice* dev;
  explicit Faulty(const std::string& faults) {
    // Deterministic: a run with faults and one without must agree bit for bit.
    veda::init(veda::Config::builder().threads(2).telemetry(true).deterministic(1).faults(faults).build());
    auto d = std::make_unique<HostDevice>();
    dev = d.get();
    veda::get_runtime().state().install_device(std::move(d));
  }
  ~Faulty() { veda::shutdown(); }
  std::uint64_t injected() { return veda::get_runtime().memory_stats().faults_injected; }
};

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.5f);
  return v;
}
}  // namespace

TEST_CASE("fault specs: what parses, and errors that name the field") {
  const auto p = parse_fault_plan("alloc:3,launch:1,copy:2", "faults");
  CHECK(p.nth[static_cast<int>(FaultKind::Alloc)] == 3);
  CHECK(p.nth[static_cast<int>(FaultKind::Launch)] == 1);
  CHECK(p.nth[static_cast<int>(FaultKind::Copy)] == 2);
  CHECK_FALSE(parse_fault_plan("", "faults").any());
  for (const char* bad : {"alloc", "alloc:", "alloc:0", "alloc:-1", "alloc:1,", "memory:1", "alloc:1,alloc:2",
                          "copy:1x", ",copy:1", "copy:99999999999999999999"}) {
    CAPTURE(bad);
    try {
      veda::Config::builder().faults(bad).build();
      FAIL("accepted");
    } catch (const veda::ConfigError& e) {
      CHECK(e.field() == "faults");
      CHECK(e.value() == bad);
    }
  }
  auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "VEDA_FAULT") return "launch:zero";
    return std::nullopt;
  };
  CHECK_THROWS_AS(veda::apply_environment(veda::Config::builder().build(), env), veda::ConfigError);
  try {
    veda::apply_environment(veda::Config::builder().build(), env);
  } catch (const veda::ConfigError& e) {
    CHECK(e.field() == "VEDA_FAULT");
  }
}

TEST_CASE("an injected allocation failure leaves the data on the host, unchanged") {
  Faulty f("alloc:1");
  Array<float> a(ramp(1000));
  a.to_device();  // the first device allocation fails
  CHECK_FALSE(a.valid_on_device());
  CHECK(f.injected() == 1);
  CHECK(veda::telemetry::snapshot().faults.at("alloc") == 1);
  CHECK(std::vector<float>(a.host().begin(), a.host().end()) == ramp(1000));
  a.to_device();  // the second succeeds: the runtime is usable
  CHECK(a.valid_on_device());
  CHECK(f.injected() == 1);
}

TEST_CASE("an injected copy failure is retried once; the data arrives intact") {
  SUBCASE("host to device") {
    Faulty f("copy:1");
    Array<float> a(ramp(4099));
    a.to_device();
    CHECK(a.valid_on_device());
    CHECK(f.injected() == 1);
    CHECK(f.dev->h2d_copies == 1);  // the failed attempt copied nothing
    a.to_host();  // evicts: device to host
    CHECK(std::vector<float>(a.host().begin(), a.host().end()) == ramp(4099));
  }
  SUBCASE("device to host") {
    Faulty f("copy:2");
    Array<float> a(ramp(7));
    a.to_device();  // copy 1
    auto* p = static_cast<float*>(a.buffer()->device_write(*f.dev, f.dev->stream(), true));
    p[3] = -1.0f;  // what a kernel writing on the device does
    a.buffer()->device_done(f.dev->stream());
    CHECK(a[3] == -1.0f);  // copy 2 fails, is retried
    CHECK(f.injected() == 1);
    auto want = ramp(7);
    want[3] = -1.0f;
    CHECK(std::vector<float>(a.host().begin(), a.host().end()) == want);
  }
}

TEST_CASE("calls on data the faults touched give the results of a run without faults") {
  const auto x = ramp(100'003);
  double clean = 0;
  {
    veda::init(veda::Config::builder().threads(2).deterministic(1).build());
    clean = veda::sum(x);
    veda::shutdown();
  }
  for (const char* spec : {"alloc:1", "copy:1", "copy:2", "alloc:2,copy:1"}) {
    CAPTURE(spec);
    Faulty f(spec);
    Array<float> a(x);
    a.to_device();
    Array<float> b(x);
    b.to_device();
    CHECK(veda::sum(a) == clean);
    CHECK(veda::sum(b) == clean);
    CHECK(f.injected() >= 1);
  }
}

// Finding 8 of the GPU review: after a sticky device error, shutdown (or
// exit) copied device-resident Arrays home through a throwing path inside a
// destructor, which ends the process.
TEST_CASE("a device that fails for good: shutdown survives, lost data says so, a new runtime starts") {
  std::vector<float> want;
  {
    Faulty f("");
    Array<float> fine(ramp(1000)), lost(ramp(4099));
    fine.to_device();
    fine.to_host();  // valid on both: nothing to copy home
    lost.to_device();
    auto* p = static_cast<float*>(lost.buffer()->device_write(*f.dev, f.dev->stream(), true));
    p[0] = 42.0f;  // a kernel's result, only on the device
    lost.buffer()->device_done(f.dev->stream());
    f.dev->break_for_good();
    CHECK_THROWS_AS(lost.to_host(), veda::DeviceFault);  // tried (and retried), nothing half-copied
    veda::shutdown();  // copies home what it can; must not throw or terminate
    CHECK_THROWS_WITH_AS((void)lost[0], doctest::Contains("lost"), veda::DeviceError);
    CHECK(fine.to_vector() == ramp(1000));
    veda::init(veda::Config::builder().threads(2).build());
  }  // ~Faulty shuts the new runtime down
  veda::init();
  CHECK(veda::sum(ramp(10)) == doctest::Approx(50.0));
  veda::shutdown();
}
