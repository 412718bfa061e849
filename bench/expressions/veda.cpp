// veda: the fused expression (one pass, placed by the cost model), and the
// same expression one operation at a time (a pass and a temporary per
// operation, as CuPy and NumPy evaluate), on the cuda tier where a GPU is
// usable, else tbb-auto.
#include <utility>

#include "veda/decision.hpp"
#include "veda/expr.hpp"
#include "veda/runtime.hpp"

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {
namespace {
veda::Array<float> X, Y, Mu, Sd, Out;

veda::ExprOptions one_op() {
  veda::ExprOptions o;
  o.tier = veda::get_runtime().gpu_usable() ? "cuda" : "tbb-auto";
  return o;
}
}  // namespace

Memory veda_setup(const Data& d) {
  X = veda::Array<float>(d.x);
  Y = veda::Array<float>(d.y);
  Mu = veda::Array<float>(d.mu);
  Sd = veda::Array<float>(d.sd);
  Out = veda::Array<float>(d.x.size());
  return {std::as_const(X).host().data(), std::as_const(Y).host().data(), std::as_const(Mu).host().data(),
          std::as_const(Sd).host().data(), Out.host().data(), d.x.size(), d.cols};
}

void veda_fused(Case c, const std::string& tier) {
  veda::ExprOptions o;
  o.tier = tier;
  switch (c) {
    case Case::Axpy: veda::assign(Out, 2 * X + Y, o); break;
    case Case::Rational: veda::assign(Out, (X - Y) * (X + Y) / (1 + X * X), o); break;
    case Case::LeakySqrt: veda::assign(Out, veda::where(X > 0, X, 0.1f * X) + veda::sqrt(veda::abs(Y)), o); break;
    case Case::Normalize:
      X.reshape(X.size() / Mu.size(), Mu.size());
      Out.reshape(X.shape());
      veda::assign(Out, (X - Mu) / Sd, o);
      X.flatten();
      Out.flatten();
      break;
  }
}

void veda_one_op(Case c) {
  const veda::ExprOptions o = one_op();
  switch (c) {
    case Case::Axpy: {
      auto t = veda::eval(2 * X, o);
      veda::assign(Out, t + Y, o);
      break;
    }
    case Case::Rational: {
      auto a = veda::eval(X - Y, o), b = veda::eval(X + Y, o), p = veda::eval(a * b, o);
      auto q = veda::eval(X * X, o), r = veda::eval(1 + q, o);
      veda::assign(Out, p / r, o);
      break;
    }
    case Case::LeakySqrt: {
      const auto m = veda::eval(X > 0, o);
      auto s = veda::eval(0.1f * X, o), w = veda::eval(veda::where(m, X, s), o);
      auto a = veda::eval(veda::abs(Y), o), q = veda::eval(veda::sqrt(a), o);
      veda::assign(Out, w + q, o);
      break;
    }
    case Case::Normalize: {
      X.reshape(X.size() / Mu.size(), Mu.size());
      auto t = veda::eval(X - Mu, o);
      Out.reshape(X.shape());
      veda::assign(Out, t / Sd, o);
      X.flatten();
      Out.flatten();
      break;
    }
  }
}

std::vector<float> veda_result() { return Out.to_vector(); }
// Read after the call, not in it: building the record costs more than a
// small call.
std::string veda_tier() { return veda::last_decision().tier; }
std::string one_op_tier() { return one_op().tier; }

}  // namespace bench::expressions
