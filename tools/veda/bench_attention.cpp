// `veda bench --op flash`: attention on the device, gpu-flash against the
// materialising gpu-naive, for bfloat16, half and float at head_dim 128
// (FlashAttention's benchmark shape), causal and not. One line a
// measurement, whitespace-separated, which scripts/attention_torch.py reads
// to put PyTorch's scaled_dot_product_attention beside it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tools/veda/commands.hpp"
#include "veda/veda.hpp"

namespace veda::cli {
namespace {

constexpr std::size_t kHeads = 16, kDim = 128;

// Median of 5 synchronised calls after 2 warm-ups, in us; < 0 if the tier
// refused (its message on stderr).
template <class T>
double time_attention(const Array<T>& q, const Array<T>& k, const Array<T>& v, bool causal, const char* tier) {
  std::vector<double> us;
  try {
    for (int i = 0; i < 7; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const Array<T> o = veda::attention(q, k, v, {.causal = causal, .tier = tier});
      veda::synchronize();
      if (i >= 2) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "  %s: %s\n", tier, e.what());
    return -1;
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

template <class T>
void rows(const char* type, const std::vector<std::size_t>& seqs) {
  for (std::size_t seq : seqs) {
    Array<T> q(Shape{1, kHeads, seq, kDim}), k(Shape{1, kHeads, seq, kDim}), v(Shape{1, kHeads, seq, kDim});
    for (Array<T>* a : {&q, &k, &v}) {
      std::size_t i = 0;
      for (auto& x : a->host()) x = T(static_cast<float>(i++ % 97) / 97.0f - 0.5f);
      a->to_device();  // operands resident: the kernels alone are timed
    }
    for (bool causal : {false, true}) {
      // FlashAttention's count: 4 flops a score for q k^T and p v, half of them causal.
      const double flops = 4.0 * kHeads * static_cast<double>(seq) * static_cast<double>(seq) * kDim / (causal ? 2 : 1);
      for (const char* tier : {"gpu-naive", "gpu-flash"}) {
        const double us = time_attention(q, k, v, causal, tier);
        if (us < 0) std::printf("%9s %6s %6zu %10s %12s %8s\n", type, causal ? "yes" : "no", seq, tier, "n/a", "n/a");
        else std::printf("%9s %6s %6zu %10s %12.1f %8.2f\n", type, causal ? "yes" : "no", seq, tier, us, flops / us * 1e-6);
      }
    }
  }
}
}  // namespace

void print_attention(const std::vector<std::size_t>& seqs) {
  if (!get_runtime().gpu_usable()) {
    std::printf("\nattention on the device: no usable GPU in this run, so no figures\n");
    return;
  }
  std::printf("\nattention on the device ([1, %zu, seq, %zu], median of 5 synchronised calls)\n", kHeads, kDim);
  std::printf("%9s %6s %6s %10s %12s %8s\n", "type", "causal", "seq", "tier", "us", "TFLOP/s");
  rows<bfloat16>("bfloat16", seqs);
  rows<half>("half", seqs);
  rows<float>("float", seqs);
}

}  // namespace veda::cli
