// Contract: MemoryPool — size classes, reuse, best-fit splitting and
// coalescing, stream-ordered reuse, the limit, out-of-memory release-and-retry,
// trim, exact stats, and concurrent use. Runs the pool's real code over an
// upstream of host memory whose events and failures the test controls.
// veda::empty_cache() gives the runtime pool's cached memory back, and only
// that (on the asynchronous emulated device).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/memory_pool.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/array.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

using namespace veda::detail;

namespace {
constexpr std::size_t MiB = std::size_t{1} << 20;

// Host memory; events stay pending until complete() or synchronize(); the
// upstream can be told to refuse allocations beyond a capacity.
class TestUpstream : public Upstream {
 public:
  void* allocate(std::size_t bytes) noexcept override {
    if (held + bytes > capacity) return nullptr;
    held += bytes;
    ++allocs;
    return HostUpstream().allocate(bytes);
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    held -= bytes;
    ++frees;
    HostUpstream().deallocate(p, bytes);
  }
  EventHandle record(StreamHandle s) noexcept override {
    auto* e = new Ev{s, false};
    events.insert(e);
    return e;
  }
  bool ready(EventHandle e) noexcept override { return static_cast<Ev*>(e)->done; }
  void release(EventHandle e) noexcept override {
    if (!e) return;
    events.erase(static_cast<Ev*>(e));
    delete static_cast<Ev*>(e);
  }
  void synchronize() noexcept override {
    for (auto* e : events) e->done = true;
  }
  void complete(StreamHandle s) {
    for (auto* e : events)
      if (e->stream == s) e->done = true;
  }
  ~TestUpstream() override {
    for (auto* e : events) delete e;
  }

  struct Ev {
    StreamHandle stream;
    bool done;
  };
  std::set<Ev*> events;
  std::size_t capacity = static_cast<std::size_t>(-1);
  std::size_t held = 0, allocs = 0, frees = 0;
};

StreamHandle S1 = reinterpret_cast<StreamHandle>(1);
StreamHandle S2 = reinterpret_cast<StreamHandle>(2);

PoolOptions small_chunks(std::size_t chunk = 4 * MiB) {
  PoolOptions o;
  o.chunk = chunk;
  return o;
}
}  // namespace

TEST_CASE("size classes are geometric from 512 B to 1 MiB") {
  TestUpstream up;
  MemoryPool pool(up, {});
  CHECK(pool.class_size(0) == 512);
  CHECK(pool.class_size(1) == 512);
  CHECK(pool.class_size(512) == 512);
  CHECK(pool.class_size(513) == 1024);
  CHECK(pool.class_size(3000) == 4096);
  CHECK(pool.class_size(MiB) == MiB);
}

TEST_CASE("a freed small block is reused on the same stream") {
  TestUpstream up;
  MemoryPool pool(up, {});
  void* a = pool.allocate(1000, S1);
  pool.deallocate(a, S1);
  void* b = pool.allocate(900, S1);  // same class, same stream: a hit
  CHECK(b == a);
  const auto s = pool.stats();
  CHECK(s.allocations == 2);
  CHECK(s.cache_hits == 1);
  CHECK(s.cache_misses == 1);
  CHECK(s.upstream_allocations == 1);
  CHECK(s.hit_rate() == doctest::Approx(0.5));
  pool.deallocate(b, S1);
}

TEST_CASE("zero-byte allocations are distinct valid pointers") {
  TestUpstream up;
  MemoryPool pool(up, {});
  void* a = pool.allocate(0, S1);
  void* b = pool.allocate(0, S1);
  CHECK(a != nullptr);
  CHECK(a != b);
  pool.deallocate(a, S1);
  pool.deallocate(b, S1);
}

TEST_CASE("another stream reuses a block only after its event completes") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(2 * MiB));  // one large block per chunk
  SUBCASE("small") {
    void* a = pool.allocate(2048, S1);
    pool.deallocate(a, S1);  // S1 may still read it
    void* b = pool.allocate(2048, S2);
    CHECK(b != a);
    up.complete(S1);
    void* c = pool.allocate(2048, S2);
    CHECK(c == a);
    pool.deallocate(b, S2);
    pool.deallocate(c, S2);
  }
  SUBCASE("large") {
    void* a = pool.allocate(2 * MiB, S1);
    pool.deallocate(a, S1);
    void* b = pool.allocate(2 * MiB, S2);
    CHECK(b != a);
    up.complete(S1);
    void* c = pool.allocate(2 * MiB, S2);
    CHECK(c == a);
    pool.deallocate(b, S2);
    pool.deallocate(c, S2);
  }
}

