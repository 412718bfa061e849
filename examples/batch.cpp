// batch: the VedaRT guide's batch of matrices,
//   results = par_iter(list_of_matrices).gpu_map(lambda m: m @ m.T).collect()
// in C++ two ways: par_iter over a std::vector of Arrays with a matmul in
// the stage (a nested call: veda places it, oneTBB nests it in the outer
// loop), and one batched matmul over a 3-D Array (one cuBLAS strided-batched
// call on a GPU). 512 matrices of 64 x 64; both give the same products.
#include <veda/veda.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "example_util.hpp"

int main() {
  constexpr std::size_t count = 512, n = 64;
  std::vector<veda::Array<float>> list_of_matrices;
  veda::Array<float> stack(veda::Shape{count, n, n});
  for (std::size_t b = 0; b < count; ++b) {
    veda::Array<float> m(n, n);
    auto h = m.host();
    for (std::size_t i = 0; i < n * n; ++i) h[i] = std::sin(static_cast<float>(b * n * n + i));
    std::copy(h.begin(), h.end(), stack.host().begin() + b * n * n);
    list_of_matrices.push_back(std::move(m));
  }

  std::vector<veda::Array<float>> results;
  const double us_list = example::settled_us([&] {
    results = veda::par_iter(list_of_matrices)
                  .map([](const veda::Array<float>& m) { return veda::matmul(m, m, {.transpose_b = true}); })
                  .collect();
  });
  example::report("par_iter over 512 Arrays, m m^T", us_list);

  veda::Array<float> batched;
  const double us_batch =
      example::settled_us([&] { batched = veda::matmul(stack, stack, {.transpose_b = true}); });
  example::report("one 3-D matmul [512, 64, 64]", us_batch);

  double worst = 0;
  for (std::size_t b = 0; b < count; ++b)
    for (std::size_t i = 0; i < n * n; ++i)
      worst = std::max(worst, static_cast<double>(std::abs(results[b].host()[i] - batched.host()[b * n * n + i])));
  std::printf("%-36s   %zu products each way; largest difference %.2e\n", "", results.size(), worst);
  return results.size() == count && worst < 1e-3 ? 0 : 1;
}
