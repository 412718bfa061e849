// Library ops' view of their operands: residency for the cost model, and
// (CUDA backend) device pointers taken through the data layer. Buffer-level,
// so type-erased operands (sort values) work like Arrays; an empty Array has
// no Buffer and counts as valid everywhere.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/detail/type_key.hpp"
#include "veda/error.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/detail/gpu_bridge.hpp"  // DeviceTemp
#include "veda/runtime.hpp"
#endif

namespace veda::detail {

// A Shape of the nd (1 to 4) extents at e.
inline Shape make_shape(const std::size_t* e, int nd) {
  switch (nd) {
    case 1: return Shape{e[0]};
    case 2: return Shape{e[0], e[1]};
    case 3: return Shape{e[0], e[1], e[2]};
    default: return Shape{e[0], e[1], e[2], e[3]};
  }
}

// `axis` of shape `in` as an index in [0, ndim) (negative counts from the
// last), or InvalidArgument naming the op (`what`), the axis and the shape.
inline int checked_axis(const std::string& what, const Shape& in, int axis) {
  const int nd = in.ndim();
  if (axis < -nd || axis >= nd)
    throw InvalidArgument(what + ": axis " + std::to_string(axis) + " is out of range for shape " + in.str() + " (" +
                          std::to_string(nd) + " axes: " + std::to_string(-nd) + " to " + std::to_string(nd - 1) + ")");
  return axis < 0 ? axis + nd : axis;
}

// Bytes of one element of a float/double/int32/int64 op.
inline std::size_t elem_bytes(ScalarType t) { return t == ScalarType::F32 || t == ScalarType::I32 ? 4 : 8; }

// An _into form's out: x's shape, and not x's storage (InvalidArgument naming `what`).
inline void check_out(const char* what, const Shape& out, const Shape& x, const Buffer* out_buf, const Buffer* x_buf) {
  if (out != x)
    throw InvalidArgument(std::string(what) + ": out has shape " + out.str() + "; it must have x's shape " + x.str());
  if (out_buf && out_buf == x_buf)
    throw InvalidArgument(std::string(what) + ": out must not be x (the result is not computed in place)");
}

// A shape viewed around axis a as [outer, len, inner].
struct AxisSplit {
  std::size_t outer = 1, len = 0, inner = 1;
};
inline AxisSplit split_at(const Shape& s, int a) {
  AxisSplit r;
  for (int k = 0; k < a; ++k) r.outer *= s[k];
  for (int k = a + 1; k < s.ndim(); ++k) r.inner *= s[k];
  r.len = s[a];
  return r;
}

// An op along an axis: its shape for the cost model, and its type slot (the
// element type, and whether the axis is contiguous: each learns its own times).
inline void describe_axis(CallDesc& d, ScalarType t, const AxisSplit& s) {
  auto key = [&]<class T>(T) { return s.inner == 1 ? &type_tag<T, std::true_type> : &type_tag<T, std::false_type>; };
  d.type_key = t == ScalarType::F32   ? key(float{})
               : t == ScalarType::F64 ? key(double{})
               : t == ScalarType::I32 ? key(std::int32_t{})
                                      : key(std::int64_t{});
  d.dims[0] = s.outer;
  d.dims[1] = s.len;
  d.dims[2] = s.inner;
  d.ndims = 3;
}

// Adds where the operands' valid copies are to d (the bytes each tier would
// move), for ops whose results stay where they are computed.
// `bufs`: anything a range-for walks giving (const) Buffer pointers, null
// for an absent operand. (Not a std::ranges concept: the fuzzing build's
// clang cannot check those against this libstdc++.)
template <class Bufs>
void describe_buffers(CallDesc& d, const Bufs& bufs) {
  bool any = false;
  std::size_t count = 0;
  CopyIn copy_in;
  for (const Buffer* b : bufs) {
    ++count;
    if (!b) continue;
    const int where = b->device();  // -1: valid on no device
    copy_in.add(d, *b, where, b->bytes());
    if (!b->valid_on_host()) d.cpu_d2h_bytes += b->bytes();
    any |= where >= 0;
  }
  d.all_on_device = copy_in.finish(d) && count > 0;
  d.any_on_device = any;
  d.gpu_capable = VEDA_HAS_CUDA;
  d.nvcc_site = true;  // library kernels need no nvcc at the call site
}
inline void describe_buffers(CallDesc& d, std::initializer_list<const Buffer*> bufs) {
  describe_buffers(d, std::span<const Buffer* const>(bufs.begin(), bufs.size()));
}
template <class... A>
void describe_operands(CallDesc& d, const A&... arrays) {
  describe_buffers(d, {arrays.buffer()...});
}

// A fresh host Array of shape s (contents unset), for an op's result.
template <class T>
Array<T> host_array(const Shape& s) {
  auto a = Array<T>::from_storage(make_host_storage(s.checked_size(sizeof(T)) * sizeof(T)), s.size());
  a.reshape(s);
  return a;
}

// Host pointer for writing an operand (null for an absent buffer): its old
// contents are brought up to date only when `keep` (a read-modify-write,
// e.g. beta != 0); otherwise they may be discarded.
inline void* host_out(Buffer* b, bool keep) { return b ? (keep ? b->host_write() : b->host_overwrite()) : nullptr; }

// Host-range operands: copied in, and results copied back, on the GPU tiers.
inline void describe_host_operands(CallDesc& d, std::size_t in_bytes, std::size_t out_bytes) {
  d.h2d_bytes = in_bytes;
  d.d2h_bytes = out_bytes;
  d.gpu_capable = VEDA_HAS_CUDA;
  d.nvcc_site = true;
}

#if VEDA_HAS_CUDA
// The runtime's CUDA device. Without one, DeviceFault: the call falls back
// to the CPU.
inline cuda::CudaDevice& runtime_cuda_device(Runtime& rt) {
  auto* dev = dynamic_cast<cuda::CudaDevice*>(rt.state().device());
  if (!dev) throw DeviceFault("veda: no CUDA device in this runtime");
  return *dev;
}
// The same, made current on the calling thread (a thread starts on device 0,
// where another device's streams and events fail): what a GPU call does first.
inline cuda::CudaDevice& cuda_device(Runtime& rt) {
  cuda::CudaDevice& dev = runtime_cuda_device(rt);
  dev.make_current();
  return dev;
}
// Device pointers for reading and for writing (old contents kept only when
// `keep`: updating in place); null for an absent (empty) buffer.
// device_done records the stream's work on every buffer used.
inline const void* device_in(cuda::CudaDevice& dev, Buffer* b, void* s) { return b ? b->device_read(dev, s) : nullptr; }
inline void* device_out(cuda::CudaDevice& dev, Buffer* b, void* s, bool keep = false) {
  return b ? b->device_write(dev, s, keep) : nullptr;
}
inline void device_done(std::initializer_list<Buffer*> bufs, void* s) {
  for (Buffer* b : bufs)
    if (b) b->device_done(s);
}
template <class T>
const T* device_in(cuda::CudaDevice& dev, const Array<T>& a, void* s) {
  return static_cast<const T*>(device_in(dev, a.buffer(), s));
}
template <class T>
T* device_out(cuda::CudaDevice& dev, Array<T>& a, void* s) {
  return static_cast<T*>(device_out(dev, a.buffer(), s));
}
#endif

}  // namespace veda::detail