TEST_CASE("large blocks split from one chunk and coalesce back") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(8 * MiB));
  char* a = static_cast<char*>(pool.allocate(3 * MiB, S1));
  char* b = static_cast<char*>(pool.allocate(3 * MiB, S1));
  CHECK(b == a + 3 * MiB);  // carved from the same chunk
  CHECK(up.allocs == 1);
  auto s = pool.stats();
  CHECK(s.bytes_reserved == 8 * MiB);
  CHECK(s.bytes_in_use == 6 * MiB);
  CHECK(s.largest_free_block == 2 * MiB);
  pool.deallocate(a, S1);
  pool.deallocate(b, S1);
  s = pool.stats();
  CHECK(s.largest_free_block == 8 * MiB);  // a + b + tail coalesced
  void* c = pool.allocate(7 * MiB, S1);
  CHECK(c == a);
  CHECK(up.allocs == 1);
  pool.deallocate(c, S1);
}

TEST_CASE("coalescing waits for another stream's pending work") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(8 * MiB));
  void* a = pool.allocate(4 * MiB, S1);
  void* b = pool.allocate(4 * MiB, S2);
  pool.deallocate(a, S1);
  pool.deallocate(b, S2);  // a's S1 event is pending: no merge
  CHECK(pool.stats().largest_free_block == 4 * MiB);
  CHECK(pool.trim() == 8 * MiB);  // synchronises, merges, releases the chunk
  const auto s = pool.stats();
  CHECK(s.bytes_reserved == 0);
  CHECK(s.largest_free_block == 0);
  CHECK(up.held == 0);
}

TEST_CASE("best fit picks the smallest free block that is big enough") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(16 * MiB));
  // Carve free holes of 2, 3 and 5 MiB separated by live blocks.
  char* h2 = static_cast<char*>(pool.allocate(2 * MiB, S1));
  void* g1 = pool.allocate(MiB + 1, S1);
  char* h5 = static_cast<char*>(pool.allocate(5 * MiB, S1));
  void* g2 = pool.allocate(MiB + 1, S1);
  char* h3 = static_cast<char*>(pool.allocate(3 * MiB, S1));
  void* g3 = pool.allocate(pool.stats().largest_free_block, S1);  // fill the chunk's tail
  pool.deallocate(h2, S1);
  pool.deallocate(h5, S1);
  pool.deallocate(h3, S1);
  void* p = pool.allocate(2 * MiB + MiB / 2, S1);
  CHECK(p == h3);
  CHECK(up.allocs == 1);
  for (void* q : {p, g1, g2, g3}) pool.deallocate(q, S1);
}

TEST_CASE("the limit bounds what the pool holds; cache is released and retried") {
  TestUpstream up;
  PoolOptions o = small_chunks(4 * MiB);
  o.limit = 8 * MiB;
  MemoryPool pool(up, o);
  void* a = pool.allocate(6 * MiB, S1);
  CHECK_THROWS_AS(pool.allocate(4 * MiB, S1), veda::OutOfMemory);
  auto s = pool.stats();
  CHECK(s.oom_retries == 1);
  CHECK(s.oom_failures == 1);
  CHECK(s.bytes_in_use == 6 * MiB);  // the failure changed nothing
  pool.deallocate(a, S1);  // 6 MiB cached
  void* b = pool.allocate(7 * MiB, S1);  // needs the cached chunk given back first
  s = pool.stats();
  CHECK(s.oom_retries == 2);
  CHECK(s.oom_failures == 1);
  CHECK(s.bytes_reserved == 7 * MiB);
  CHECK(s.bytes_reserved <= o.limit);
  pool.deallocate(b, S1);
}

TEST_CASE("an upstream failure releases cached small blocks and retries once") {
  TestUpstream up;
  up.capacity = 4096;
  MemoryPool pool(up, {});
  void* a = pool.allocate(4096, S1);
  pool.deallocate(a, S1);  // cached; upstream is now full
  void* b = pool.allocate(2048, S1);  // different class: cache released, retried
  CHECK(b != nullptr);
  CHECK(pool.stats().oom_retries == 1);
  CHECK_THROWS_AS(pool.allocate(4096, S1), veda::OutOfMemory);
  pool.deallocate(b, S1);
}

TEST_CASE("requests whose size overflows are refused") {
  TestUpstream up;
  MemoryPool pool(up, {});
  CHECK_THROWS_AS(pool.allocate(static_cast<std::size_t>(-1), S1), veda::OutOfMemory);
  CHECK_THROWS_AS(pool.allocate(static_cast<std::size_t>(-1) - 10, S1), veda::OutOfMemory);
  CHECK(pool.stats().bytes_reserved == 0);
}

TEST_CASE("freeing a foreign pointer is an InvalidArgument") {
  TestUpstream up;
  MemoryPool pool(up, {});
  int x = 0;
  CHECK_THROWS_AS(pool.deallocate(&x, S1), veda::InvalidArgument);
}

