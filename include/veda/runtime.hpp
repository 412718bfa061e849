// veda/runtime.hpp — the runtime's lifecycle and what it found.
//
//   veda::init(cfg);            // start with a Config (environment applied on top)
//   veda::get_runtime();        // the running runtime; starts one with defaults
//                               // plus environment on first use
//   veda::shutdown();           // waits for calls in flight, releases everything
//
// Lifecycle contract: init() while running throws veda::Error; init() after
// shutdown() starts a fresh runtime. After shutdown(), get_runtime() and every
// veda call throw veda::Error until init() is called again; it never restarts
// behind the program's back. shutdown() without a running runtime is a no-op.
//
// Thread-safety: all four functions may be called from any thread at once;
// concurrent first calls to get_runtime() start exactly one runtime. The
// Runtime reference stays valid until shutdown().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "veda/config.hpp"
#include "veda/device.hpp"
#include "veda/memory_stats.hpp"

namespace veda {

namespace detail {
class RuntimeState;
}

class Runtime {
 public:
  const Config& config() const noexcept { return *config_; }  // inline: read on every call's hot path
  const CpuInfo& cpu() const noexcept;
  const GpuStatus& gpu() const noexcept;
  bool gpu_usable() const noexcept { return gpu().usable; }
  // Device pool and pinned staging figures; see veda/memory_stats.hpp.
  MemoryStats memory_stats() const;
  // The device work veda's calls queued since this runtime started: one per
  // kernel, CUB algorithm, cuBLAS or cuSPARSE call, generated expression
  // kernel or gpu_kernel CUDA implementation whose launch succeeded. 0 without
  // a GPU. A test reads it before and after a call to prove that the call's
  // work ran on the device.
  std::uint64_t device_launches() const noexcept;
  // See veda::empty_cache().
  std::size_t empty_cache();

  // A multi-line, human-readable report: CPU, threads, each GPU or why none.
  std::string describe() const;
  // Every GPU's memory, utilisation and temperature now, through NVML,
  // which is loaded at run time: without a driver the report says why not.
  GpuMonitorReport gpu_monitor() const;

  detail::RuntimeState& state() noexcept { return *state_; }
  const detail::RuntimeState& state() const noexcept { return *state_; }

  explicit Runtime(std::unique_ptr<detail::RuntimeState> s);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

 private:
  std::unique_ptr<detail::RuntimeState> state_;
  const Config* config_;  // the state's, fixed for the runtime's life
};

void init(const Config& config);
void init();
void shutdown();
Runtime& get_runtime();
bool is_running() noexcept;

// Waits until the GPU work queued by this thread's veda calls has finished
// (results left on the device are then complete). Reading an Array on the
// host waits by itself; this is for timing, and for handing device data to
// other code. A no-op without a GPU or a running runtime.
void synchronize();

// Gives the device memory veda's pool holds for reuse (everything not in a
// live allocation) back to the driver, once the GPU work that last used it
// has finished, so that other libraries or processes can have it (as
// torch.cuda.empty_cache() does). Returns the bytes released: 0 without a
// GPU or a running runtime. Arrays resident on the device are not touched.
std::size_t empty_cache();

// Probes for a usable GPU under `config` (environment applied on top) without
// starting a runtime. Never throws for a missing GPU; the status says why.
GpuStatus detect_gpu(const Config& config);
GpuStatus detect_gpu();

}  // namespace veda
