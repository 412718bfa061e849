// One function body, two closures: why and how.
//
// nvcc compiles an extended __host__ __device__ lambda (VEDA_FN) into a
// type-erased wrapper on the host side, so CPU loops call it indirectly per
// element and cannot inline or vectorise it (13x slower for a saxpy loop on
// this project's CI machine). VEDA_LAMBDA((params), body) writes the body
// once and, under nvcc, expands to a Dual: a plain host lambda for the CPU
// tiers and an extended __device__ lambda for kernels. veda's GPU paths hand
// kernels only device_part(f), since a host-only closure type may not appear
// in a kernel's template arguments. A noexcept after the parameters applies
// to both closures. With a host compiler VEDA_LAMBDA is just
// the plain lambda. Captures are by value ([=]), as device code needs.
#pragma once

#include <type_traits>
#include <utility>

namespace veda {

template <class H, class D>
struct Dual {
  static constexpr bool veda_device = true;  // device-callable through device_part()
  H host;
  D device;
  template <class... A>
  auto operator()(A&&... a) const noexcept(noexcept(host(std::forward<A>(a)...)))
      -> decltype(host(std::forward<A>(a)...)) {
    return host(std::forward<A>(a)...);
  }
};

template <class H, class D>
Dual<H, D> dual(H h, D d) {
  return {std::move(h), std::move(d)};
}

namespace detail {
template <class F>
struct is_dual : std::false_type {};
template <class H, class D>
struct is_dual<Dual<H, D>> : std::true_type {};

// What a kernel may call: the device closure of a Dual, otherwise f itself.
template <class F>
const auto& device_part(const F& f) {
  if constexpr (is_dual<F>::value) return f.device;
  else return f;
}
}  // namespace detail
}  // namespace veda

#if defined(__CUDACC__)
#define VEDA_LAMBDA(params, ...) ::veda::dual([=] params __VA_ARGS__, [=] __device__ params __VA_ARGS__)
#else
#define VEDA_LAMBDA(params, ...) [=] params __VA_ARGS__
#endif
