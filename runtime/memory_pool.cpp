#include "runtime/memory_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "runtime/fault_injection.hpp"
#include "veda/error.hpp"

namespace veda::detail {
namespace {
std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }
}  // namespace

void* HostUpstream::allocate(std::size_t bytes) noexcept {
  return std::aligned_alloc(256, round_up(std::max<std::size_t>(bytes, 1), 256));
}
void HostUpstream::deallocate(void* p, std::size_t) noexcept { std::free(p); }

MemoryPool::MemoryPool(Upstream& upstream, PoolOptions options) : up_(upstream), opt_(options) {
  opt_.min_bin = round_up(std::max<std::size_t>(opt_.min_bin, 1), opt_.alignment);
  opt_.small_max = std::max(opt_.small_max, opt_.min_bin);
  for (std::size_t s = opt_.min_bin; s < opt_.small_max; s *= 2) bin_sizes_.push_back(s);
  bin_sizes_.push_back(round_up(opt_.small_max, opt_.alignment));
  opt_.small_max = bin_sizes_.back();
  small_free_.resize(bin_sizes_.size());
  st_.limit = opt_.limit;
}

MemoryPool::~MemoryPool() {
  std::lock_guard lock(mu_);
  up_.synchronize();
  for (std::size_t b = 0; b < small_free_.size(); ++b)
    for (auto& f : small_free_[b]) {
      up_.release(f.event);
      up_.deallocate(f.ptr, bin_sizes_[b]);
    }
  for (auto& [p, live] : live_)
    if (live.bin >= 0) up_.deallocate(p, live.size);
  for (auto& [size, b] : large_free_) up_.release(b->event);
  for (auto& c : chunks_) {
    for (Block* b = c->first; b;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    up_.deallocate(c->base, c->size);
  }
}

std::size_t MemoryPool::class_size(std::size_t bytes) const noexcept {
  return bin_sizes_[static_cast<std::size_t>(bin_of(std::max(bytes, opt_.min_bin)))];
}

int MemoryPool::bin_of(std::size_t bytes) const noexcept {
  auto it = std::lower_bound(bin_sizes_.begin(), bin_sizes_.end(), bytes);
  return static_cast<int>(it - bin_sizes_.begin());
}

bool MemoryPool::reusable(StreamHandle owner, EventHandle e, StreamHandle s) noexcept {
  return e == nullptr || owner == s || up_.ready(e);
}

void* MemoryPool::upstream_alloc(std::size_t bytes) {
  if (st_.bytes_reserved + bytes > opt_.limit || st_.bytes_reserved + bytes < bytes) return nullptr;
  void* p = up_.allocate(bytes);
  if (!p) return nullptr;
  st_.bytes_reserved += bytes;
  ++st_.upstream_allocations;
  return p;
}

void MemoryPool::upstream_free(void* p, std::size_t bytes) {
  up_.deallocate(p, bytes);
  st_.bytes_reserved -= bytes;
  ++st_.upstream_frees;
}

void* MemoryPool::small_from_cache(int bin, StreamHandle s) {
  auto& list = small_free_[static_cast<std::size_t>(bin)];
  // Most recently freed first: warmest in cache, most likely the same stream.
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if (!reusable(it->stream, it->event, s)) continue;
    void* p = it->ptr;
    up_.release(it->event);
    list.erase(std::next(it).base());
    return p;
  }
  return nullptr;
}

MemoryPool::Block* MemoryPool::large_from_cache(std::size_t bytes, StreamHandle s) {
  // Best fit: the smallest free block that is big enough and not still in use
  // by another stream. A few candidates are looked at, not the whole set.
  auto it = large_free_.lower_bound({bytes, nullptr});
  for (int scanned = 0; it != large_free_.end() && scanned < 32; ++it, ++scanned) {
    Block* b = it->second;
    if (!reusable(b->stream, b->event, s)) continue;
    large_free_.erase(it);
    return b;
  }
  return nullptr;
}

MemoryPool::Block* MemoryPool::grow(std::size_t bytes) {
  std::size_t size = std::max(bytes, round_up(opt_.chunk, opt_.alignment));
  void* p = size > bytes ? upstream_alloc(size) : nullptr;
  if (!p) {  // a whole chunk does not fit: ask for exactly what is needed
    size = bytes;
    p = upstream_alloc(size);
  }
  if (!p) return nullptr;
  auto chunk = std::make_unique<Chunk>(Chunk{static_cast<char*>(p), size, nullptr});
  chunk->first = new Block{chunk->base, size, chunk.get()};
  Block* b = chunk->first;
  chunks_.push_back(std::move(chunk));
  return b;
}

MemoryPool::Grant MemoryPool::allocate_locked(std::size_t rounded, StreamHandle s) {
  if (rounded <= opt_.small_max) {
    const int bin = bin_of(rounded);
    if (void* p = small_from_cache(bin, s)) return {p, nullptr, true};
    void* p = upstream_alloc(rounded);
    if (!p) {
      ++st_.oom_retries;
      release_cached_locked();
      p = upstream_alloc(rounded);
    }
    return {p, nullptr, false};
  }
  Block* b = large_from_cache(rounded, s);
  const bool hit = b != nullptr;
  if (!b) b = grow(rounded);
  if (!b) {
    ++st_.oom_retries;
    release_cached_locked();
    b = large_from_cache(rounded, s);
    if (!b) b = grow(rounded);
  }
  if (!b) return {nullptr, nullptr, false};
  if (b->size - rounded >= opt_.alignment) {
    // Split: the remainder stays free and keeps any pending event.
    Block* rest = new Block{b->ptr + rounded, b->size - rounded, b->chunk, b, b->next};
    rest->stream = b->stream;
    rest->event = b->event;
    b->event = nullptr;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = rounded;
    large_free_.insert({rest->size, rest});
  } else {
    up_.release(b->event);
    b->event = nullptr;
  }
  b->free = false;
  b->stream = s;
  return {b->ptr, b, hit};
}

