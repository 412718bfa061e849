// The GPU tiers of a par_iter phase (nvcc-compiled files only): the segment
// on the device with CPU groups before and after it, the streamed variant,
// and CPU+GPU co-execution. Friend of Runner (pipeline_run.hpp).
#pragma once

#include <optional>
#include <vector>

#include "veda/detail/coexec.hpp"
#include "veda/detail/pipeline_gpu.hpp"
#include "veda/detail/pipeline_run.hpp"

namespace veda::detail::pipe {

// What the GPU share of a co-executed phase produces besides the prefix.
template <class Term>
struct part_of {
  using type = int;
};
template <class Acc, class Op>
struct part_of<Reduce<Acc, Op>> {
  using type = Acc;
};

template <class Src, class Stages, class Term, class Tag>
struct GpuPhase<Runner<Src, Stages, Term, Tag>> {
  using R = Runner<Src, Stages, Term, Tag>;
  using V0 = typename Src::value_type;
  using L = layout<Stages>;
  static constexpr std::size_t N = std::tuple_size_v<Stages>;

  template <std::size_t I, std::size_t E, Segment seg, class Feed, class Range>
  static auto run(R& self, const Feed& feed, const Range& r, const Plan& p, const CallDesc& d) {
    using VIn = value_at_t<V0, Stages, seg.g0>;
    using VOut = value_at_t<V0, Stages, seg.g1>;
    if constexpr (R::template streamable<I, E, seg, Feed>()) {
      if (p.tier == Tier::CudaStreamed && host_ptr(feed)) return stream<I, E, seg>(self, feed, r, p, d);
    }
    if constexpr (R::template coexec_able<I, E, seg, Feed>()) {
      if (p.tier == Tier::CoExec && (feed_traits<Feed>::index || host_ptr(feed)))
        return coexec<I, E, seg>(self, feed, r, p, d);
    }
    void* s = gpu_bridge::stream(self.rt_);
    std::optional<gpu_bridge::DeviceTemp> staged;
    auto out = [&] {
      if constexpr (seg.g0 > I) {
        const std::vector<VIn> pre = pre_group<I, seg.g0>(self, feed, r);
        return run_segment<seg.g0, seg.g1, Stages, RangeAcc<VIn>, V0>(self.rt_, self.st_,
                                                                       RangeAcc<VIn>{stage_in(self, pre.data(), pre.size(), s, staged)},
                                                                       pre.size(), s);
      } else if constexpr (feed_traits<Feed>::index) {
        return run_segment<seg.g0, seg.g1, Stages, IndexAcc<VIn>, V0>(self.rt_, self.st_, IndexAcc<VIn>{feed.get(r.lo)},
                                                                      r.hi - r.lo, s);
      } else {
        const VIn* in = nullptr;
        if constexpr (feed_traits<Feed>::span) {
          if (feed.array) in = static_cast<const VIn*>(gpu_bridge::read(self.rt_, *feed.array->buffer(), s)) + r.lo;
        }
        if (!in) in = stage_in(self, host_ptr(feed) + r.lo, r.hi - r.lo, s, staged);
        auto o = run_segment<seg.g0, seg.g1, Stages, RangeAcc<VIn>, V0>(self.rt_, self.st_, RangeAcc<VIn>{in},
                                                                        r.hi - r.lo, s);
        if constexpr (feed_traits<Feed>::span) {
          if (feed.array) gpu_bridge::done(*feed.array->buffer(), s);
        }
        return o;
      }
    }();
    if constexpr (seg.g1 == E && E == N && Term::device_ok) {
      auto result = self.term_.template device<VOut>(self.rt_, out.data(), out.n, s);
      // Reductions and collect copied a result back (synchronised); the
      // others leave work queued and are timed only while the site learns.
      bool measured = Term::kind != TermKind::CollectArray && Term::kind != TermKind::Count;
      if (!measured && p.sync_for_timing) {
        gpu_bridge::synchronize(self.rt_, s);
        measured = true;
      }
      end_call(self.rt_, p, d, measured);
      plan_add();
      return result;
    } else {
      std::vector<VOut> host(out.n);
      gpu_bridge::copy_out(self.rt_, host.data(), out.data(), out.n * sizeof(VOut), s, false);
      end_call(self.rt_, p, d);
      plan_add();
      return post<I, seg.g1, E>(self, host, r);
    }
  }

