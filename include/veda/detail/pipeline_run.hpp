// par_iter planning and execution, phase by phase.
//
// Each phase is one decision at its own call site: the CPU tiers run the
// whole phase as one fused pass; when the phase holds a GPU segment (nvcc
// files), the GPU tiers run the stages before it on the CPU (their own
// decision), the segment on the device, and the stages after it on the CPU
// (another decision) — or finish on the device when the segment ends the
// pipeline and the terminal can (reductions, count, collect_array). Two more
// GPU tiers exist for a phase that is just a run of gpu_maps from a host
// source to the terminal: cuda-streamed (chunks through pinned staging,
// overlapping copies and kernels) and cpu+gpu (the range split so both
// devices finish together). Every decision joins the plan that
// last_decision() reports.
#pragma once

#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include "veda/detail/pipeline.hpp"
#include "veda/detail/pipeline_cpu.hpp"
#include "veda/detail/pipeline_gpu.hpp"
#include "veda/detail/pipeline_terminals.hpp"

namespace veda {
namespace detail::pipe {

template <class T>
struct VecFeed {  // a materialised phase output, read by the next phase
  using value_type = T;
  const std::vector<T>* v;
  std::size_t size() const noexcept { return v->size(); }
  const T& get(std::size_t i) const { return (*v)[i]; }
  const T* host() const noexcept { return v->data(); }
};

template <class F>
struct feed_traits {
  static constexpr bool index = false, span = false;
};
template <class I>
struct feed_traits<IndexSource<I>> {
  static constexpr bool index = true, span = false;
};
template <class T>
struct feed_traits<SpanSource<T>> {
  static constexpr bool index = false, span = true;
};

// The thread's plan record for last_decision(): begin, one entry per
// decision taken (a copy of the latest call), then finish.
void plan_begin() noexcept;
void plan_add() noexcept;
void plan_finish(const std::string& name, std::size_t size);

template <class Tag, int Role>
struct SiteTag {};
constexpr std::uint32_t kCpuTiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::TbbAuto);

// The site of one pipeline phase. The first name a call site uses (nearly
// always its only one) is remembered, so a repeated call skips the
// registry's lock; other names are looked up there (a hash, O(1)).
template <class Tag>
Site& pipeline_site(const std::string& name, std::uint32_t tiers) {
  struct Cached {
    Site* site;
    std::string name;
  };
  static std::atomic<const Cached*> first{nullptr};
  if (const Cached* c = first.load(std::memory_order_acquire); c && c->name == name) return *c->site;
  Site* s = site_for(&typeid(Tag), name, OpClass::Map, tiers, {});
  if (!first.load(std::memory_order_acquire)) {
    auto* fresh = new Cached{s, name};  // one per call site, never freed: sites live for the process too
    const Cached* expected = nullptr;
    if (!first.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) delete fresh;
  }
  return *s;
}

template <class R>
struct GpuPhase;  // pipeline_run_gpu.hpp (nvcc-compiled files)

template <class Src, class Stages, class Term, class Tag>
class Runner {
  using L = layout<Stages>;
  static constexpr std::size_t N = std::tuple_size_v<Stages>;
  using V0 = typename Src::value_type;

 public:
  Runner(Runtime& rt, const Stages& st, const Term& term, const std::string& name, Placement placement, bool strict,
         Tier forced)
      : rt_(rt), st_(st), term_(term), name_(name), placement_(placement), strict_(strict), forced_(forced) {
    check_placement(placement, name);
  }

  template <std::size_t I, class Feed>
  auto phase(const Feed& feed) {
    constexpr std::size_t E = L::phase_end(I);
    constexpr Segment seg = L::segment(I, E);
    const auto r = phase_range<I, E>(st_, feed.size());
    const std::size_t count = r.hi - r.lo;
    CallDesc d;
    d.n = count;
    d.type_key = &type_tag<Tag, std::integral_constant<std::size_t, I>>;
    d.placement = placement_;
    d.strict = strict_;
    d.forced_tier = forced_;
    bool on_dev = false, on_host = true;
    if constexpr (feed_traits<Feed>::span) {
      if constexpr (!std::is_void_v<typename Feed::ArrayOf>) {
        if (feed.array) {
          d.resident_device = device_byte(feed.array->device());  // -1: valid on no device
          on_dev = d.resident_device >= 0;
          on_host = feed.array->valid_on_host();
        }
      }
    }
    if (!on_host) d.cpu_d2h_bytes = count * sizeof(typename Feed::value_type);
    std::uint32_t tiers = kCpuTiers;
    if constexpr (seg.valid) {
      using VIn = value_at_t<V0, Stages, seg.g0>;
      using VOut = value_at_t<V0, Stages, seg.g1>;
      tiers |= tier_bit(Tier::Cuda) | (streamable<I, E, seg, Feed>() ? tier_bit(Tier::CudaStreamed) : 0) |
               (coexec_able<I, E, seg, Feed>() ? tier_bit(Tier::CoExec) : 0);
      d.bytes_per_elem = bytes16(sizeof(VIn) + sizeof(VOut));
      const bool input_on_device = seg.g0 == I && (feed_traits<Feed>::index || on_dev);
      d.h2d_bytes = input_on_device ? 0 : count * sizeof(VIn);
      d.d2h_bytes = seg.g1 == E && E == N && Term::device_ok && Term::kind != TermKind::Collect ? 0 : count * sizeof(VOut);
      d.any_on_device = d.all_on_device = input_on_device && count > 0;
      d.gpu_capable = d.nvcc_site = true;
    } else {
      d.bytes_per_elem = bytes16(sizeof(typename Feed::value_type) +
                                                    sizeof(value_at_t<V0, Stages, E>));
      d.nvcc_site = VEDA_GPU_SITE;
      if (d.placement == Placement::Gpu) d.placement = Placement::Auto;  // nothing here can use it
    }
    Plan p = begin_call(rt_, pipeline_site<SiteTag<Tag, 3 * static_cast<int>(I)>>(name_, tiers), d);
#if VEDA_GPU_SITE
    if constexpr (seg.valid) {
      if (tier_device(p.tier) == Device::Gpu && count > 0) {
        if (auto v = try_gpu_value(rt_, p, d, [&] { return GpuPhase<Runner>::template run<I, E, seg>(*this, feed, r, p, d); }))
          return std::move(*v);
      }
    }
#endif
    if (tier_device(p.tier) == Device::Gpu) p.tier = Tier::Serial;  // an empty phase
    return phase_cpu<I, E>(feed, r, p, d);
  }

