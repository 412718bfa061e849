// cuBLAS called directly on resident data: the GPU tiers' yardstick.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "bench/matmul/contenders.hpp"

namespace bench::matmul {
namespace {
class Direct final : public CublasDirect {
 public:
  explicit Direct(std::size_t n) : n_(static_cast<int>(n)) {
    const std::size_t bytes = n * n * sizeof(float);
    for (float** p : {&a_, &b_, &c_}) cudaMalloc(reinterpret_cast<void**>(p), bytes);
    cudaMemset(a_, 0, bytes);
    cudaMemset(b_, 0, bytes);
    cublasCreate(&h_);
  }
  ~Direct() override {
    cublasDestroy(h_);
    cudaFree(a_);
    cudaFree(b_);
    cudaFree(c_);
  }
  void run(bool tf32) override {
    cublasSetMathMode(h_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    const float one = 1, zero = 0;
    cublasSgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &one, b_, n_, a_, n_, &zero, c_, n_);
    cudaDeviceSynchronize();
  }

 private:
  int n_;
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  cublasHandle_t h_ = nullptr;
};
}  // namespace

std::unique_ptr<CublasDirect> make_cublas_direct(std::size_t n) { return std::make_unique<Direct>(n); }

}  // namespace bench::matmul
