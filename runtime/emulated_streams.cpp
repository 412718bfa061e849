#include "runtime/emulated_streams.hpp"

#include <atomic>
#include <chrono>
#include <random>

namespace veda::detail {

struct EmulatedStreams::Event {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  void set() {
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
  }
};

struct EmulatedStreams::Lane {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stop = false;
  std::mt19937_64 rng;
  unsigned max_delay_us;
  std::thread thread;

  Lane(unsigned delay, std::uint64_t seed) : rng(seed), max_delay_us(delay) {
    thread = std::thread([this] { run(); });
  }
  void run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty()) return;  // stopping, and drained
        work = std::move(queue.front());
        queue.pop_front();
      }
      if (max_delay_us) std::this_thread::sleep_for(std::chrono::microseconds(rng() % (max_delay_us + 1)));
      work();
    }
  }
  void push(std::function<void()> work) {
    std::lock_guard lock(mu);
    queue.push_back(std::move(work));
    cv.notify_one();
  }
};

EmulatedStreams::EmulatedStreams(std::size_t count, unsigned max_delay_us, std::uint64_t seed) {
  for (std::size_t i = 0; i < count; ++i) lanes_.push_back(std::make_unique<Lane>(max_delay_us, seed + i));
}

EmulatedStreams::~EmulatedStreams() {
  for (auto& l : lanes_) {
    {
      std::lock_guard lock(l->mu);
      l->stop = true;
    }
    l->cv.notify_one();
    l->thread.join();
  }
}

StreamHandle EmulatedStreams::stream(std::size_t i) const noexcept { return lanes_[i % lanes_.size()].get(); }

StreamHandle EmulatedStreams::stream_for_this_thread() const noexcept {
  static std::atomic<unsigned> next{0};
  thread_local unsigned mine = next.fetch_add(1, std::memory_order_relaxed);
  return stream(mine);
}

EmulatedStreams::Lane& EmulatedStreams::lane(StreamHandle s) const { return *static_cast<Lane*>(s); }

void EmulatedStreams::enqueue(StreamHandle s, std::function<void()> work) { lane(s).push(std::move(work)); }

EventHandle EmulatedStreams::record(StreamHandle s) {
  auto e = std::make_shared<Event>();
  lane(s).push([e] { e->set(); });
  return new EventRef(std::move(e));
}

void EmulatedStreams::wait(StreamHandle s, EventHandle e) {
  if (!e) return;
  EventRef ref = *static_cast<EventRef*>(e);
  lane(s).push([ref] { ref->wait(); });
}

void EmulatedStreams::host_wait(EventHandle e) {
  if (e) (*static_cast<EventRef*>(e))->wait();
}

bool EmulatedStreams::ready(EventHandle e) noexcept {
  if (!e) return true;
  Event& ev = **static_cast<EventRef*>(e);
  std::lock_guard lock(ev.mu);
  return ev.done;
}

void EmulatedStreams::release(EventHandle e) noexcept { delete static_cast<EventRef*>(e); }

void EmulatedStreams::synchronize(StreamHandle s) {
  EventHandle e = record(s);
  host_wait(e);
  release(e);
}

void EmulatedStreams::synchronize_all() {
  for (auto& l : lanes_) synchronize(l.get());
}

}  // namespace veda::detail
