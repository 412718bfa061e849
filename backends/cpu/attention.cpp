#include "backends/cpu/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/gemm.hpp"
#include "backends/cpu/tasks.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kQueryBlock = 32, kKeyBlock = 64;

// Keys row i sees: all, or 0..i when causal.
std::size_t visible(const AttentionShape& s, std::size_t i) { return s.causal ? std::min(i + 1, s.kv_len) : s.kv_len; }

// The heads of one (batch, head) pair.
template <class T>
struct Head {
  const T *q, *k, *v;
  T* out;
};
template <class T>
Head<T> head(const AttentionShape& s, std::size_t bh, const T* q, const T* k, const T* v, T* out) {
  const std::size_t b = bh / s.heads, h = bh % s.heads, g = h / (s.heads / s.kv_heads);
  const std::size_t kvh = b * s.kv_heads + g;
  return {q + bh * s.q_len * s.d, k + kvh * s.kv_len * s.d, v + kvh * s.kv_len * s.dv, out + bh * s.q_len * s.dv};
}
}  // namespace

template <class T>
void attention_reference(const AttentionShape& s, const T* q, const T* k, const T* v, T* out) {
  std::vector<double> p(s.kv_len), acc(s.dv);
  for (std::size_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const Head<T> hd = head(s, bh, q, k, v, out);
    for (std::size_t i = 0; i < s.q_len; ++i) {
      const std::size_t keys = visible(s, i);
      double mx = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < s.d; ++c) dot += static_cast<double>(hd.q[i * s.d + c]) * hd.k[j * s.d + c];
        p[j] = s.scale * dot;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::size_t j = 0; j < keys; ++j) {
        p[j] = std::exp(p[j] - mx);
        sum += p[j];
        for (std::size_t c = 0; c < s.dv; ++c) acc[c] += p[j] * hd.v[j * s.dv + c];
      }
      for (std::size_t c = 0; c < s.dv; ++c) hd.out[i * s.dv + c] = static_cast<T>(keys ? acc[c] / sum : 0.0);
    }
  }
}

template <class T>
void attention_blocked(CpuExecutor* parallel, const AttentionShape& s, const T* q, const T* k, const T* v, T* out) {
  const std::size_t q_blocks = (s.q_len + kQueryBlock - 1) / kQueryBlock;
  const T scale = static_cast<T>(s.scale);
  for_each_task(parallel, s.batch * s.heads * q_blocks, 1, [&](std::size_t task) {
    const Head<T> hd = head(s, task / q_blocks, q, k, v, out);
    const std::size_t i0 = task % q_blocks * kQueryBlock, rows = std::min(s.q_len, i0 + kQueryBlock) - i0;
    // Per task: a key block transposed (so a query row's scores are one
    // vectorised loop per feature), the block's scores, and each row's
    // running max, sum and weighted sum of values.
    std::vector<T> kt(s.d * kKeyBlock), scores(kQueryBlock * kKeyBlock), acc(rows * s.dv, T(0));
    std::vector<T> mx(rows, -std::numeric_limits<T>::infinity()), sum(rows, T(0));
    const std::size_t key_end = s.causal ? std::min(s.kv_len, i0 + rows) : s.kv_len;
    for (std::size_t j0 = 0; j0 < key_end; j0 += kKeyBlock) {
      const std::size_t nk = std::min(key_end, j0 + kKeyBlock) - j0;
      for (std::size_t j = 0; j < nk; ++j)
        for (std::size_t c = 0; c < s.d; ++c) kt[c * kKeyBlock + j] = hd.k[(j0 + j) * s.d + c];
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r;
        const std::size_t lim = s.causal ? (i >= j0 ? std::min(nk, i - j0 + 1) : 0) : nk;
        if (lim == 0) continue;
        T* sr = scores.data() + r * kKeyBlock;
        std::fill(sr, sr + lim, T(0));
        for (std::size_t c = 0; c < s.d; ++c) {
          const T qc = hd.q[i * s.d + c] * scale;
          const T* kc = kt.data() + c * kKeyBlock;
          for (std::size_t j = 0; j < lim; ++j) sr[j] += qc * kc[j];
        }
        const T m_new = std::max(mx[r], *std::max_element(sr, sr + lim));
        const T keep = std::exp(mx[r] - m_new);  // 0 for the first block (mx = -inf)
        T block_sum = 0;
        for (std::size_t j = 0; j < lim; ++j) {
          sr[j] = std::exp(sr[j] - m_new);
          block_sum += sr[j];
        }
        sum[r] = sum[r] * keep + block_sum;
        mx[r] = m_new;
        T* ar = acc.data() + r * s.dv;
        for (std::size_t c = 0; c < s.dv; ++c) ar[c] *= keep;
        for (std::size_t j = 0; j < lim; ++j) {
          const T pj = sr[j];
          const T* vj = hd.v + (j0 + j) * s.dv;
          for (std::size_t c = 0; c < s.dv; ++c) ar[c] += pj * vj[c];
        }
      }
    }
    for (std::size_t r = 0; r < rows; ++r) {
      const bool none = mx[r] == -std::numeric_limits<T>::infinity();  // no visible key: zeros
      const T inv = none ? T(0) : T(1) / sum[r];
      for (std::size_t c = 0; c < s.dv; ++c) hd.out[(i0 + r) * s.dv + c] = acc[r * s.dv + c] * inv;
    }
  });
}

