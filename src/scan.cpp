// inclusive_scan / exclusive_scan: validation, one decision, the chosen tier.
#include "veda/scan.hpp"

#include "backends/cpu/scan.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/buffer.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/detail/reduce_kind.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/scan.hpp"
#endif

namespace veda::detail {
namespace {

template <class T, bool Inclusive, bool Serial, class Operands>
struct ScanTag {};

// Float scans in deterministic mode have only the serial tier: the parallel
// tiers group the additions differently from run to run.
template <class T>
bool serial_only(const Runtime& rt) {
  return std::is_floating_point_v<T> && rt.config().deterministic();
}

template <class T, class Operands>
Site& scan_site(const Runtime& rt, bool inclusive, const ScanOptions& o) {
  constexpr std::uint32_t all = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);
  const char* name = inclusive ? "inclusive_scan" : "exclusive_scan";
  const bool serial = serial_only<T>(rt);
  if (inclusive)
    return serial ? op_site<ScanTag<T, true, true, Operands>>(o.name, name, OpClass::Scan, tier_bit(Tier::Serial))
                  : op_site<ScanTag<T, true, false, Operands>>(o.name, name, OpClass::Scan, all);
  return serial ? op_site<ScanTag<T, false, true, Operands>>(o.name, name, OpClass::Scan, tier_bit(Tier::Serial))
                : op_site<ScanTag<T, false, false, Operands>>(o.name, name, OpClass::Scan, all);
}

template <class T>
void scan_cpu(Runtime& rt, Tier tier, const T* in, T* out, std::size_t n, bool inclusive, T init) {
  if (tier == Tier::TbbAuto) cpu::scan_parallel(*rt.state().cpu_executor, in, out, n, inclusive, init);
  else cpu::scan_serial(in, out, n, inclusive, init);
}

}  // namespace

template <class T>
void scan_span(std::span<const T> in, std::span<T> out, bool inclusive, T init, const ScanOptions& o) {
  const char* op = inclusive ? "veda::inclusive_scan" : "veda::exclusive_scan";
  check_placement(o.placement, op);
  check_byte_count(op, "in", in.size(), sizeof(T));
  check_byte_count(op, "out", out.size(), sizeof(T));
  if (out.size() != in.size())
    throw InvalidArgument(std::string(op) + ": out has " + std::to_string(out.size()) + " elements, in has " +
                          std::to_string(in.size()));
  const auto* ib = reinterpret_cast<const char*>(in.data());
  const auto* ob = reinterpret_cast<const char*>(out.data());
  if (ib != ob && ib < ob + out.size_bytes() && ob < ib + in.size_bytes())
    throw InvalidArgument(std::string(op) + ": out overlaps in without being in itself");
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = op_desc(in.size(), sizeof(T), o);
  describe_host_operands(d, in.size_bytes(), out.size_bytes());
  run_op(
      rt, scan_site<T, std::span<T>>(rt, inclusive, o), d,
      [&](const Plan& p) { scan_cpu(rt, p.tier, in.data(), out.data(), in.size(), inclusive, init); },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        gpu_bridge::DeviceTemp buf(rt, in.size_bytes() + 1, s);
        dev.copy_to_device(buf.get(), in.data(), in.size_bytes(), s, false);
        cuda::scan_device(dev, scalar_type_of<T>(), buf.get(), buf.get(), in.size(), inclusive, &init,
                          static_cast<cudaStream_t>(s));
        dev.copy_to_host(out.data(), buf.get(), out.size_bytes(), s, false);
        return true;
#else
        return false;
#endif
      });
}

template <class T>
Array<T> scan_array(const Array<T>& in, bool inclusive, T init, const ScanOptions& o) {
  check_placement(o.placement, inclusive ? "veda::inclusive_scan" : "veda::exclusive_scan");
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = op_desc(in.size(), sizeof(T), o);
  describe_operands(d, in);
  auto out = Array<T>::from_storage(make_host_storage(in.size() * sizeof(T)), in.size());
  run_op(
      rt, scan_site<T, Array<T>>(rt, inclusive, o), d,
      [&](const Plan& p) {
        scan_cpu(rt, p.tier, in.host().data(), out.host().data(), in.size(), inclusive, init);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        cuda::scan_device(dev, scalar_type_of<T>(), device_in(dev, in, s), device_out(dev, out, s), in.size(),
                          inclusive, &init, static_cast<cudaStream_t>(s));
        device_done({in.buffer(), out.buffer()}, s);
        return false;
#else
        return false;
#endif
      });
  return out;
}

#define VEDA_SCAN_INSTANTIATE(T)                                                                      \
  template void scan_span<T>(std::span<const T>, std::span<T>, bool, T, const ScanOptions&);          \
  template Array<T> scan_array<T>(const Array<T>&, bool, T, const ScanOptions&);
VEDA_FOR_EACH_OP_TYPE(VEDA_SCAN_INSTANTIATE)
#undef VEDA_SCAN_INSTANTIATE

}  // namespace veda::detail