void* MemoryPool::allocate(std::size_t bytes, StreamHandle stream) {
  fault_point(FaultKind::Alloc, "device memory pool allocation");
  std::lock_guard lock(mu_);
  const std::size_t rounded =
      bytes <= opt_.small_max ? class_size(bytes) : round_up(bytes, opt_.alignment);
  const Grant g = rounded < bytes ? Grant{} : allocate_locked(rounded, stream);  // < : overflow
  if (!g.ptr) {
    ++st_.oom_failures;
    throw OutOfMemory("device memory pool: cannot allocate " + std::to_string(bytes) +
                      " bytes (in use " + std::to_string(st_.bytes_in_use) + ", limit " +
                      std::to_string(opt_.limit) + ")");
  }
  live_.emplace(g.ptr, Live{rounded, bytes, g.block ? -1 : bin_of(rounded), g.block});
  ++st_.allocations;
  g.hit ? ++st_.cache_hits : ++st_.cache_misses;
  st_.bytes_in_use += rounded;
  st_.bytes_requested += bytes;
  st_.peak_in_use = std::max(st_.peak_in_use, st_.bytes_in_use);
  return g.ptr;
}

bool MemoryPool::compatible(const Block* freed, const Block* n) noexcept {
  return n->free && (n->event == nullptr || n->stream == freed->stream || up_.ready(n->event));
}

void MemoryPool::merge_into(Block* keep, Block* gone) {
  keep->size += gone->size;
  keep->next = gone->next;
  if (gone->next) gone->next->prev = keep;
  delete gone;
}

void MemoryPool::deallocate(void* p, StreamHandle stream) {
  std::lock_guard lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) throw InvalidArgument("device memory pool: pointer was not allocated here");
  const Live live = it->second;
  live_.erase(it);
  st_.bytes_in_use -= live.size;
  st_.bytes_requested -= live.requested;
  ++st_.deallocations;
  EventHandle ev = up_.record(stream);
  if (live.bin >= 0) {
    small_free_[static_cast<std::size_t>(live.bin)].push_back({p, stream, ev});
    return;
  }
  Block* b = live.block;
  b->free = true;
  b->stream = stream;
  b->event = ev;
  // The block just freed carries the newest event on its stream, so a merged
  // block keeps it and the neighbour's event is released.
  if (b->next && compatible(b, b->next)) {
    Block* n = b->next;
    large_free_.erase({n->size, n});
    up_.release(n->event);
    merge_into(b, n);
  }
  if (b->prev && compatible(b, b->prev)) {
    Block* prev = b->prev;
    large_free_.erase({prev->size, prev});
    up_.release(prev->event);
    prev->stream = b->stream;
    prev->event = b->event;
    merge_into(prev, b);
    b = prev;
  }
  large_free_.insert({b->size, b});
}

std::size_t MemoryPool::release_cached_locked() {
  up_.synchronize();  // every pending event has completed after this
  std::size_t freed = 0;
  for (std::size_t bin = 0; bin < small_free_.size(); ++bin) {
    for (auto& f : small_free_[bin]) {
      up_.release(f.event);
      upstream_free(f.ptr, bin_sizes_[bin]);
      freed += bin_sizes_[bin];
    }
    small_free_[bin].clear();
  }
  for (auto& [size, b] : large_free_) {
    up_.release(b->event);
    b->event = nullptr;
    b->stream = nullptr;
  }
  // Neighbours left apart while another stream used them can merge now.
  large_free_.clear();
  for (auto& c : chunks_)
    for (Block* b = c->first; b; b = b->next)
      if (b->free) {
        while (b->next && b->next->free) merge_into(b, b->next);
        large_free_.insert({b->size, b});
      }
  // Chunks that are one free block go back to the upstream.
  auto release_if_whole = [&](const std::unique_ptr<Chunk>& c) {
    Block* f = c->first;
    if (!f->free || f->size != c->size) return false;
    large_free_.erase({f->size, f});
    delete f;
    upstream_free(c->base, c->size);
    freed += c->size;
    return true;
  };
  chunks_.erase(std::remove_if(chunks_.begin(), chunks_.end(), release_if_whole), chunks_.end());
  return freed;
}

std::size_t MemoryPool::trim() {
  std::lock_guard lock(mu_);
  return release_cached_locked();
}

PoolStats MemoryPool::stats() const {
  std::lock_guard lock(mu_);
  PoolStats s = st_;
  s.bytes_cached = s.bytes_reserved - s.bytes_in_use;
  s.largest_free_block = large_free_.empty() ? 0 : large_free_.rbegin()->first;
  for (std::size_t bin = small_free_.size(); bin-- > 0;)
    if (!small_free_[bin].empty()) {
      s.largest_free_block = std::max(s.largest_free_block, bin_sizes_[bin]);
      break;
    }
  return s;
}

}  // namespace veda::detail
