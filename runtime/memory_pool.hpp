// MemoryPool: a stream-ordered caching allocator over an Upstream resource.
//
// Small requests (<= small_max) are rounded up to geometric size classes
// (512 B, 1 KiB, ... small_max) and cached per class, as CUB's caching
// allocator does. Larger requests are carved best-fit out of chunks taken from
// the upstream, split on allocation and coalesced with free neighbours on
// release, as RMM's and CuPy's pools do.
//
// Stream ordering: a block freed on stream S may still be read by work queued
// on S. It is reused at once for S, but for another stream only after the
// event recorded at free time has completed.
//
// Limits and failure: the pool never holds more than `limit` bytes from the
// upstream. When the upstream fails (or the limit is reached) it releases its
// cached blocks and retries once; if that fails too, allocate() throws
// veda::OutOfMemory and the caller falls back to the CPU.
//
// The pool knows nothing about CUDA: CudaUpstream (backends/cuda) and
// HostUpstream (here) plug in underneath, so the same code is tested on
// machines without a GPU.
//
// Thread-safety: every member function may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace veda::detail {

using StreamHandle = void*;  // cudaStream_t, or any id over a host upstream
using EventHandle = void*;   // cudaEvent_t; nullptr means "nothing pending"

class Upstream {
 public:
  virtual ~Upstream() = default;
  virtual void* allocate(std::size_t bytes) noexcept = 0;  // nullptr on failure
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  // An event completing after all work queued on `stream` so far; nullptr if
  // nothing can be pending (a synchronous upstream).
  virtual EventHandle record(StreamHandle stream) noexcept = 0;
  virtual bool ready(EventHandle e) noexcept = 0;
  virtual void release(EventHandle e) noexcept = 0;
  // Waits until all queued work has completed.
  virtual void synchronize() noexcept = 0;
};

// Host memory; work is synchronous, so no event is ever pending.
class HostUpstream : public Upstream {
 public:
  void* allocate(std::size_t bytes) noexcept override;
  void deallocate(void* p, std::size_t bytes) noexcept override;
  EventHandle record(StreamHandle) noexcept override { return nullptr; }
  bool ready(EventHandle) noexcept override { return true; }
  void release(EventHandle) noexcept override {}
  void synchronize() noexcept override {}
};

struct PoolOptions {
  std::size_t limit = std::numeric_limits<std::size_t>::max();  // bytes from upstream
  std::size_t alignment = 256;         // every block's size is a multiple
  std::size_t min_bin = 512;           // smallest size class
  std::size_t small_max = 1u << 20;    // largest size class
  std::size_t chunk = 32u << 20;       // large blocks come from chunks at least this big
};

struct PoolStats {
  std::size_t bytes_in_use = 0;        // live blocks, at their rounded size
  std::size_t bytes_requested = 0;     // live blocks, at the size asked for
  std::size_t bytes_reserved = 0;      // held from the upstream
  std::size_t bytes_cached = 0;        // reserved - in_use
  std::size_t peak_in_use = 0;
  std::size_t largest_free_block = 0;  // biggest block reusable without the upstream
  std::size_t limit = 0;
  std::uint64_t allocations = 0;       // successful allocate() calls
  std::uint64_t deallocations = 0;
  std::uint64_t cache_hits = 0;        // served without the upstream
  std::uint64_t cache_misses = 0;
  std::uint64_t upstream_allocations = 0;
  std::uint64_t upstream_frees = 0;
  std::uint64_t oom_retries = 0;       // cache released after an upstream failure
  std::uint64_t oom_failures = 0;      // allocate() threw OutOfMemory
  double hit_rate() const noexcept {
    return allocations ? static_cast<double>(cache_hits) / static_cast<double>(allocations) : 0.0;
  }
};

class MemoryPool {
 public:
  MemoryPool(Upstream& upstream, PoolOptions options);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Throws veda::OutOfMemory. A zero-byte request returns a valid, unique
  // pointer of the smallest class.
  void* allocate(std::size_t bytes, StreamHandle stream);
  // `p` must come from allocate(); `stream` is the last stream that used it.
  void deallocate(void* p, StreamHandle stream);
  // Returns every cached block (and wholly free chunk) to the upstream.
  std::size_t trim();
  PoolStats stats() const;
  const PoolOptions& options() const noexcept { return opt_; }

  // Size class of a small request, exposed for tests.
  std::size_t class_size(std::size_t bytes) const noexcept;

 private:
  struct Chunk;
  struct Block {
    char* ptr;
    std::size_t size;
    Chunk* chunk;
    Block* prev = nullptr;  // address-ordered neighbours in the chunk
    Block* next = nullptr;
    bool free = true;
    StreamHandle stream = nullptr;
    EventHandle event = nullptr;
  };
  struct Chunk {
    char* base;
    std::size_t size;
    Block* first;  // the block at `base`; merges always keep the lower block
  };
  struct SmallFree {
    void* ptr;
    StreamHandle stream;
    EventHandle event;
  };
  struct Live {
    std::size_t size;       // rounded
    std::size_t requested;
    int bin;                // -1 for large blocks
    Block* block;
  };
  using FreeSet = std::set<std::pair<std::size_t, Block*>>;

  struct Grant {
    void* ptr = nullptr;
    Block* block = nullptr;  // null for small blocks
    bool hit = false;
  };
  Grant allocate_locked(std::size_t rounded, StreamHandle s);
  void* small_from_cache(int bin, StreamHandle s);
  Block* large_from_cache(std::size_t bytes, StreamHandle s);
  Block* grow(std::size_t bytes);
  bool reusable(StreamHandle owner, EventHandle e, StreamHandle s) noexcept;
  void merge_into(Block* keep, Block* gone);
  bool compatible(const Block* freed, const Block* neighbour) noexcept;
  std::size_t release_cached_locked();
  void* upstream_alloc(std::size_t bytes);
  void upstream_free(void* p, std::size_t bytes);
  int bin_of(std::size_t bytes) const noexcept;

  Upstream& up_;
  PoolOptions opt_;
  mutable std::mutex mu_;
  std::vector<std::size_t> bin_sizes_;
  std::vector<std::vector<SmallFree>> small_free_;
  FreeSet large_free_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::unordered_map<void*, Live> live_;
  PoolStats st_;
};

// A block for one scope (kernel scratch, a library's workspace), given back
// to the pool on exit, ordered after the work queued on `stream`.
class PoolBlock {
 public:
  PoolBlock(MemoryPool& pool, std::size_t bytes, StreamHandle stream)
      : pool_(pool), stream_(stream), p_(pool.allocate(bytes, stream)) {}
  ~PoolBlock() { pool_.deallocate(p_, stream_); }  // throws only for a foreign pointer
  PoolBlock(const PoolBlock&) = delete;
  PoolBlock& operator=(const PoolBlock&) = delete;
  void* get() const noexcept { return p_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(p_);
  }

 private:
  MemoryPool& pool_;
  StreamHandle stream_;
  void* p_;
};

}  // namespace veda::detail
