// Element-wise expressions: broadcasting, planning, one decision, the chosen tier.
#include "veda/expr.hpp"

#include <algorithm>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/expr_kernel.hpp"
#endif

namespace veda::detail {
namespace {

// A site's type slots: by the planned dimension count (a flat expression
// and one that broadcasts along rows cost differently).
struct ExprSlot {};
template <int D>
constexpr const TypeKey* dims_key = &type_tag<ExprSlot, std::integral_constant<int, D>>;
const TypeKey* slot_key(int dims) {
  constexpr const TypeKey* keys[] = {dims_key<1>, dims_key<2>, dims_key<3>, dims_key<4>};
  return keys[std::clamp(dims, 1, 4) - 1];
}

// One site per expression type and name; the default-named one is looked
// up once per type (the registry takes a lock and compares strings) and
// kept in the type's ExprText. Sites live as long as the process, so two
// threads storing the same pointer at once is harmless.
Site& expr_site(const ExprCall& c, const ExprOptions& o) {
  constexpr std::uint32_t tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::TbbAuto) |
                                  (VEDA_HAS_CUDA ? tier_bit(Tier::Cuda) : 0u);
  const CostHint hint{std::max(1.0, c.text->flops), 0};
  if (!o.name.empty()) return *site_for(c.text, o.name, OpClass::Map, tiers, hint);
  if (void* s = c.text->default_site.load(std::memory_order_acquire)) return *static_cast<Site*>(s);
  Site* s = site_for(c.text, "expr " + c.text->pretty, OpClass::Map, tiers, hint);
  c.text->default_site.store(s, std::memory_order_release);
  return *s;
}

// Fills c.ext/c.dims and each leaf's strides: the broadcast shape with
// extents of 1 dropped and neighbours merged wherever every leaf walks both
// as one (contiguously, or broadcast along both), right-aligned in 4.
// In place: each leaf's strides along the result's dimensions (right-
// aligned) are merged innermost first, and the planned slot written, w,
// never passes the result dimension read, r (w >= r).
void plan(ExprCall& c, const Shape& s) {
  constexpr int kDims = Shape::kMaxDims;
  const int top = kDims - s.ndim();
  for (ExprLeaf& l : c.leaves) {
    std::fill(std::begin(l.stride), std::end(l.stride), 0);
    std::int64_t step = 1;
    for (int j = l.shape.ndim() - 1, d = kDims - 1; j >= 0; --j, --d) {
      l.stride[d] = l.shape[j] == 1 ? 0 : step;
      step *= static_cast<std::int64_t>(l.shape[j]);
    }
  }
  int w = kDims;  // planned dimensions occupy [w, kDims)
  for (int r = kDims - 1; r >= top; --r) {
    const auto e = static_cast<std::int64_t>(s[r - top]);
    if (e == 1) continue;
    bool merge = w < kDims;
    for (const ExprLeaf& l : c.leaves) merge = merge && l.stride[r] == l.stride[w] * c.ext[w];
    if (merge) {
      c.ext[w] *= e;
      continue;
    }
    c.ext[--w] = e;
    for (ExprLeaf& l : c.leaves) l.stride[w] = l.stride[r];
  }
  if (w == kDims) c.ext[--w] = 1;  // one element: its strides are 0 below
  c.dims = kDims - w;
  for (int d = 0; d < w; ++d) {
    c.ext[d] = 1;
    for (ExprLeaf& l : c.leaves) l.stride[d] = 0;
  }
}

// The leaves' buffers, as describe_buffers walks them (no copy).
struct LeafBuffers {
  std::span<const ExprLeaf> leaves;
  struct It {
    const ExprLeaf* at;
    const Buffer* operator*() const { return at->buf; }
    It& operator++() {
      ++at;
      return *this;
    }
    bool operator!=(const It& o) const { return at != o.at; }
  };
  It begin() const { return {leaves.data()}; }
  It end() const { return {leaves.data() + leaves.size()}; }
};

}  // namespace

Shape expr_shape(const ExprCall& c) {
  int nd = 1;
  for (const ExprLeaf& l : c.leaves) nd = std::max(nd, l.shape.ndim());
  std::size_t e[Shape::kMaxDims] = {1, 1, 1, 1};
  int from[Shape::kMaxDims] = {-1, -1, -1, -1};  // the leaf that set each extent
  for (std::size_t k = 0; k < c.leaves.size(); ++k) {
    const Shape& s = c.leaves[k].shape;
    const int off = nd - s.ndim();
    for (int j = 0; j < s.ndim(); ++j) {
      const std::size_t x = s[j];
      std::size_t& r = e[off + j];
      if (x == r || x == 1) continue;
      if (r != 1)  // set by an earlier leaf
        throw InvalidArgument("veda expression: shapes " + c.leaves[from[off + j]].shape.str() + " and " + s.str() +
                              " do not broadcast (" + std::to_string(r) + " against " + std::to_string(x) +
                              " at axis " + std::to_string(off + j - nd) + ")");
      r = x;
      from[off + j] = static_cast<int>(k);
    }
  }
  return make_shape(e, nd);
}

void throw_assign_shape(const Shape& expr, const Shape& out) {
  throw InvalidArgument("veda::assign: the expression's shape " + expr.str() + " is not the output's " + out.str());
}

void run_expr(ExprCall& c, const Shape& s, const ExprOptions& o, ExprCpuFn cpu, const void* node) {
  check_placement(o.placement, o.name.empty() ? std::string_view("veda expression") : std::string_view(o.name));
  const std::size_t n = s.size();
  if (n == 0) return;
  plan(c, s);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = op_desc(n, c.out_bytes, o);
  d.type_key = slot_key(c.dims);
  std::size_t bytes = n * c.out_bytes;
  bool alias = false;  // the output is also an operand (of its shape: see assign)
  for (const ExprLeaf& l : c.leaves) {
    bytes += l.shape.size() * l.elem_bytes;
    alias |= l.buf == c.out;
  }
  d.bytes_per_elem = bytes16((bytes + n - 1) / n);
  describe_buffers(d, LeafBuffers{c.leaves});
#if VEDA_HAS_CUDA
  if (rt.gpu_usable()) {  // (without one, the decision names that, not the expression)
    auto* dev = dynamic_cast<cuda::CudaDevice*>(rt.state().device());
    d.gpu_capable = dev && cuda::expr_fits_kernel(c);
    if (d.gpu_capable) d.gpu_setup_us = static_cast<float>(cuda::expr_setup_us(*dev, c));
  }
#endif
  run_op(
      rt, expr_site(c, o), d,
      [&](const Plan& p) { cpu(node, rt, p, c, host_out(c.out, alias)); },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& cd = cuda_device(rt);
        void* stream = cd.stream();
        std::vector<const void*> in(c.leaves.size());
        for (std::size_t k = 0; k < in.size(); ++k) in[k] = device_in(cd, c.leaves[k].buf, stream);
        void* out = device_out(cd, c.out, stream, alias);
        cuda::launch_expr(cd, c, in.data(), out, static_cast<cudaStream_t>(stream));
        for (const ExprLeaf& l : c.leaves) l.buf->device_done(stream);
        c.out->device_done(stream);
#endif
        return false;
      });
}

}  // namespace veda::detail
