// Non-template parts of veda::Array: errors, pinned storage, placement hints.
#include <cstdlib>

#include "runtime/device_api.hpp"
#include "runtime/logging.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/pinned_memory.hpp"
#endif

namespace veda::detail {

void throw_index(std::size_t i, std::size_t n) {
  throw InvalidArgument("veda::Array: index " + std::to_string(i) + " out of range for size " +
                        std::to_string(n));
}

void throw_range(const char* what, std::size_t first, std::size_t count, std::size_t n) {
  throw InvalidArgument("veda::Array::" + std::string(what) + ": elements [" + std::to_string(first) + ", " +
                        std::to_string(first) + " + " + std::to_string(count) + ") out of range for size " +
                        std::to_string(n));
}

void throw_shape(const std::string& what, const Shape& from, const Shape& to) {
  throw InvalidArgument(what + ": shape " + to.str() + " (" + std::to_string(to.size()) + " elements) does not fit " +
                        from.str() + " (" + std::to_string(from.size()) + " elements)");
}

namespace {
class MallocStorage final : public HostStorage {
 public:
  explicit MallocStorage(std::size_t n) {
    data = std::malloc(n ? n : 1);
    if (!data) throw OutOfMemory("cannot allocate " + std::to_string(n) + " bytes of host memory");
    bytes = n;
  }
  ~MallocStorage() override { std::free(data); }
};

#if VEDA_HAS_CUDA
class PinnedStorage final : public HostStorage {
 public:
  explicit PinnedStorage(void* p, std::size_t n) {
    data = p;
    bytes = n;
    pinned = true;
  }
  // cudaFreeHost needs no runtime object, so arrays may outlive veda::shutdown().
  ~PinnedStorage() override { cuda::free_pinned(data); }
};
#endif
}  // namespace

std::unique_ptr<HostStorage> make_host_storage(std::size_t bytes) {
  return std::make_unique<MallocStorage>(bytes);
}

std::unique_ptr<HostStorage> make_pinned_storage(std::size_t bytes) {
#if VEDA_HAS_CUDA
  // Without a running runtime (after shutdown()) nothing is pinned: opening a
  // call would throw, and page-locking serves no device anyway.
  if (!is_running()) return std::make_unique<MallocStorage>(bytes);
  CallScope scope;
  if (scope.runtime().gpu_usable()) {
    if (void* p = cuda::allocate_pinned(bytes ? bytes : 1))
      return std::make_unique<PinnedStorage>(p, bytes);
    log_once(spdlog::level::info, "pinned-alloc-failed",
             "page-locked host allocation failed; using pageable memory");
  }
#endif
  return std::make_unique<MallocStorage>(bytes);
}

namespace {
// The device `device` names for Array's placement calls (-1: the first),
// nullptr when the runtime has none; InvalidArgument for one it does not use.
DeviceApi* placement_device(CallScope& scope, int device, const char* what) {
  RuntimeState& st = scope.runtime().state();
  if (st.device_count() == 0) {
    check_device_index(scope.runtime(), device, what);
    return nullptr;
  }
  check_device_sign(device, what);
  const int slot = device == -1 ? 0 : st.slot_of(device);
  if (slot < 0) {
    check_device_option(scope.runtime(), device, what);
    throw InvalidArgument(std::string(what) + ": device " + std::to_string(device) + " is not one this runtime uses");
  }
  return st.device_at(static_cast<std::size_t>(slot));
}
}  // namespace

void array_to_device(Buffer& b, int device) {
  CallScope scope;
  DeviceApi* dev = placement_device(scope, device, "Array::to_device");
  if (!dev) return;
  const StreamHandle s = dev->stream();
  try {
    b.device_read(*dev, s);
    b.device_done(s);
  } catch (const OutOfMemory& e) {  // a hint: the data simply stays on the host
    log_once(spdlog::level::info, "to_device-oom", std::string("Array::to_device: ") + e.what());
  } catch (const DeviceFault& e) {  // the copy failed twice (Buffer retries once): the same
    log_once(spdlog::level::warn, "to_device-fault", std::string("Array::to_device: ") + e.what());
  }
}

void* array_device_data(Buffer& b, int device, DeviceAccess access) {
  CallScope scope;
  DeviceApi* dev = placement_device(scope, device, "Array::device_data");
  if (!dev) return nullptr;
  const StreamHandle s = dev->stream();
  void* p = access == DeviceAccess::Read ? const_cast<void*>(b.device_read(*dev, s))
                                         : b.device_write(*dev, s, access == DeviceAccess::Write);
  b.device_done(s);
  dev->synchronize(s);  // s follows every stream that used the copy: all of it is done
  return p;
}

void array_release_device(Buffer& b) {
  CallScope scope;  // the device must stay alive while data comes back
  b.evict_to_host();
}

}  // namespace veda::detail
