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
#include "veda/half.hpp"

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

// One cuBLASLt product in its own column-major terms: D (m x n) =
// op(A) op(B) with an epilogue; A, B, D (and the bias) of `type`, FP32
// sums and scale.
struct LtGemm {
  cudaDataType_t type = CUDA_R_32F;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  std::uint64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldd = 0;
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  std::int64_t aux_ld = 0;  // epilogues reading an aux matrix: its leading dimension
  bool tf32 = false;
};

// The cuBLASLt setup for one LtGemm: descriptors, layouts and the algorithm
// the heuristic chose (the heuristic alone costs tens to hundreds of µs of
// host time). Host objects only, so destroying them is always safe.
struct LtPlan {
  std::mutex mu;  // held while a call sets the bias/aux pointers and enqueues
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;  // what the algorithm needs, at most kLtWorkspace
  bool supported = true;      // false: cuBLASLt has no algorithm for this product and epilogue
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (ld) cublasLtMatrixLayoutDestroy(ld);
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

// device, the LtGemm's fields, operand alignment
using LtKey = std::tuple<int, int, int, int, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t, std::int64_t,
                         std::int64_t, int, std::int64_t, bool, std::uint32_t>;
LtKey key_of(int device, const LtGemm& g, std::uint32_t align) {
  return {device, static_cast<int>(g.type), g.ta, g.tb, g.m, g.n, g.k, g.lda, g.ldb, g.ldd,
          static_cast<int>(g.epi), g.aux_ld, g.tf32, align};
}

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

// The bias (an input, or a bias gradient's output) and aux pointers live in
// the descriptor; the heuristic sees the first call's.
void set_pointers(LtPlan& p, const void* bias, const void* aux) {
  if (bias)
    check_blas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
               "BIAS_POINTER");
  if (aux)
    check_blas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux),
               "EPILOGUE_AUX_POINTER");
}

std::shared_ptr<LtPlan> make_plan(cublasLtHandle_t h, const LtGemm& g, const void* bias, const void* aux,
                                  std::uint32_t align) {
  auto p = std::make_shared<LtPlan>();
  check_blas(cublasLtMatmulDescCreate(&p->op, g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
             "cublasLtMatmulDescCreate");
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &g.ta, sizeof g.ta), "TRANSA");
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &g.tb, sizeof g.tb), "TRANSB");
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &g.epi, sizeof g.epi), "EPILOGUE");
  const auto bias_type = static_cast<std::int32_t>(g.type);  // the bias (or its gradient) is D's type
  check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type),
             "BIAS_DATA_TYPE");
  if (g.aux_ld)
    check_blas(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &g.aux_ld, sizeof g.aux_ld),
               "EPILOGUE_AUX_LD");
  set_pointers(*p, bias, aux);
  // Stored shapes: A is m x k (k x m when transposed), B k x n (n x k).
  const bool na = g.ta == CUBLAS_OP_N, nb = g.tb == CUBLAS_OP_N;
  check_blas(cublasLtMatrixLayoutCreate(&p->la, g.type, na ? g.m : g.k, na ? g.k : g.m, g.lda), "layout A");
  check_blas(cublasLtMatrixLayoutCreate(&p->lb, g.type, nb ? g.k : g.n, nb ? g.n : g.k, g.ldb), "layout B");
  check_blas(cublasLtMatrixLayoutCreate(&p->ld, g.type, g.m, g.n, g.ldd), "layout D");
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
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, p->op, p->la, p->lb, p->ld, p->ld, pref, 1, &heur, &found);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0)) {
    p->supported = false;  // remembered, so the heuristic is not asked again
    return p;
  }
  check_blas(st, "heuristic");
  p->algo = heur.algo;
  p->workspace = heur.workspaceSize;
  return p;
}

