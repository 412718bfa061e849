// veda::random: validation, one decision, the chosen tier.
#include "veda/random.hpp"

#include <cmath>
#include <limits>

#include "backends/cpu/random.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/random.hpp"
#endif

namespace veda::detail {
namespace {
using random::Options;
using Dist = RandomDist;

struct HostRanges {};
struct Arrays {};
template <class Operands, std::size_t Elem, Dist D>
struct RandomTag {};

// Per element: a Philox block (~80 integer operations) shared by 4 floats or
// 2 doubles, plus for normals a log, a sine, a cosine and a square root per
// pair. The site's history corrects these on each machine.
CostHint hint(std::size_t elem, Dist dist) {
  const double per_block = elem == 4 ? 4 : 2, normal = dist == Dist::Normal ? 25 : 0;
  return {80 / per_block + normal * (elem == 4 ? 1.0 : 2.0), static_cast<double>(elem)};
}

// A site per (operand kind, element type, distribution): each learns its own times.
template <class Operands>
Site& random_site(const Options& o, std::size_t elem, Dist dist) {
  constexpr std::uint32_t tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);
  auto site = [&]<std::size_t E, Dist D>() -> Site& {
    const char* name = D == Dist::Uniform ? "random.uniform" : "random.normal";
    if (o.name.empty()) {
      static Site* const s = site_for(&type_tag<RandomTag<Operands, E, D>>, name, OpClass::Map, tiers, hint(E, D));
      return *s;
    }
    return *site_for(&type_tag<RandomTag<Operands, E, D>>, o.name, OpClass::Map, tiers, hint(E, D));
  };
  if (elem == 4)
    return dist == Dist::Uniform ? site.template operator()<4, Dist::Uniform>()
                                 : site.template operator()<4, Dist::Normal>();
  return dist == Dist::Uniform ? site.template operator()<8, Dist::Uniform>()
                               : site.template operator()<8, Dist::Normal>();
}

// The parameters, in the element type, before any work.
template <class T>
void check(Dist dist, T p0, T p1) {
  const char* what = dist == Dist::Uniform ? "veda::random::uniform" : "veda::random::normal";
  auto bad = [&](const std::string& why) {
    throw InvalidArgument(std::string(what) + ": " + why + " (got " + std::to_string(p0) + ", " +
                          std::to_string(p1) + ")");
  };
  if (dist == Dist::Uniform) {
    if (!std::isfinite(p0) || !std::isfinite(p1)) bad("low and high must be finite");
    if (p0 > p1) bad("low must not exceed high");
    if (!std::isfinite(p1 - p0)) bad("high - low overflows the element type");
  } else {
    if (!std::isfinite(p0) || !std::isfinite(p1)) bad("mean and stddev must be finite");
    if (p1 < 0) bad("stddev must not be negative");
  }
}

void check(std::size_t elem, Dist dist, double p0, double p1) {
  if (elem == 4) check(dist, static_cast<float>(p0), static_cast<float>(p1));
  else check(dist, p0, p1);
}

void fill_cpu(Runtime& rt, Tier tier, void* out, std::size_t n, std::size_t elem, Dist dist, std::uint64_t seed,
              double p0, double p1) {
  CpuExecutor* par = tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr;
  const bool normal = dist == Dist::Normal;
  if (elem == 4)
    cpu::random_fill(par, static_cast<float*>(out), n, normal, seed, static_cast<float>(p0), static_cast<float>(p1));
  else
    cpu::random_fill(par, static_cast<double*>(out), n, normal, seed, p0, p1);
}

CallDesc random_desc(std::size_t n, std::size_t elem, const Options& o) {
  CallDesc d = op_desc(n, elem, o);
  d.bytes_per_elem = bytes16(elem);
  return d;
}

}  // namespace

void random_fill_span(void* out, std::size_t n, std::size_t elem, Dist dist, std::uint64_t seed, double p0, double p1,
               const random::Options& o) {
  check(elem, dist, p0, p1);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = random_desc(n, elem, o);
  describe_host_operands(d, 0, n * elem);
  run_op(
      rt, random_site<HostRanges>(o, elem, dist), d,
      [&](const Plan& p) { fill_cpu(rt, p.tier, out, n, elem, dist, seed, p0, p1); },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        gpu_bridge::DeviceTemp dout(rt, n * elem + 1, s);
        cuda::random_fill_device(dout.get(), n, elem, dist == Dist::Normal, seed, p0, p1,
                                 static_cast<cudaStream_t>(s));
        dev.copy_to_host(out, dout.get(), n * elem, s, false);
        return true;
#else
        return false;
#endif
      });
}

void random_fill_buffer(Buffer* out, std::size_t n, std::size_t elem, Dist dist, std::uint64_t seed, double p0, double p1,
                 const random::Options& o) {
  check(elem, dist, p0, p1);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = random_desc(n, elem, o);
  describe_buffers(d, {out});
  d.h2d_bytes = d.cpu_d2h_bytes = 0;  // out's old contents are never read, on either side
  run_op(
      rt, random_site<Arrays>(o, elem, dist), d,
      [&](const Plan& p) {
        if (n) fill_cpu(rt, p.tier, host_out(out, false), n, elem, dist, seed, p0, p1);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        cuda::random_fill_device(device_out(dev, out, s), n, elem, dist == Dist::Normal, seed, p0, p1,
                                 static_cast<cudaStream_t>(s));
        device_done({out}, s);
        return false;
#else
        return false;
#endif
      });
}

}  // namespace veda::detail
