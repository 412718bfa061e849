#include "backends/cuda/gemm.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/handle_pool.hpp"

namespace veda::detail::cuda {
namespace {

void check_blas(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError(std::string(what) + " failed (cuBLAS status " + std::to_string(st) + ")");
}

auto& blas_pool() {
  static auto* p = new HandlePool<cublasHandle_t, cublasStatus_t>(cublasCreate, "cuBLAS");
  return *p;
}
auto& lt_pool() {
  static auto* p = new HandlePool<cublasLtHandle_t, cublasStatus_t>(cublasLtCreate, "cuBLASLt");
  return *p;
}

// linear_fused's cuBLASLt setup for one shape: descriptors, layouts and the
// algorithm the heuristic chose (the heuristic alone costs tens to hundreds
// of µs of host time). Host objects only, so destroying them is always safe.
struct LtPlan {
  std::mutex mu;  // held while a call sets the bias pointer and enqueues
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;  // what the algorithm needs, at most kLtWorkspace
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// 32 MiB: what NVIDIA recommends on Hopper; less rules out algorithms.
constexpr std::size_t kLtWorkspace = std::size_t{32} << 20;
constexpr std::uint32_t kMaxAlign = 256;  // cuBLASLt's default assumption

// The largest power of two (up to 256) dividing the address: an algorithm
// chosen for aligned operands may not run on less aligned ones.
std::uint32_t alignment(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return a == 0 ? kMaxAlign : static_cast<std::uint32_t>(std::min<std::uintptr_t>(a & (~a + 1), kMaxAlign));
}

// device, m, n, k, epilogue, TF32, operand alignment
using LtKey = std::tuple<int, std::size_t, std::size_t, std::size_t, int, bool, std::uint32_t>;

class LtCache {
 public:
  std::shared_ptr<LtPlan> find(const LtKey& key) {
    std::lock_guard lock(mu_);
    const auto it = plans_.find(key);
    return it == plans_.end() ? nullptr : it->second;
  }
  // Keeps the first plan made for `key` if two threads raced to make one.
  std::shared_ptr<LtPlan> insert(const LtKey& key, std::shared_ptr<LtPlan> plan) {
    std::lock_guard lock(mu_);
    if (plans_.size() >= kMaxPlans) plans_.clear();  // plans in use live on in their callers
    return plans_.try_emplace(key, std::move(plan)).first->second;
  }

 private:
  static constexpr std::size_t kMaxPlans = 256;
  std::mutex mu_;
  std::map<LtKey, std::shared_ptr<LtPlan>> plans_;
};

LtCache& lt_cache() {
  static auto* c = new LtCache;  // kept for the process, like the handle pools
  return *c;
}

std::shared_ptr<LtPlan> make_plan(cublasLtHandle_t h, std::size_t m, std::size_t n, std::size_t k,
                                  cublasLtEpilogue_t epi, bool tf32, const float* bias, std::uint32_t align) {
  auto p = std::make_shared<LtPlan>();
  // Column-major view: y^T (n x m) = w (n x k, stored as k x n: op T) * x^T (k x m).
  check_blas(cublasLtMatmulDescCreate(&p->op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
             "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "EPILOGUE");
  if (bias)
    check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "BIAS_POINTER");
  const auto M = static_cast<std::uint64_t>(n), N = static_cast<std::uint64_t>(m), K = static_cast<std::uint64_t>(k);
  check_blas(cublasLtMatrixLayoutCreate(&p->la, CUDA_R_32F, K, M, static_cast<std::int64_t>(K)), "layout A");
  check_blas(cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_32F, K, N, static_cast<std::int64_t>(K)), "layout B");
  check_blas(cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_32F, M, N, static_cast<std::int64_t>(M)), "layout C");
  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)> pref_guard(
      pref, cublasLtMatmulPreferenceDestroy);
  check_blas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kLtWorkspace,
                                                  sizeof kLtWorkspace),
             "workspace preference");
  for (const auto a : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                       CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    check_blas(cublasLtMatmulPreferenceSetAttribute(pref, a, &align, sizeof align), "alignment preference");
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  check_blas(cublasLtMatmulAlgoGetHeuristic(h, p->op, p->la, p->lb, p->lc, p->lc, pref, 1, &heur, &found), "heuristic");
  if (found == 0) throw DeviceError("cuBLASLt found no algorithm for this linear layer");
  p->algo = heur.algo;
  p->workspace = heur.workspaceSize;
  return p;
}

}  // namespace

