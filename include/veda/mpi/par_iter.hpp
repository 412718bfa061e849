// veda/mpi/par_iter.hpp — pipelines over a DistArray.
//
//   double s = veda::mpi::par_iter(x).map([](double v) { return v * v; }).sum();
//   auto big = veda::mpi::par_iter(x).filter([](double v) { return v > 1; }).collect();
//
// Contract:
// - map, gpu_map and filter are local: each rank runs an ordinary
//   veda::par_iter over its part (placed, explained and telemetered like any
//   veda call; a gpu_map in a file nvcc compiles may run on the GPU).
// - for_each is local; collect gives a DistArray holding on each rank what
//   its part produced, in global order (a filter leaves ranks uneven).
// - sum, min, max, count and reduce are global: the local veda result, then
//   one collective; every rank returns the same value. `reduce`'s op must be
//   associative and commutative with `identity` its identity (as veda's).
// - Deterministic mode (Config::deterministic): floating-point sums and
//   every reduce are bitwise the same for any number of ranks and any
//   distribution of the same data. The data moves (at most a chunk per rank
//   boundary) so that fixed chunks of 2^16 source elements lie on one rank,
//   each chunk is reduced by veda (bitwise reproducible on any thread
//   count), and every rank folds the chunks' results in global order.
//   Otherwise sums use MPI_Allreduce and the order is MPI's.
// - A user function that throws on any rank: no rank returns a result
//   (veda/mpi/comm.hpp says what each rank throws).
//
// Thread-safety: as veda::par_iter, and collective (veda/mpi/comm.hpp).
#pragma once

#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/mpi/dist_array.hpp"
#include "veda/par_iter.hpp"
#include "veda/runtime.hpp"

namespace veda::mpi {

namespace detail {

inline constexpr std::size_t kFoldChunk = std::size_t{1} << 16;

// The counts of the same elements laid out so that each rank's run starts
// at a multiple of `chunk`: a chunk goes to the rank holding its first element.
std::vector<std::size_t> chunk_aligned(const std::vector<std::size_t>& counts, std::size_t chunk);

// MPI_SUM's type for V: float, double, or a 4- or 8-byte integer.
template <class V>
inline constexpr bool kHasSumType =
    std::is_same_v<V, float> || std::is_same_v<V, double> ||
    (std::is_integral_v<V> && !std::is_same_v<V, bool> && (sizeof(V) == 4 || sizeof(V) == 8));
template <class V>
MPI_Datatype sum_type() {
  if constexpr (std::is_same_v<V, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<V, double>) return MPI_DOUBLE;
  else if constexpr (std::is_signed_v<V>) return sizeof(V) == 8 ? MPI_INT64_T : MPI_INT32_T;
  else return sizeof(V) == 8 ? MPI_UINT64_T : MPI_UINT32_T;
}

bool deterministic();  // of the running veda runtime

struct Identity {
  template <class P>
  P operator()(P p) const {
    return p;
  }
};

}  // namespace detail

template <class T, class Build>
class DistPipeline {
  using Local = decltype(std::declval<const Build&>()(veda::par_iter(std::declval<const Array<T>&>())));

 public:
  using value_type = typename Local::value_type;

  DistPipeline(const DistArray<T>& src, Build b, ParIterOptions o) : src_(&src), build_(std::move(b)), opt_(std::move(o)) {}

  template <class F>
  auto map(F f) const {
    return extend([f](auto p) { return p.map(f); });
  }
  template <class F>
  auto gpu_map(F f) const {
    return extend([f](auto p) { return p.gpu_map(f); });
  }
  template <class P>
  auto filter(P p) const {
    return extend([p](auto q) { return q.filter(p); });
  }