template <class T>
bool attention_blas(CpuExecutor* parallel, const Blas& blas, int threads, const AttentionShape& s, const T* q,
                    const T* k, const T* v, T* out) {
  constexpr std::size_t kRows = 256, kIntMax = 0x7fffffff;
  if (!blas.available || s.kv_len > kIntMax || s.d > kIntMax || s.dv > kIntMax) return false;
  std::vector<T> scores(std::min(kRows, s.q_len) * s.kv_len);
  for (std::size_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const Head<T> hd = head(s, bh, q, k, v, out);
    for (std::size_t i0 = 0; i0 < s.q_len; i0 += kRows) {
      const std::size_t rows = std::min(kRows, s.q_len - i0);
      const std::size_t keys = s.causal ? std::min(s.kv_len, i0 + rows) : s.kv_len;  // any row of the block sees
      T* o = hd.out + i0 * s.dv;
      if (keys == 0) {
        std::fill(o, o + rows * s.dv, T(0));
        continue;
      }
      GemmShape qk;  // scores (rows x keys) = scale q k^T
      qk.m = rows, qk.n = keys, qk.k = s.d, qk.trans_b = true, qk.alpha = s.scale;
      gemm_blas(blas, threads, qk, hd.q + i0 * s.d, hd.k, scores.data());
      for_each_task(parallel, rows, 8, [&](std::size_t r) {
        T* row = scores.data() + r * keys;
        const std::size_t lim = visible(s, i0 + r);
        const T mx = *std::max_element(row, row + lim);
        T sum = 0;
        for (std::size_t j = 0; j < lim; ++j) sum += (row[j] = std::exp(row[j] - mx));
        const T inv = T(1) / sum;
        for (std::size_t j = 0; j < lim; ++j) row[j] *= inv;
        std::fill(row + lim, row + keys, T(0));  // masked keys
      });
      GemmShape pv;  // out (rows x dv) = p v
      pv.m = rows, pv.n = s.dv, pv.k = keys;
      gemm_blas(blas, threads, pv, scores.data(), hd.v, o);
    }
  }
  return true;
}

template void attention_reference<float>(const AttentionShape&, const float*, const float*, const float*, float*);
template void attention_reference<double>(const AttentionShape&, const double*, const double*, const double*, double*);
template void attention_blocked<float>(CpuExecutor*, const AttentionShape&, const float*, const float*, const float*,
                                       float*);
template void attention_blocked<double>(CpuExecutor*, const AttentionShape&, const double*, const double*,
                                        const double*, double*);
template bool attention_blas<float>(CpuExecutor*, const Blas&, int, const AttentionShape&, const float*, const float*,
                                    const float*, float*);
template bool attention_blas<double>(CpuExecutor*, const Blas&, int, const AttentionShape&, const double*,
                                     const double*, const double*, double*);

}  // namespace veda::detail::cpu
