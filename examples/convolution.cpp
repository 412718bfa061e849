// convolution: a 7 x 7 box-and-ring filter over one 2000 x 3000 grayscale
// image with veda::parallel_for, the filter weights an Array of their own.
// Pixels near an edge read the nearest edge pixel (clamp). The same image
// through a plain serial loop must give the same pixels.
#include <veda/veda.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_util.hpp"

namespace {
constexpr std::size_t kH = 2000, kW = 3000;
constexpr long kR = 3;  // radius: 7 x 7 weights
constexpr long kK = 2 * kR + 1;

VEDA_FN inline std::size_t clamp_to(long v, std::size_t n) {
  return v < 0 ? 0 : static_cast<std::size_t>(v) >= n ? n - 1 : static_cast<std::size_t>(v);
}

// One output pixel; callable from host code and CUDA kernels.
VEDA_FN inline float convolve_at(veda::View<const float> img, veda::View<const float> w, std::size_t y, std::size_t x) {
  float s = 0;
  for (long dy = -kR; dy <= kR; ++dy)
    for (long dx = -kR; dx <= kR; ++dx)
      s += w(static_cast<std::size_t>(dy + kR), static_cast<std::size_t>(dx + kR)) *
           img(clamp_to(static_cast<long>(y) + dy, kH), clamp_to(static_cast<long>(x) + dx, kW));
  return s;
}
}  // namespace

int main() {
  veda::init();
  veda::Array<float> img(kH, kW), out(kH, kW), w(kK, kK);
  {
    auto p = img.host();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>((i * 2654435761u) % 256) / 255.0f;
    auto q = w.host();
    float total = 0;
    for (long y = 0; y < kK; ++y)
      for (long x = 0; x < kK; ++x) {
        const long d = std::max(std::abs(y - kR), std::abs(x - kR));
        total += q[y * kK + x] = d == kR ? 0.5f : 1.0f;  // a dimmer outer ring
      }
    for (float& v : q) v /= total;
  }
  auto filter = [&] {
    veda::parallel_for(veda::Extent<2>{kH, kW}, veda::read(img), veda::read(w), veda::write(out),
                       VEDA_LAMBDA((std::size_t y, std::size_t x, veda::View<const float> in, veda::View<const float> wt,
                                    veda::View<float> o),
                                   { o(y, x) = convolve_at(in, wt, y, x); }));
  };
  example::report("7x7 convolution, 2000 x 3000", example::settled_us(filter, 5));

  const auto src = img.host(), wt = w.host(), got = out.host();
  std::size_t bad = 0;
  for (std::size_t y = 0; y < kH; ++y)
    for (std::size_t x = 0; x < kW; ++x) {
      float s = 0;
      for (long dy = -kR; dy <= kR; ++dy)
        for (long dx = -kR; dx <= kR; ++dx)
          s += wt[(dy + kR) * kK + dx + kR] * src[clamp_to(static_cast<long>(y) + dy, kH) * kW +
                                                 clamp_to(static_cast<long>(x) + dx, kW)];
      bad += std::abs(s - got[y * kW + x]) > 1e-5f;
    }
  std::printf("pixels differing from a serial loop: %zu of %zu\n", bad, kH * kW);
  veda::shutdown();
  return bad == 0 ? 0 : 1;
}