// D = op(A) op(B) with g's epilogue, one cuBLASLt call on `stream`; false,
// having enqueued nothing, where cuBLASLt does not support it (its epilogues'
// support varies with the version and the GPU): the caller computes it
// another way.
bool lt_matmul(CudaDevice& dev, const LtGemm& g, const void* a, const void* b, void* d, const void* bias,
               const void* aux, cudaStream_t stream) {
  Lease lease(lt_pool());
  const std::uint32_t align = std::min({alignment(a), alignment(b), alignment(d), bias ? alignment(bias) : kMaxAlign,
                                        aux ? alignment(aux) : kMaxAlign});
  const LtKey key = key_of(dev.index(), g, align);
  auto plan = lt_cache().find(key);
  if (!plan) plan = lt_cache().insert(key, make_plan(lease.h, g, bias, aux, align));
  if (!plan->supported) return false;
  const PoolBlock ws(dev.pool(), plan->workspace, stream);  // per call: streams never share one
  const float one = 1, zero = 0;
  // Set the pointers and enqueue under the plan's lock (cublasLtMatmul reads
  // the descriptor only while enqueuing). A plan without them is never
  // written, so needs no lock.
  std::unique_lock lock(plan->mu, std::defer_lock);
  if (bias || aux) {
    lock.lock();
    set_pointers(*plan, bias, aux);
  }
  const cublasStatus_t st = cublasLtMatmul(lease.h, plan->op, &one, a, plan->la, b, plan->lb, &zero, d, plan->ld, d,
                                           plan->ld, &plan->algo, ws.get(), plan->workspace, stream);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  check_blas(st, "cublasLtMatmul");
  count_launch();
  return true;
}

// cuBLAS's name for a 16-bit element type (and FP32's).
template <class T>
constexpr cudaDataType_t data_type() {
  return std::is_same_v<T, veda::half> ? CUDA_R_16F : std::is_same_v<T, veda::bfloat16> ? CUDA_R_16BF : CUDA_R_32F;
}

// 16-bit elements need tensor cores on every cuBLAS tier (what `tier` names).
template <class T>
void check_tensor_cores(CudaDevice& dev, const char* op, const char* tier) {
  if (is_16bit_float<T> && dev.info().cc_major < 8)
    throw InvalidArgument(std::string(op) + ": tier " + tier +
                          " on 16-bit elements needs tensor cores (compute capability 8.0 or later); " + dev.name() +
                          " is " + std::to_string(dev.info().cc_major) + "." + std::to_string(dev.info().cc_minor));
}

}  // namespace

