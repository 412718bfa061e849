// EmulatedStreams: host threads that behave like CUDA streams, so that the
// ordering bugs of a GPU runtime (a missing wait, a lost event, memory reused
// while another stream still reads it) show as wrong data on machines
// without a GPU.
//
// Each stream is a thread running its queue in order, sleeping a random
// 0..max_delay_us before each item, so that streams overtake each other
// unless they are ordered by events. Events behave like CUDA events: record()
// completes when the stream reaches it; wait() orders a stream after one.
//
// Thread-safety: every member function may be called concurrently.
// Destruction drains every queue, then joins the threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace veda::detail {

using StreamHandle = void*;
using EventHandle = void*;

class EmulatedStreams {
 public:
  EmulatedStreams(std::size_t count, unsigned max_delay_us, std::uint64_t seed);
  ~EmulatedStreams();
  EmulatedStreams(const EmulatedStreams&) = delete;
  EmulatedStreams& operator=(const EmulatedStreams&) = delete;

  std::size_t size() const noexcept { return lanes_.size(); }
  StreamHandle stream(std::size_t i) const noexcept;
  StreamHandle stream_for_this_thread() const noexcept;  // round robin over threads, as CudaDevice

  void enqueue(StreamHandle s, std::function<void()> work);
  EventHandle record(StreamHandle s);           // never nullptr
  void wait(StreamHandle s, EventHandle e);      // later work on s runs after e
  void host_wait(EventHandle e);
  bool ready(EventHandle e) noexcept;
  void release(EventHandle e) noexcept;
  void synchronize(StreamHandle s);
  void synchronize_all();

 private:
  struct Event;
  struct Lane;
  // A handle owns one reference: a stream may still have to fire or wait for
  // an event whose handle the caller has already released.
  using EventRef = std::shared_ptr<Event>;
  Lane& lane(StreamHandle s) const;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace veda::detail
