#include <optional>

#include "bench/spmv/contenders.hpp"
#include "veda/runtime.hpp"
#include "veda/sparse.hpp"

namespace bench::spmv {
namespace {
std::optional<veda::SparseCsr<double>> g_a;
veda::Array<double> g_x, g_y;
}  // namespace

void veda_setup(const Csr& a, const std::vector<double>& x) {
  g_a.emplace(a.rows, a.cols, veda::Array<std::int32_t>(a.off), veda::Array<std::int32_t>(a.idx),
              veda::Array<double>(a.val));
  g_x = veda::Array<double>(x);
  g_y = veda::Array<double>(a.rows);
}

void veda_spmv(const std::string& tier) {
  veda::spmv_into(g_y, *g_a, g_x, {.tier = tier});
  veda::synchronize();  // a GPU tier is timed to its end
}

std::vector<double> veda_result() { return g_y.to_vector(); }
std::string veda_tier() { return veda::last_decision().tier; }
void veda_release() {
  g_a.reset();
  g_x = veda::Array<double>();
  g_y = veda::Array<double>();
}

}  // namespace bench::spmv