 private:
  // Host access to a span feed (an Array is brought up to date only now).
  template <class Feed>
  static Feed bound(const Feed& f) {
    Feed b = f;
    if constexpr (feed_traits<Feed>::span) b.bind_host();
    return b;
  }

  template <std::size_t I, std::size_t E, class Feed, class R>
  auto phase_cpu(const Feed& raw, const R& r, const Plan& p, const CallDesc& d) {
    // The feed and range by value: the compiler then keeps their fields in
    // registers across a leaf's loop (by reference it reloaded them for
    // every element, and a map -> sum did not vectorise).
    // Maps only, the loop counts elements: a reduction's lanes call run(j,
    // j + 1) per element, which GCC 12 then knows runs once, and the lanes of
    // a map -> sum of doubles become vector loads and adds (they were eight
    // scalar ones per 64 bytes, 1.4x the oneTBB loop at 10^7), provided
    // reduce_pipeline_cpu does not add its one-element hint. With a filter
    // the index loop is kept: counting made the map -> filter -> map -> sum
    // of floats 1.1-1.2x slower (bench_par_iter's compute case).
    auto run = [&st = st_, feed = bound(raw), r](std::size_t j0, std::size_t j1, auto& sink) {
      if constexpr (L::has_filter(I, E)) {
        for (std::size_t j = j0; j < j1; ++j)
          if (!apply<I, E>(st, r, r.lo + j, feed.get(r.lo + j), sink)) return false;
      } else {
        for (std::size_t k = 0, m = j1 - j0; k < m; ++k)
          if (!apply<I, E>(st, r, r.lo + j0 + k, feed.get(r.lo + j0 + k), sink)) return false;
      }
      return true;
    };
    return finish<E>(p, d, r.hi - r.lo, std::bool_constant<!L::has_filter(I, E)>{}, run);
  }

  // Runs the terminal (E == N) or materialises for the next phase.
  // OneToOne: std::true_type when every input element yields one value.
  template <std::size_t E, class OneToOne, class Run>
  auto finish(const Plan& p, const CallDesc& d, std::size_t count, OneToOne one_to_one, const Run& run) {
    using Out = value_at_t<V0, Stages, E>;
    if constexpr (E == N) {
      auto result = term_.template cpu<Out>(rt_, p, count, one_to_one, run);
      end_call(rt_, p, d);
      plan_add();
      return result;
    } else {
      const std::vector<Out> mid = collect_cpu<Out>(rt_, p, count, one_to_one, run);
      end_call(rt_, p, d);
      plan_add();
      return phase<E>(VecFeed<Out>{&mid});
    }
  }

  template <std::size_t I, std::size_t E, Segment seg, class Feed>
  static constexpr bool streamable() {
    return seg.maps_only && seg.g0 == I && seg.g1 == E && E == N && Term::kind == TermKind::Collect &&
           !feed_traits<Feed>::index;
  }
  template <std::size_t I, std::size_t E, Segment seg, class Feed>
  static constexpr bool coexec_able() {
    return seg.maps_only && seg.g0 == I && seg.g1 == E && E == N &&
           (Term::kind == TermKind::Collect || (Term::kind == TermKind::Reduce && Term::device_ok));
  }

  friend struct GpuPhase<Runner>;
  Runtime& rt_;
  const Stages& st_;
  const Term& term_;
  const std::string& name_;
  Placement placement_;
  bool strict_;
  Tier forced_;
};

}  // namespace detail::pipe
}  // namespace veda

#if VEDA_GPU_SITE
#include "veda/detail/pipeline_run_gpu.hpp"
#endif
