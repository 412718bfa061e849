// Contract: the public headers compile without warnings under -Wall -Wextra
// in a user's program (built with -Werror, so a warning breaks the build):
// each template a program is likely to instantiate is instantiated here.
#include <veda/veda.hpp>

#include <span>
#include <vector>

void veda_header_warnings() {
  std::vector<float> x(10, 1.0f), y(10);
  auto f = veda::gpu([](float a, float v) { return a * v; });
  y = f(2.0f, x);
  f.into(y, 2.0f, x);
  f.into(std::span<float>(y), 2.0f, std::span<const float>(x));
  veda::Array<float> a(10);
  f.into(a, 2.0f, x);
  veda::par_iter(veda::range(0, y.size())).for_each([&](std::size_t i) { y[i] += 1; });  // no stages
  veda::par_iter(x).for_each([](float) {});
  (void)veda::par_iter(x).filter([](float v) { return v > 0; }).map([](float v) { return 2 * v; }).collect();
  (void)veda::par_iter(x).zip(veda::range(10)).count();
  (void)veda::sum(x);
  (void)veda::max(a);
  std::vector<float> sc(x.size());
  veda::inclusive_scan(x, sc);
  std::vector<float> s = x;
  veda::sort(s);
  veda::Array<float> m(4, 4), t = veda::transpose(m), p = veda::matmul(m, t);
  (void)veda::stddev(m, 0);
  (void)veda::argmax(veda::Array<std::int32_t>(veda::Shape{2, 3}), -1);
  // Expressions: every kind of node, mixed types, conversion and in-place assignment.
  const veda::Array<std::int32_t> ia{1, 2, 3, 4};
  veda::Array<float> z = veda::where(m > 0, veda::exp(-m), veda::clamp(m * 2.0, -1, 1)) + veda::sqrt(veda::abs(m));
  z = (z - veda::mean(z, 0)) / (veda::stddev(z, 0) + 1e-6f);
  veda::assign(z, veda::pow(z, 2) + veda::maximum(z, 0.5f) - veda::minimum(z, veda::tanh(z)));
  (void)veda::eval(ia / 3 + (ia > 1) * 2.5);
  veda::ExprOptions serial;
  serial.tier = "serial";
  (void)veda::eval<std::int64_t>(ia * ia, serial);
  const veda::Array<float> stack(veda::Shape{2, 4, 4});
  (void)veda::matmul(stack, m);
  auto k = veda::gpu_kernel([](std::span<const float> in, std::span<float> out) { out[0] = in[0]; });
  k(x, y);
  veda::Array<float> b(4, 4);
  veda::parallel_for(veda::Box<2>{{1, 1}, {3, 3}}, veda::read(m), veda::write(b),
                     [](std::size_t i, std::size_t j, auto in, auto out) { out(i, j) = in(i - 1, j); });
  veda::parallel_for(veda::Extent<3>{1, 2, 2}, veda::read_write(b),
                     [](std::size_t, std::size_t j, std::size_t l, auto v) { v(j, l) += 1; });
  (void)veda::parallel_reduce(16, veda::read(b), [](std::size_t i, veda::View<const float> v) { return v[i]; },
                              0.0f, veda::Max{});
}