 private:
  template <class Feed>
  static const typename Feed::value_type* host_ptr(const Feed& f) {
    if constexpr (feed_traits<Feed>::index) return nullptr;
    else if constexpr (feed_traits<Feed>::span) return f.array ? nullptr : f.data;
    else return f.host();
  }

  template <class T>
  static const T* stage_in(R& self, const T* host, std::size_t n, void* s, std::optional<gpu_bridge::DeviceTemp>& keep) {
    keep.emplace(self.rt_, std::max<std::size_t>(n, 1) * sizeof(T), s);
    gpu_bridge::copy_in(self.rt_, keep->get(), host, n * sizeof(T), s, false);
    return static_cast<const T*>(keep->get());
  }

  // Stages [I, K) on the CPU, materialised for the segment, with their own decision.
  template <std::size_t I, std::size_t K, class Feed, class Range>
  static auto pre_group(R& self, const Feed& raw, const Range& r) {
    using T = value_at_t<V0, Stages, K>;
    const Feed feed = R::bound(raw);
    CallDesc d;
    d.n = r.hi - r.lo;
    d.type_key = &type_tag<Tag, std::integral_constant<std::size_t, I>, T>;
    d.bytes_per_elem = bytes16(sizeof(typename Feed::value_type) + sizeof(T));
    d.placement = self.placement_ == Placement::Gpu ? Placement::Auto : self.placement_;
    const Plan p = begin_call(self.rt_, pipeline_site<SiteTag<Tag, 3 * static_cast<int>(I) + 1>>(self.name_, kCpuTiers), d);
    auto run = [&](std::size_t j0, std::size_t j1, auto& sink) {
      for (std::size_t j = j0; j < j1; ++j)
        if (!apply<I, K>(self.st_, r, r.lo + j, feed.get(r.lo + j), sink)) return false;
      return true;
    };
    std::vector<T> v = collect_cpu<T>(self.rt_, p, d.n, !L::has_filter(I, K), run);
    end_call(self.rt_, p, d);
    plan_add();
    return v;
  }

  // Stages [K, E) on the CPU over the segment's output, then the terminal or
  // the next phase.
  template <std::size_t I, std::size_t K, std::size_t E, class T, class Range>
  static auto post(R& self, const std::vector<T>& in, const Range& r) {
    CallDesc d;
    d.n = in.size();
    d.type_key = &type_tag<Tag, std::integral_constant<std::size_t, K>, T>;
    d.bytes_per_elem = bytes16(sizeof(T) + sizeof(value_at_t<V0, Stages, E>));
    d.placement = self.placement_ == Placement::Gpu ? Placement::Auto : self.placement_;
    const Plan p = begin_call(self.rt_, pipeline_site<SiteTag<Tag, 3 * static_cast<int>(I) + 2>>(self.name_, kCpuTiers), d);
    auto run = [&](std::size_t j0, std::size_t j1, auto& sink) {  // as phase_cpu's
      if constexpr (L::has_filter(K, E)) {
        for (std::size_t j = j0; j < j1; ++j)
          if (!apply<K, E>(self.st_, r, r.lo + j, in[j], sink)) return false;
      } else {
        for (std::size_t k = 0, m = j1 - j0; k < m; ++k)
          if (!apply<K, E>(self.st_, r, r.lo + j0 + k, in[j0 + k], sink)) return false;
      }
      return true;
    };
    return self.template finish<E>(p, d, in.size(), std::bool_constant<!L::has_filter(K, E)>{}, run);
  }

