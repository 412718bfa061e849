// attention: validation, one decision, the chosen tier.
#include "veda/attention.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/attention.hpp"
#include "runtime/runtime_state.hpp"
#include "src/gemm_tiers.hpp"  // dims, leave_blas_out_when_nested
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/attention.hpp"
#include "runtime/memory_pool.hpp"
#endif

namespace veda {
namespace {
using detail::Tier;
using detail::tier_bit;

template <class T>
struct AttentionTag {};

template <class T>
void check_4d(const char* what, const Array<T>& a) {
  if (a.ndim() != 4)
    throw InvalidArgument(std::string("veda::attention: ") + what + " must be 4-D [batch, heads, seq, head_dim] (it is " +
                          detail::dims(a.shape()) + ")");
}

template <class T>
detail::AttentionShape shape_of(const Array<T>& q, const Array<T>& k, const Array<T>& v,
                                     const AttentionOptions& o) {
  check_4d("q", q);
  check_4d("k", k);
  check_4d("v", v);
  auto both = [&] {
    return " (q is " + detail::dims(q.shape()) + ", k is " + detail::dims(k.shape()) + ", v is " +
           detail::dims(v.shape()) + ")";
  };
  if (k.extent(0) != q.extent(0) || v.extent(0) != q.extent(0))
    throw InvalidArgument("veda::attention: q, k and v must have the same batch" + both());
  if (v.extent(1) != k.extent(1) || v.extent(2) != k.extent(2))
    throw InvalidArgument("veda::attention: k and v must have the same heads and sequence length" + both());
  if (k.extent(3) != q.extent(3))
    throw InvalidArgument("veda::attention: q and k must have the same head_dim" + both());
  detail::AttentionShape s;
  s.batch = q.extent(0);
  s.heads = q.extent(1);
  s.kv_heads = k.extent(1);
  s.q_len = q.extent(2);
  s.kv_len = k.extent(2);
  s.d = q.extent(3);
  s.dv = v.extent(3);
  if (s.heads > 0 && (s.kv_heads == 0 || s.heads % s.kv_heads != 0))
    throw InvalidArgument("veda::attention: q's " + std::to_string(s.heads) +
                          " heads must be a multiple of k's and v's " + std::to_string(s.kv_heads) + both());
  if (!std::isfinite(o.scale))
    throw InvalidArgument("veda::attention: scale must be finite (got " + std::to_string(o.scale) + ")");
  s.scale = o.scale != 0 ? o.scale : s.d > 0 ? 1 / std::sqrt(static_cast<double>(s.d)) : 1.0;
  s.causal = o.causal;
  return s;
}

// A CPU tier over host data of float or double.
template <class T>
void attention_cpu(Runtime& rt, Tier tier, const detail::AttentionShape& s, const T* q, const T* k, const T* v,
                   T* out) {
  if (tier == Tier::CpuReference) return detail::cpu::attention_reference(s, q, k, v, out);
  auto& st = rt.state();
  detail::CpuExecutor* par = rt.config().threads() > 1 ? st.cpu_executor.get() : nullptr;
  if (tier == Tier::CpuBlas &&
      detail::cpu::attention_blas(par, detail::blas(st.cpu, st.profile().cpu.blas_core), rt.config().threads(), s, q,
                                  k, v, out))
    return;
  detail::cpu::attention_blocked(par, s, q, k, v, out);  // cpu-blocked, or cpu-blas without a BLAS
}

// 16-bit elements: the float tier over float copies (each input converted
// once, exactly), the result rounded once.
template <class T>
void attention_cpu16(Runtime& rt, Tier tier, const detail::AttentionShape& s, const Array<T>& q, const Array<T>& k,
                     const Array<T>& v, Array<T>& out) {
  auto floats = [&](const Array<T>& a) {
    std::vector<float> f(a.size());
    detail::convert(rt, a.host().data(), f.data(), f.size());
    return f;
  };
  const std::vector<float> fq = floats(q), fk = floats(k), fv = floats(v);
  std::vector<float> fo(out.size());
  attention_cpu(rt, tier, s, fq.data(), fk.data(), fv.data(), fo.data());
  detail::convert(rt, fo.data(), out.host().data(), fo.size());
}
}  // namespace

template <detail::AttentionElem T>
Array<T> attention(const Array<T>& q, const Array<T>& k, const Array<T>& v, const AttentionOptions& o) {
  const detail::AttentionShape s = shape_of(q, k, v, o);
  // The scores computed: every (row, key) pair; causal, row i's first i + 1.
  const std::size_t rows = s.batch * s.heads * s.q_len, diag = std::min(s.q_len, s.kv_len);
  const std::size_t pairs = s.causal ? diag * (diag + 1) / 2 + (s.q_len - diag) * s.kv_len : s.q_len * s.kv_len;
  const std::size_t scores = s.batch * s.heads * pairs;
  detail::CallDesc d = detail::op_desc(scores, sizeof(T), o);  // checks placement and tier
  auto out = detail::host_array<T>(Shape{s.batch, s.heads, s.q_len, s.dv});
  if (out.empty()) return out;
  d.dims[0] = rows;
  d.dims[1] = s.kv_len;
  d.dims[2] = s.d;
  d.ndims = 3;
  detail::describe_operands(d, q, k, v);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::leave_blas_out_when_nested<AttentionOptions>(d);
#if VEDA_HAS_CUDA
  if (!detail::cuda::flash_fits(s, sizeof(T))) {
    if (d.forced_tier == Tier::GpuFlash)
      throw InvalidArgument("veda::attention: tier gpu-flash takes dv <= 128 and a 32-key tile of k and v in 48 KiB of "
                            "shared memory; head_dim " + std::to_string(s.d) + " and dv " + std::to_string(s.dv) +
                            (sizeof(T) == 8 ? " of double" : " in float") + " do not fit (gpu-naive does)");
    d.exclude_tiers |= tier_bit(Tier::GpuFlash);
  }
#endif
  detail::run_op(
      rt,
      detail::op_site<AttentionTag<T>>(o.name, "attention", detail::OpClass::Attention,
                                       tier_bit(Tier::CpuReference) | tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuBlocked) |
                                           tier_bit(Tier::GpuNaive) | tier_bit(Tier::GpuFlash)),
      d,
      [&](const detail::Plan& p) {
        if constexpr (detail::is_16bit_float<T>)
          attention_cpu16(rt, p.tier, s, q, k, v, out);
        else
          attention_cpu(rt, p.tier, s, q.host().data(), k.host().data(), v.host().data(), out.host().data());
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        const auto cs = static_cast<cudaStream_t>(st);
        const T* dq = detail::device_in(dev, q, st);
        const T* dk = detail::device_in(dev, k, st);
        const T* dv = detail::device_in(dev, v, st);
        T* dout = detail::device_out(dev, out, st);
        if (p.tier == Tier::GpuFlash) {
          detail::cuda::attention_flash(s, dq, dk, dv, dout, dev.info().cc_major >= 8, cs);
        } else {
          const detail::PoolBlock scores(dev.pool(), detail::cuda::naive_scores_bytes(s, sizeof(T)) + 1, st);
          detail::cuda::attention_naive(s, dq, dk, dv, dout, scores.get(), cs);
        }
        detail::device_done({q.buffer(), k.buffer(), v.buffer(), out.buffer()}, st);
#else
        (void)p;
#endif
        return false;
      });
  return out;
}

template Array<float> attention<float>(const Array<float>&, const Array<float>&, const Array<float>&,
                                       const AttentionOptions&);
template Array<double> attention<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                         const AttentionOptions&);
template Array<half> attention<half>(const Array<half>&, const Array<half>&, const Array<half>&,
                                     const AttentionOptions&);
template Array<bfloat16> attention<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&, const Array<bfloat16>&,
                                             const AttentionOptions&);

}  // namespace veda