  template <class F>
  void for_each(F f) const {
    detail::guarded(comm(), "par_iter.for_each", [&] { local().for_each(f); });
  }
  DistArray<value_type> collect() const {
    auto part = detail::guarded(comm(), "par_iter.collect", [&] { return local().collect_array(); });
    return DistArray<value_type>::from_local(comm(), std::move(part));
  }
  std::size_t count() const {
    unsigned long long mine = detail::guarded(comm(), "par_iter.count", [&] { return local().count(); }), all = 0;
    detail::check(MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm().native()), "MPI_Allreduce");
    return static_cast<std::size_t>(all);
  }
  auto sum() const {
    using Acc = decltype(std::declval<Local>().sum());
    constexpr bool exact = std::is_integral_v<Acc>;
    if (!exact && detail::deterministic())
      return chunked<Acc>("par_iter.sum", [](auto p) { return p.sum(); }, Acc{}, [](Acc a, Acc b) { return a + b; });
    Acc mine = detail::guarded(comm(), "par_iter.sum", [&] { return local().sum(); });
    if constexpr (detail::kHasSumType<Acc>) {
      Acc all{};
      detail::check(MPI_Allreduce(&mine, &all, 1, detail::sum_type<Acc>(), MPI_SUM, comm().native()), "MPI_Allreduce");
      return all;
    } else {
      return fold(detail::allgather_values(comm(), std::vector<Acc>{mine}, "par_iter.sum"), Acc{},
                  [](Acc a, Acc b) { return a + b; });
    }
  }
  template <class U, class Op>
  U reduce(U identity, Op op) const {
    if (detail::deterministic())
      return chunked<U>("par_iter.reduce", [&](auto p) { return p.reduce(identity, op); }, identity, op);
    U mine = detail::guarded(comm(), "par_iter.reduce", [&] { return local().reduce(identity, op); });
    return fold(detail::allgather_values(comm(), std::vector<U>{mine}, "par_iter.reduce"), identity, op);
  }
  // NaN-propagating, as veda::par_iter's; nullopt when no rank has an element.
  std::optional<value_type> min() const { return extreme("par_iter.min", veda::detail::NanMin{}, [](auto p) { return p.min(); }); }
  std::optional<value_type> max() const { return extreme("par_iter.max", veda::detail::NanMax{}, [](auto p) { return p.max(); }); }

 private:
  template <class, class>
  friend class DistPipeline;

  template <class Stage>
  auto extend(Stage s) const {
    auto b = [prev = build_, s](auto p) { return s(prev(p)); };
    return DistPipeline<T, decltype(b)>(*src_, std::move(b), opt_);
  }
  const Comm& comm() const { return src_->comm(); }
  Local local() const { return build_(veda::par_iter(src_->local(), opt_)); }

  template <class V, class Op>
  static V fold(const std::vector<V>& parts, V init, const Op& op) {
    for (const V& v : parts) init = op(init, v);
    return init;
  }

  // Deterministic mode: chunk-aligned partial results, folded in order.
  template <class V, class Term, class Op>
  V chunked(const char* op_name, const Term& term, V init, const Op& op) const {
    const std::size_t cols = src_->cols();
    std::vector<std::size_t> counts(src_->rows_per_rank());
    for (auto& c : counts) c *= cols;
    const auto aligned = detail::chunk_aligned(counts, detail::kFoldChunk);
    const std::vector<T> mine = detail::redistribute<T>(comm(), src_->local().host(), counts, aligned, op_name);
    auto parts = detail::guarded(comm(), op_name, [&] {
      std::vector<V> out;
      for (std::size_t i = 0; i < mine.size(); i += detail::kFoldChunk) {
        std::span<const T> chunk(mine.data() + i, std::min(detail::kFoldChunk, mine.size() - i));
        out.push_back(term(build_(veda::par_iter(chunk, opt_))));
      }
      return out;
    });
    return fold(detail::allgather_values(comm(), parts, op_name), init, op);
  }

  template <class Pick, class Term>
  std::optional<value_type> extreme(const char* op_name, Pick pick, const Term& term) const {
    struct Part {
      bool has;
      value_type v;
    };
    Part mine = detail::guarded(comm(), op_name, [&] {
      auto m = term(local());
      return m ? Part{true, *m} : Part{false, value_type{}};
    });
    std::optional<value_type> best;
    for (const Part& p : detail::allgather_values(comm(), std::vector<Part>{mine}, op_name))
      if (p.has) best = best ? pick(*best, p.v) : p.v;
    return best;
  }

  const DistArray<T>* src_;
  Build build_;
  ParIterOptions opt_;
};

// The DistArray must outlive the pipeline's terminal operation.
template <class T>
DistPipeline<T, detail::Identity> par_iter(const DistArray<T>& a, ParIterOptions o = {}) {
  if (o.name == "par_iter") o.name = "mpi.par_iter";
  return {a, detail::Identity{}, std::move(o)};
}

}  // namespace veda::mpi