TEST_CASE("trim returns exactly the cached bytes") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(4 * MiB));
  void* keep = pool.allocate(1000, S1);
  void* s1 = pool.allocate(5000, S1);
  void* l1 = pool.allocate(2 * MiB, S1);
  pool.deallocate(s1, S2);
  pool.deallocate(l1, S2);
  const auto before = pool.stats();
  CHECK(before.bytes_cached == 8192 + 4 * MiB);
  CHECK(pool.trim() == before.bytes_cached);
  const auto after = pool.stats();
  CHECK(after.bytes_cached == 0);
  CHECK(after.bytes_reserved == after.bytes_in_use);
  CHECK(after.bytes_in_use == 1024);
  CHECK(up.held == 1024);
  pool.deallocate(keep, S1);
}

TEST_CASE("stats are exact through a sequence") {
  TestUpstream up;
  MemoryPool pool(up, small_chunks(4 * MiB));
  void* a = pool.allocate(100, S1);         // class 512
  void* b = pool.allocate(3 * MiB + 7, S1); // rounded to 256
  auto s = pool.stats();
  const std::size_t b_size = (3 * MiB + 7 + 255) / 256 * 256;
  CHECK(s.bytes_in_use == 512 + b_size);
  CHECK(s.bytes_requested == 100 + 3 * MiB + 7);
  CHECK(s.bytes_reserved == 512 + 4 * MiB);
  CHECK(s.bytes_cached == s.bytes_reserved - s.bytes_in_use);
  CHECK(s.peak_in_use == s.bytes_in_use);
  CHECK(s.largest_free_block == 4 * MiB - b_size);
  pool.deallocate(b, S1);
  s = pool.stats();
  CHECK(s.bytes_in_use == 512);
  CHECK(s.peak_in_use == 512 + b_size);
  CHECK(s.largest_free_block == 4 * MiB);
  CHECK(s.deallocations == 1);
  CHECK(s.allocations == 2);
  CHECK(s.cache_misses == 2);
  pool.deallocate(a, S1);
  CHECK(pool.stats().bytes_in_use == 0);
}

TEST_CASE("many threads allocating and freeing at once") {
  HostUpstream up;
  PoolOptions o = small_chunks(8 * MiB);
  MemoryPool pool(up, o);
  constexpr int kThreads = 8, kOps = 4000;
  std::vector<std::thread> threads;
  std::atomic<int> corrupt{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      auto* stream = reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(t + 1));
      for (int i = 0; i < kOps; ++i) {
        if (mine.size() < 16 && (rng() % 3 != 0 || mine.empty())) {
          const std::size_t n = rng() % 4 == 0 ? (rng() % (3 * MiB)) + 1 : rng() % 20000 + 1;
          auto* p = static_cast<unsigned char*>(pool.allocate(n, stream));
          std::memset(p, t + 1, n);  // a block shared with another thread would be overwritten
          mine.push_back({p, n});
        } else {
          auto k = rng() % mine.size();
          auto [p, n] = mine[k];
          if (std::any_of(p, p + n, [&](unsigned char c) { return c != t + 1; })) ++corrupt;
          pool.deallocate(p, stream);
          mine.erase(mine.begin() + static_cast<long>(k));
        }
      }
      for (auto [p, n] : mine) pool.deallocate(p, stream);
    });
  for (auto& th : threads) th.join();
  CHECK(corrupt.load() == 0);
  const auto s = pool.stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.allocations == s.deallocations);
  CHECK(s.cache_hits + s.cache_misses == s.allocations);
  pool.trim();
  CHECK(pool.stats().bytes_reserved == 0);
}

TEST_CASE("veda::empty_cache gives the runtime pool's cached device memory back, and only that") {
  CHECK(veda::empty_cache() == 0);  // no runtime
  veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
  CHECK(veda::empty_cache() == 0);  // no device
  auto owned = HostDevice::async(50, 3);
  HostDevice& dev = *owned;
  veda::get_runtime().state().install_device(std::move(owned));
  auto on_device = [&](veda::Array<int>& a) {
    void* s = dev.stream();
    a.buffer()->device_read(dev, s);
    a.buffer()->device_done(s);
  };
  std::vector<int> values(1 << 16);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int>(i * 7);
  veda::Array<int> kept{std::vector<int>(values)};
  on_device(kept);
  {
    veda::Array<int> dropped(std::size_t{4} << 20);  // 16 MiB: a chunk of its own
    on_device(dropped);
  }
  const auto before = veda::get_runtime().memory_stats().devices.at(0);
  REQUIRE(before.cached >= (std::size_t{16} << 20));
  const std::size_t freed = veda::empty_cache();
  CHECK(freed >= (std::size_t{16} << 20));
  CHECK(freed <= before.cached);
  const auto after = veda::get_runtime().memory_stats().devices.at(0);
  CHECK(after.cached == before.cached - freed);
  CHECK(after.used == before.used);  // the live Array keeps its device copy
  kept.to_host();
  CHECK(std::equal(values.begin(), values.end(), kept.host().begin()));
  CHECK(veda::empty_cache() > 0);  // kept's device copy, cached once it went home
  CHECK(veda::get_runtime().memory_stats().devices.at(0).cached == 0);
  veda::shutdown();
}