template <class T>
void gemm(CudaDevice& dev, GemmTier tier, const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream) {
  dev.make_current();
  // Tensor cores: gpu-wmma always, gpu-cublas on 16-bit elements.
  if ((tier == GemmTier::Wmma || (is_16bit_float<T> && tier == GemmTier::Cublas)) && dev.info().cc_major < 8)
    throw InvalidArgument(std::string("veda::matmul: tier ") + (tier == GemmTier::Wmma ? "gpu-wmma" : "gpu-cublas") +
                          " on " + (is_16bit_float<T> ? "16-bit" : "these") +
                          " elements needs tensor cores (compute capability 8.0 or later); " + dev.name() + " is " +
                          std::to_string(dev.info().cc_major) + "." + std::to_string(dev.info().cc_minor));
  if (s.m == 0 || s.n == 0) return;
  if (tier == GemmTier::Naive || tier == GemmTier::Vectorized || tier == GemmTier::Wmma) {
    for (std::size_t i = 0; i < s.batch; ++i)  // a batch: one launch per product
      launch_ladder_gemm(tier, s.one(), a + i * s.stride_a, b + i * s.stride_b, c + i * s.stride_c, stream);
    launched("GEMM ladder kernel launch");
    return;
  }
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
  // 16-bit C: split-K partial sums stay FP32 too (by default cuBLAS may
  // reduce them in the output type), so C is rounded once.
  const auto math = tier == GemmTier::CublasTf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                    : is_16bit_float<T>
                        ? static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
                        : CUBLAS_DEFAULT_MATH;
  check_blas(cublasSetMathMode(lease.h, math), "cublasSetMathMode");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the
  // operands and keep each one's transposition.
  const auto ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(s.n), n = static_cast<int>(s.m), k = static_cast<int>(s.k);
  const int lda = static_cast<int>(std::max<std::size_t>(s.ldb(), 1)), ldb = static_cast<int>(std::max<std::size_t>(s.lda(), 1));
  const auto sa = static_cast<long long>(s.stride_b), sb = static_cast<long long>(s.stride_a),
             sc = static_cast<long long>(s.stride_c);
  const int count = static_cast<int>(s.batch);
  if constexpr (std::is_same_v<T, double>) {
    const double alpha = s.alpha, beta = s.beta;
    if (s.batch > 1)  // one strided-batched call; a stride of 0 shares that operand
      check_blas(cublasDgemmStridedBatched(lease.h, tb, ta, m, n, k, &alpha, b, lda, sa, a, ldb, sb, &beta, c, m, sc,
                                           count),
                 "cublasDgemmStridedBatched");
    else
      check_blas(cublasDgemm(lease.h, tb, ta, m, n, k, &alpha, b, lda, a, ldb, &beta, c, m), "cublasDgemm");
  } else {
    const float alpha = static_cast<float>(s.alpha), beta = static_cast<float>(s.beta);
    if (is_16bit_float<T> || tier == GemmTier::CublasBf16) {
      // cublasGemmEx: 16-bit in and out with FP32 sums (tensor cores), or
      // gpu-cublas-bf16's float in and out, products on BF16 tensor cores.
      const cudaDataType_t dt = data_type<T>();
      const cublasComputeType_t ct = is_16bit_float<T> ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_16BF;
      if (s.batch > 1)
        check_blas(cublasGemmStridedBatchedEx(lease.h, tb, ta, m, n, k, &alpha, b, dt, lda, sa, a, dt, ldb, sb, &beta,
                                              c, dt, m, sc, count, ct, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx");
      else
        check_blas(cublasGemmEx(lease.h, tb, ta, m, n, k, &alpha, b, dt, lda, a, dt, ldb, &beta, c, dt, m, ct,
                                CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    } else if constexpr (std::is_same_v<T, float>) {
      if (s.batch > 1)
        check_blas(cublasSgemmStridedBatched(lease.h, tb, ta, m, n, k, &alpha, b, lda, sa, a, ldb, sb, &beta, c, m,
                                             sc, count),
                   "cublasSgemmStridedBatched");
      else
        check_blas(cublasSgemm(lease.h, tb, ta, m, n, k, &alpha, b, lda, a, ldb, &beta, c, m), "cublasSgemm");
    }
  }
  count_launch();
}

template <class T>
bool linear_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const T* x, const T* w, const T* bias,
                  T* y, Activation act, bool tf32, cudaStream_t stream) {
  dev.make_current();
  check_tensor_cores<T>(dev, "veda::linear", "gpu-cublaslt-fused");
  if (m == 0 || n == 0) return true;
  // Column-major view: y^T (n x m) = w (n x k, stored as k x n: op T) * x^T (k x m).
  LtGemm g;
  g.ta = CUBLAS_OP_T;
  g.m = n;
  g.n = m;
  g.k = k;
  g.lda = g.ldb = static_cast<std::int64_t>(k);
  g.ldd = static_cast<std::int64_t>(n);
  g.epi = act == Activation::Relu   ? (bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
          : act == Activation::Gelu ? (bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
                                    : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  g.type = data_type<T>();
  g.tf32 = tf32 && !is_16bit_float<T>;
  return lt_matmul(dev, g, w, x, y, bias, nullptr, stream);
}

bool weight_grad_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* x, const float* dz,
                       float* dw, float* dbias, bool tf32, cudaStream_t stream) {
  dev.make_current();
  if (m == 0 || n == 0 || k == 0) return false;  // empty sums: the caller's kernels write the zeros
  // dw^T (k x n) = x^T (k x m, x's row-major storage) * dz (m x n, stored as n x m: op T);
  // BGRADB sums op(B) = dz over the product's k (= m): dz's column sums.
  LtGemm g;
  g.tb = CUBLAS_OP_T;
  g.m = k;
  g.n = n;
  g.k = m;
  g.lda = g.ldd = static_cast<std::int64_t>(k);
  g.ldb = static_cast<std::int64_t>(n);
  g.epi = dbias ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_DEFAULT;
  g.tf32 = tf32;
  return lt_matmul(dev, g, x, dz, dw, dbias, nullptr, stream);
}

bool input_grad_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* dz, const float* w,
                      Activation input_act, const void* aux, std::size_t aux_ld, float* dx, float* dbias_in,
                      bool tf32, cudaStream_t stream) {
  dev.make_current();
  if (m == 0 || k == 0 || n == 0 || !dbias_in) return false;
  // dx^T (k x m) = w^T (k x n, w's row-major storage) * dz^T (n x m, dz's);
  // DRELU_BGRAD / DGELU_BGRAD scale it by the input activation's derivative
  // (from aux) and sum each of its k rows into dbias_in.
  LtGemm g;
  g.m = k;
  g.n = m;
  g.k = n;
  g.lda = g.ldd = static_cast<std::int64_t>(k);
  g.ldb = static_cast<std::int64_t>(n);
  g.epi = input_act == Activation::Relu ? CUBLASLT_EPILOGUE_DRELU_BGRAD : CUBLASLT_EPILOGUE_DGELU_BGRAD;
  g.aux_ld = static_cast<std::int64_t>(aux_ld);
  g.tf32 = tf32;
  return lt_matmul(dev, g, w, dz, dx, dbias_in, aux, stream);
}

template <class T>
void grouped_gemm(CudaDevice& dev, GemmTier tier, const std::vector<std::size_t>& rows, std::size_t k, std::size_t n,
                  const T* a, const T* w, T* c, cudaStream_t stream) {
  dev.make_current();
  if (tier != GemmTier::Tiled) check_tensor_cores<T>(dev, "veda::grouped_matmul", "gpu-cublas");
  std::size_t total = 0;
  for (std::size_t r : rows) total += r;
  if (total == 0 || n == 0) return;
  if (k == 0) {  // empty sums
    check(cudaMemsetAsync(c, 0, total * n * sizeof(T), stream), "cudaMemsetAsync (grouped_matmul)");
    return;
  }
  // Group g in row-major terms: C_g (rows x n) = A_g (rows x k) W_g (k x n).
  auto each_group = [&](auto&& f) {
    for (std::size_t g = 0, off = 0; g < rows.size(); off += rows[g], ++g)
      if (rows[g]) f(rows[g], a + off * k, w + g * k * n, c + off * n);
  };
  if (tier == GemmTier::Tiled) {
    GemmShape s;
    s.n = n;
    s.k = k;
    each_group([&](std::size_t m, const T* ag, const T* wg, T* cg) {
      s.m = m;
      launch_tiled_gemm(s, ag, wg, cg, stream);
    });
    launched("gpu-tiled grouped GEMM launch");
    return;
  }
  Lease lease(blas_pool());
  check_blas(cublasSetStream(lease.h, stream), "cublasSetStream");
  // 16-bit: FP32 sums, C rounded once (as gemm() sets it).
  const auto math = is_16bit_float<T>
                        ? static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
                        : CUBLAS_DEFAULT_MATH;
  check_blas(cublasSetMathMode(lease.h, math), "cublasSetMathMode");
  // Column-major, as cuBLAS sees it: C_g^T (n x rows) = W_g^T (n x k) A_g^T (k x rows).
  const auto ld_w = static_cast<std::int64_t>(n), ld_a = static_cast<std::int64_t>(k);
  using Scalar = std::conditional_t<std::is_same_v<T, double>, double, float>;  // alpha, beta: FP32 for 16-bit
  // One GEMM per group: before cuBLAS 12.5, or where the grouped call declines 16-bit elements.
  auto per_group = [&] {
    const Scalar alpha = 1, beta = 0;
    each_group([&](std::size_t m, const T* ag, const T* wg, T* cg) {
      const auto rm = static_cast<std::int64_t>(m);
      if constexpr (std::is_same_v<T, double>)
        check_blas(cublasDgemm_64(lease.h, CUBLAS_OP_N, CUBLAS_OP_N, ld_w, rm, ld_a, &alpha, wg, ld_w, ag, ld_a,
                                  &beta, cg, ld_w),
                   "cublasDgemm (grouped_matmul)");
      else if constexpr (std::is_same_v<T, float>)
        check_blas(cublasSgemm_64(lease.h, CUBLAS_OP_N, CUBLAS_OP_N, ld_w, rm, ld_a, &alpha, wg, ld_w, ag, ld_a,
                                  &beta, cg, ld_w),
                   "cublasSgemm (grouped_matmul)");
      else
        check_blas(cublasGemmEx_64(lease.h, CUBLAS_OP_N, CUBLAS_OP_N, ld_w, rm, ld_a, &alpha, wg, data_type<T>(),
                                   ld_w, ag, data_type<T>(), ld_a, &beta, cg, data_type<T>(), ld_w,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx (grouped_matmul)");
    });
  };
#if CUBLAS_VERSION >= 120500
  std::vector<std::int64_t> ns;                // each group's rows
  std::vector<const void*> ptrs, as, cs;       // every W_g, then every A_g, then every C_g
  each_group([&](std::size_t m, const T* ag, const T* wg, T* cg) {
    ns.push_back(static_cast<std::int64_t>(m));
    ptrs.push_back(wg);
    as.push_back(ag);
    cs.push_back(cg);
  });
  const std::size_t groups = ns.size();
  ptrs.insert(ptrs.end(), as.begin(), as.end());
  ptrs.insert(ptrs.end(), cs.begin(), cs.end());
  const std::vector<std::int64_t> ms(groups, ld_w), ks(groups, ld_a), sizes(groups, 1);
  const std::vector<cublasOperation_t> ops(groups, CUBLAS_OP_N);
  const std::vector<Scalar> alpha(groups, Scalar(1)), beta(groups, Scalar(0));
  const PoolBlock dptrs(dev.pool(), ptrs.size() * sizeof(void*), stream);
  dev.copy_to_device(dptrs.get(), ptrs.data(), ptrs.size() * sizeof(void*), stream, false);
  void** base = dptrs.as<void*>();
  const auto* dw = reinterpret_cast<const T* const*>(base);
  const auto* da = reinterpret_cast<const T* const*>(base + groups);
  auto* dc = reinterpret_cast<T* const*>(base + 2 * groups);
  const auto g = static_cast<std::int64_t>(groups);
  if constexpr (std::is_same_v<T, float>) {
    check_blas(cublasSgemmGroupedBatched_64(lease.h, ops.data(), ops.data(), ms.data(), ns.data(), ks.data(),
                                            alpha.data(), dw, ms.data(), da, ks.data(), beta.data(), dc, ms.data(),
                                            g, sizes.data()),
               "cublasSgemmGroupedBatched");
  } else if constexpr (std::is_same_v<T, double>) {
    check_blas(cublasDgemmGroupedBatched_64(lease.h, ops.data(), ops.data(), ms.data(), ns.data(), ks.data(),
                                            alpha.data(), dw, ms.data(), da, ks.data(), beta.data(), dc, ms.data(),
                                            g, sizes.data()),
               "cublasDgemmGroupedBatched");
  } else {
    const auto dt = data_type<T>();
    const cublasStatus_t st = cublasGemmGroupedBatchedEx_64(
        lease.h, ops.data(), ops.data(), ms.data(), ns.data(), ks.data(), alpha.data(),
        reinterpret_cast<const void* const*>(dw), dt, ms.data(), reinterpret_cast<const void* const*>(da), dt,
        ks.data(), beta.data(), reinterpret_cast<void* const*>(dc), dt, ms.data(), g, sizes.data(),
        CUBLAS_COMPUTE_32F);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) per_group();
    else check_blas(st, "cublasGemmGroupedBatchedEx");
  }
#else
  per_group();
#endif
  count_launch();
}

template void gemm<float>(CudaDevice&, GemmTier, const GemmShape&, const float*, const float*, float*, cudaStream_t);
template void gemm<double>(CudaDevice&, GemmTier, const GemmShape&, const double*, const double*, double*, cudaStream_t);
template void gemm<veda::half>(CudaDevice&, GemmTier, const GemmShape&, const veda::half*, const veda::half*,
                               veda::half*, cudaStream_t);
template void gemm<veda::bfloat16>(CudaDevice&, GemmTier, const GemmShape&, const veda::bfloat16*,
                                   const veda::bfloat16*, veda::bfloat16*, cudaStream_t);
#define VEDA_LINEAR_FUSED(T)                                                                                   \
  template bool linear_fused<T>(CudaDevice&, std::size_t, std::size_t, std::size_t, const T*, const T*, const T*, T*, \
                                Activation, bool, cudaStream_t);
VEDA_LINEAR_FUSED(float)
VEDA_LINEAR_FUSED(veda::half)
VEDA_LINEAR_FUSED(veda::bfloat16)
#undef VEDA_LINEAR_FUSED
template void grouped_gemm<float>(CudaDevice&, GemmTier, const std::vector<std::size_t>&, std::size_t, std::size_t,
                                  const float*, const float*, float*, cudaStream_t);
template void grouped_gemm<double>(CudaDevice&, GemmTier, const std::vector<std::size_t>&, std::size_t, std::size_t,
                                   const double*, const double*, double*, cudaStream_t);
template void grouped_gemm<veda::half>(CudaDevice&, GemmTier, const std::vector<std::size_t>&, std::size_t,
                                       std::size_t, const veda::half*, const veda::half*, veda::half*, cudaStream_t);
template void grouped_gemm<veda::bfloat16>(CudaDevice&, GemmTier, const std::vector<std::size_t>&, std::size_t,
                                           std::size_t, const veda::bfloat16*, const veda::bfloat16*,
                                           veda::bfloat16*, cudaStream_t);

}  // namespace veda::detail::cuda