template <class T>
void gemm(CudaDevice& dev, GemmTier tier, const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream) {
  dev.make_current();
  if (s.m == 0 || s.n == 0) return;
  constexpr std::size_t kIntMax = 0x7fffffff;
  if (tier != GemmTier::Tiled && (s.m > kIntMax || s.n > kIntMax || s.k > kIntMax))
    throw InvalidArgument("veda::matmul: cuBLAS takes int dimensions; " + std::to_string(s.m) + "x" +
                          std::to_string(s.k) + "x" + std::to_string(s.n) + " does not fit (use tier gpu-tiled)");
  if (tier != GemmTier::Tiled && s.batch > kIntMax)
    throw InvalidArgument("veda::matmul: cuBLAS takes an int batch count; " + std::to_string(s.batch) +
                          " does not fit (use tier gpu-tiled)");
  if (tier == GemmTier::Tiled || s.k == 0) {  // k == 0: C = beta C, which the kernel computes
    for (std::size_t i = 0; i < s.batch; ++i)  // a batch: one launch per product
      launch_tiled_gemm(s.one(), a + i * s.stride_a, b + i * s.stride_b, c + i * s.stride_c, stream);
    launched("gpu-tiled GEMM launch");
    return;
  }
  Lease lease(blas_pool());
  check_blas(cublasSetStream(lease.h, stream), "cublasSetStream");
  check_blas(cublasSetMathMode(lease.h, tier == GemmTier::CublasTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
             "cublasSetMathMode");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the
  // operands and keep each one's transposition.
  const auto ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(s.n), n = static_cast<int>(s.m), k = static_cast<int>(s.k);
  const int lda = static_cast<int>(std::max<std::size_t>(s.ldb(), 1)), ldb = static_cast<int>(std::max<std::size_t>(s.lda(), 1));
  const T alpha = static_cast<T>(s.alpha), beta = static_cast<T>(s.beta);
  if (s.batch > 1) {  // one strided-batched call; a stride of 0 shares that operand
    const auto sa = static_cast<long long>(s.stride_b), sb = static_cast<long long>(s.stride_a),
               sc = static_cast<long long>(s.stride_c);
    const int count = static_cast<int>(s.batch);
    if constexpr (std::is_same_v<T, float>) {
      if (tier == GemmTier::CublasBf16)
        check_blas(cublasGemmStridedBatchedEx(lease.h, tb, ta, m, n, k, &alpha, b, CUDA_R_32F, lda, sa, a, CUDA_R_32F,
                                              ldb, sb, &beta, c, CUDA_R_32F, m, sc, count,
                                              CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx (BF16 tensor cores)");
      else
        check_blas(cublasSgemmStridedBatched(lease.h, tb, ta, m, n, k, &alpha, b, lda, sa, a, ldb, sb, &beta, c, m, sc,
                                             count),
                   "cublasSgemmStridedBatched");
    } else {
      check_blas(cublasDgemmStridedBatched(lease.h, tb, ta, m, n, k, &alpha, b, lda, sa, a, ldb, sb, &beta, c, m, sc,
                                           count),
                 "cublasDgemmStridedBatched");
    }
    count_launch();
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (tier == GemmTier::CublasBf16)  // float in and out; the products on BF16 tensor cores, summed in FP32
      check_blas(cublasGemmEx(lease.h, tb, ta, m, n, k, &alpha, b, CUDA_R_32F, lda, a, CUDA_R_32F, ldb, &beta, c,
                              CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (BF16 tensor cores)");
    else
      check_blas(cublasSgemm(lease.h, tb, ta, m, n, k, &alpha, b, lda, a, ldb, &beta, c, m), "cublasSgemm");
  } else
    check_blas(cublasDgemm(lease.h, tb, ta, m, n, k, &alpha, b, lda, a, ldb, &beta, c, m), "cublasDgemm");
  count_launch();
}

void linear_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* x, const float* w,
                  const float* bias, float* y, Activation act, bool tf32, cudaStream_t stream) {
  dev.make_current();
  if (m == 0 || n == 0) return;
  Lease lease(lt_pool());
  const cublasLtEpilogue_t epi = act == Activation::Relu   ? (bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
                                 : act == Activation::Gelu ? (bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
                                                           : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  const std::uint32_t align = std::min({alignment(x), alignment(w), alignment(y), bias ? alignment(bias) : kMaxAlign});
  const LtKey key{dev.index(), m, n, k, static_cast<int>(epi), tf32, align};
  auto plan = lt_cache().find(key);
  if (!plan) plan = lt_cache().insert(key, make_plan(lease.h, m, n, k, epi, tf32, bias, align));
  const PoolBlock ws(dev.pool(), plan->workspace, stream);  // per call: streams never share one
  const float one = 1, zero = 0;
  // The bias pointer lives in the shared descriptor: set it and enqueue under
  // the plan's lock (cublasLtMatmul reads the descriptor only while
  // enqueuing). A plan without bias is never written, so needs no lock.
  std::unique_lock lock(plan->mu, std::defer_lock);
  if (bias) {
    lock.lock();
    check_blas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
               "BIAS_POINTER");
  }
  check_blas(cublasLtMatmul(lease.h, plan->op, &one, w, plan->la, x, plan->lb, &zero, y, plan->lc, y, plan->lc,
                            &plan->algo, ws.get(), plan->workspace, stream),
             "cublasLtMatmul");
  count_launch();
}

template void gemm<float>(CudaDevice&, GemmTier, const GemmShape&, const float*, const float*, float*, cudaStream_t);
template void gemm<double>(CudaDevice&, GemmTier, const GemmShape&, const double*, const double*, double*, cudaStream_t);

}  // namespace veda::detail::cuda
