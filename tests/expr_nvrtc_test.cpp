// Contract: the cuda tier's generated kernels (backends/cuda/expr_kernel).
// For every operation, element type and planned dimension count, the source
// veda generates compiles with NVRTC to a CUBIN for sm_80 and sm_90, and to
// PTX for an architecture newer than NVRTC knows; a source with an error is
// veda::DeviceFault carrying NVRTC's log. No GPU is needed: NVRTC compiles
// on the host, so CI checks every kernel veda would run.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "backends/cuda/expr_kernel.hpp"
#include "veda/expr.hpp"

namespace {
namespace cuda = veda::detail::cuda;

// The kernel source of e with `dims` planned dimensions, into a T.
template <class T, class E>
std::string source_for(const E& e, int dims) {
  veda::detail::ExprCallOf<std::remove_cvref_t<decltype(e.node())>> c(e.node());
  c.out_type = veda::detail::cuda_type_name<T>();
  c.out_bytes = sizeof(T);
  c.dims = dims;
  return cuda::expr_kernel_source(c);
}

void compiles(const std::string& src) {
  CAPTURE(src);
  for (int arch : {80, 90}) {
    const cuda::ExprImage img = cuda::compile_expr(src, arch);
    CHECK_FALSE(img.ptx);
    REQUIRE(img.bytes.size() > 4);
    CHECK(img.bytes.compare(0, 4, "\x7f" "ELF") == 0);
  }
}

}  // namespace

TEST_CASE("every operation, type and dimension count compiles to a CUBIN") {
  const veda::Array<float> f(veda::Shape{2, 3});
  const veda::Array<double> d(veda::Shape{3});
  const veda::Array<std::int32_t> i(veda::Shape{2, 1});
  const veda::Array<std::int64_t> l(veda::Shape{1, 3});
  const veda::Array<bool> m(veda::Shape{2, 3});
  for (int dims = 1; dims <= 4; ++dims) {
    CAPTURE(dims);
    compiles(source_for<float>((f - d) / (f + 1.0f) * 2 + veda::sqrt(veda::abs(f)), dims));
    compiles(source_for<double>(veda::where(f > d, veda::exp(-f), veda::maximum(f, d) - veda::tanh(d)), dims));
    compiles(source_for<float>(veda::clamp(veda::pow(f, 2) - veda::log(f) + veda::sin(f) * veda::cos(f), -1, 1), dims));
    compiles(source_for<bool>((i <= l) == m, dims));
    compiles(source_for<std::int64_t>(veda::abs(i) - l * 3 + veda::minimum(i, 7), dims));
    compiles(source_for<double>(i / l + veda::where(m, 1, 0), dims));
    compiles(source_for<std::int32_t>(f * 2.5, dims));
  }
}

TEST_CASE("an architecture newer than NVRTC knows gets PTX for the newest it does") {
  const veda::Array<float> f(4);
  const cuda::ExprImage img = cuda::compile_expr(source_for<float>(f * 2, 1), 999);
  CHECK(img.ptx);
  CHECK(img.bytes.find(".entry veda_expr") != std::string::npos);
}

TEST_CASE("a source NVRTC rejects is DeviceFault with NVRTC's log") {
  CHECK_THROWS_WITH_AS(cuda::compile_expr("extern \"C\" __global__ void veda_expr() { undeclared = 1; }", 90),
                       doctest::Contains("undeclared"), veda::DeviceFault);
}
