// image_filter: a 5 x 5 Gaussian blur over a batch of 100 grayscale
// images, two ways:
//  1. par_iter over the images, each blurred by plain C++ (the per-image
//     work is what veda schedules: serially, or across the oneTBB workers);
//  2. one gpu_kernel over the whole batch, with a CPU implementation and,
//     when this file is compiled by nvcc, a CUDA one: veda picks per call.
// Both must give the same pixels.
#include <veda/veda.hpp>

#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "example_util.hpp"

namespace {
constexpr int kImages = 100, kH = 256, kW = 256, kR = 2;  // radius 2: a 5 x 5 kernel
constexpr std::size_t kPixels = std::size_t{kH} * kW;

struct Kernel {
  float w[2 * kR + 1][2 * kR + 1];
};

Kernel gaussian(float sigma) {
  Kernel k{};
  float total = 0;
  for (int y = -kR; y <= kR; ++y)
    for (int x = -kR; x <= kR; ++x) total += k.w[y + kR][x + kR] = std::exp(-(x * x + y * y) / (2 * sigma * sigma));
  for (auto& row : k.w)
    for (float& v : row) v /= total;
  return k;
}

// One output pixel; edges clamp. Callable from host code and CUDA kernels.
VEDA_FN inline float blur_at(const float* img, const Kernel& k, int y, int x) {
  float s = 0;
  for (int dy = -kR; dy <= kR; ++dy)
    for (int dx = -kR; dx <= kR; ++dx) {
      const int yy = y + dy < 0 ? 0 : y + dy >= kH ? kH - 1 : y + dy;
      const int xx = x + dx < 0 ? 0 : x + dx >= kW ? kW - 1 : x + dx;
      s += k.w[dy + kR][dx + kR] * img[yy * kW + xx];
    }
  return s;
}

void blur_image(const float* in, float* out, const Kernel& k) {
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) out[y * kW + x] = blur_at(in, k, y, x);
}

#if VEDA_GPU_SITE
__global__ void blur_batch_kernel(const float* in, float* out, Kernel k, int images) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(images) * kPixels) return;
  const std::size_t img = i / kPixels, p = i % kPixels;
  out[i] = blur_at(in + img * kPixels, k, static_cast<int>(p / kW), static_cast<int>(p % kW));
}
#endif
}  // namespace

int main() {
  std::vector<float> images(kImages * kPixels);
  for (std::size_t i = 0; i < images.size(); ++i)
    images[i] = static_cast<float>(static_cast<std::uint32_t>(i * 2654435761u) >> 24) / 255.0f;
  const Kernel k = gaussian(1.2f);

  // 1. par_iter over images: each map call blurs one image; the result per
  //    image is its mean brightness.
  std::vector<float> blurred(images.size());
  std::vector<double> means;
  const double us1 = example::settled_us(
      [&] {
        means = veda::par_iter(veda::range(kImages), {.name = "blur images"})
                    .map([&](int img) {
                      blur_image(&images[img * kPixels], &blurred[img * kPixels], k);
                      double s = 0;
                      for (std::size_t p = 0; p < kPixels; ++p) s += blurred[img * kPixels + p];
                      return s / kPixels;
                    })
                    .collect();
      },
      5);
  example::report("par_iter: 100 images, 5x5 blur", us1);

  // 2. One kernel over the batch, CPU or CUDA.
  auto blur_batch = veda::gpu_kernel(
      [&](std::span<const float> in, std::span<float> out) {
        tbb::parallel_for(0, kImages, [&](int img) { blur_image(&in[img * kPixels], &out[img * kPixels], k); });
      },
#if VEDA_GPU_SITE
      [&](std::span<const float> in, std::span<float> out, veda::cuda_stream_t s) {
        const unsigned blocks = static_cast<unsigned>((in.size() + 255) / 256);
        blur_batch_kernel<<<blocks, 256, 0, s>>>(in.data(), out.data(), k, kImages);
      },
#endif
      {.cost = {.flops_per_elem = 2 * 25, .bytes_per_elem = 8}, .name = "blur batch"});
  std::vector<float> batch_out(images.size());
  const double us2 = example::settled_us([&] { blur_batch(images, batch_out); }, 5);
  example::report("gpu_kernel: the batch at once", us2);

  std::size_t differ = 0;
  for (std::size_t i = 0; i < images.size(); ++i) differ += std::abs(batch_out[i] - blurred[i]) > 1e-5f;
  std::printf("%-36s = mean brightness of image 0: %.4f; pixels that differ between the two: %zu\n", "", means[0],
              differ);
  return differ == 0 ? 0 : 1;
}