  // Host source -> gpu_maps -> collect, in chunks through pinned staging.
  template <std::size_t I, std::size_t E, Segment seg, class Feed, class Range>
  static auto stream(R& self, const Feed& feed, const Range& r, const Plan& p, const CallDesc& d) {
    using VIn = value_at_t<V0, Stages, seg.g0>;
    using VOut = value_at_t<V0, Stages, seg.g1>;
    const std::size_t count = r.hi - r.lo;
    std::vector<VOut> out(count);
    struct Ctx {
      decltype(compose_maps<seg.g0, seg.g1>(std::declval<const Stages&>())) f;
      int sms;
    } ctx{compose_maps<seg.g0, seg.g1>(self.st_), gpu_bridge::sm_count(self.rt_)};
    const gpu_bridge::StreamInput in{host_ptr(feed) + r.lo, sizeof(VIn)};
    gpu_bridge::pipelined_map(
        self.rt_, &in, 1, out.data(), sizeof(VOut), count,
        [](void* c, const void* const* i, void* o, std::size_t n, void* s) {
          auto* x = static_cast<Ctx*>(c);
          launch_map(x->f, static_cast<VOut*>(o), n, x->sms, static_cast<cudaStream_t>(s),
                     RangeAcc<VIn>{static_cast<const VIn*>(i[0])});
        },
        &ctx);
    end_call(self.rt_, p, d);
    plan_add();
    return out;
  }

  // The range split (detail/coexec.hpp): the GPU part, the first g
  // elements, in equal shares on p.gpu_devices devices of one kind while the
  // CPU's workers take the rest; results join in source order.
  template <std::size_t I, std::size_t E, Segment seg, class Feed, class Range>
  static auto coexec(R& self, const Feed& raw, const Range& r, const Plan& p, const CallDesc& d) {
    using VIn = value_at_t<V0, Stages, seg.g0>;
    using VOut = value_at_t<V0, Stages, seg.g1>;
    using Part = typename part_of<Term>::type;
    Runtime& rt = self.rt_;
    const Feed feed = R::bound(raw);
    const std::size_t count = r.hi - r.lo;
    std::vector<VOut> out(Term::kind == TermKind::Collect ? count : 0);
    // [lo, hi) of the range on the CPU: collected in place, or a partial reduction.
    auto on_cpu = [&](std::size_t lo, std::size_t hi) {
      const Plan cpu = coexec_cpu_plan(rt, p, hi - lo);
      auto run = [&](std::size_t j0, std::size_t j1, auto& sink) {  // maps only: counts (phase_cpu)
        for (std::size_t k = 0, m = j1 - j0, j = lo + j0; k < m; ++k)
          if (!apply<I, E>(self.st_, r, r.lo + j + k, feed.get(r.lo + j + k), sink)) return false;
        return true;
      };
      if constexpr (Term::kind == TermKind::Collect) {
        for_ranges(rt, cpu, hi - lo, [&](std::size_t j0, std::size_t j1) {
          VOut* dst = out.data() + lo + j0;
          auto sink = [&dst](auto&& v) {
            *dst++ = std::forward<decltype(v)>(v);
            return true;
          };
          run(j0, j1, sink);
        });
        return Part{};
      } else {
        return static_cast<Part>(self.term_.template cpu<VOut>(rt, cpu, hi - lo, std::true_type{}, run));
      }
    };
    auto on_device = [&](std::size_t lo, std::size_t hi) {
      const std::size_t len = hi - lo;
      void* s = gpu_bridge::stream(rt);
      std::optional<gpu_bridge::DeviceTemp> staged;
      auto seg_out = [&] {
        if constexpr (feed_traits<Feed>::index)
          return run_segment<seg.g0, seg.g1, Stages, IndexAcc<VIn>, V0>(rt, self.st_, IndexAcc<VIn>{feed.get(r.lo + lo)},
                                                                        len, s);
        else
          return run_segment<seg.g0, seg.g1, Stages, RangeAcc<VIn>, V0>(
              rt, self.st_, RangeAcc<VIn>{stage_in(self, host_ptr(feed) + r.lo + lo, len, s, staged)}, len, s);
      }();
      if constexpr (Term::kind == TermKind::Collect) {
        gpu_bridge::copy_out(rt, out.data() + lo, seg_out.data(), len * sizeof(VOut), s, false);
        return Part{};
      } else {
        return static_cast<Part>(self.term_.template device<VOut>(rt, seg_out.data(), len, s));
      }
    };
    const std::vector<Part> parts = coexec_parts<Part>(rt, p, coexec_gpu_count(p, count), count, on_device, on_cpu);
    end_call(rt, p, d);
    plan_add();
    if constexpr (Term::kind == TermKind::Collect) {
      return out;
    } else {
      Part acc = parts.front();
      for (std::size_t i = 1; i < parts.size(); ++i) acc = self.term_.combine(acc, parts[i]);
      return acc;
    }
  }
};

}  // namespace veda::detail::pipe
