// Runtime lifecycle: init, shutdown, get_runtime, and CallScope's slow path.
//
// Ordering argument for CallScope vs shutdown(): a call marks its thread's
// record in flight and then loads g_running; shutdown() clears g_running and
// then waits for every record's mark to clear. Each side separates its store
// from its load by a full fence (the call's is a compiler fence when the OS
// barrier, which shutdown() then issues, stands in for it), so either the
// call sees g_running cleared (and backs out) or shutdown() sees the mark
// (and waits for it). A thread claiming a record does so with a seq_cst
// read-modify-write before its mark, so a record shutdown() did not find
// belongs to a call that will see g_running cleared. The runtime is
// destroyed only after the wait.
//
// While shutdown() waits (g_draining set), a call on one of veda's oneTBB
// workers is a chunk of a call in flight calling veda again: refusing it
// would be fine, blocking it would deadlock (the outer call waits for the
// chunk), so it runs on the draining runtime, marked. A worker's call may
// have read g_draining just before shutdown() cleared it, so shutdown()
// waits a second time after clearing it. Other threads' new calls are
// refused at once.
#include "veda/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <pthread.h>
#include <sstream>
#include <thread>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <tbb/info.h>

#include "backends/cpu/blas.hpp"
#include "backends/cpu/cpu_info.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "veda/build_config.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_device.hpp"
#endif
#include "src/calibration.hpp"
#include "runtime/decision_log.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/host_device.hpp"
#include "runtime/history_store.hpp"
#include "src/device_discovery.hpp"
#include "src/profile_refresh.hpp"
#include "runtime/logging.hpp"
#include "runtime/nvml.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/telemetry.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/settled_plans.hpp"
#include "veda/error.hpp"

namespace veda {
namespace detail {

std::atomic<Runtime*> g_running{nullptr};
std::atomic<bool> g_os_barrier{false};
std::atomic<ThreadRecord*> g_records{nullptr};
std::atomic<Runtime*> g_draining{nullptr};  // the runtime shutdown() waits to destroy

namespace {
enum class Phase { NeverStarted, Running, ShutDown };
std::mutex g_lifecycle;  // serialises init/shutdown/first start
Phase g_phase = Phase::NeverStarted;
std::unique_ptr<Runtime> g_runtime;
std::atomic<std::uint64_t> g_generation{0};

void shutdown_at_exit() noexcept {
  try {
    shutdown();
  } catch (...) {
    // exit() called from inside a veda call: the device is left to the process's end
  }
}

// Registers this process for the OS barrier; from then on calls order
// their marks with a compiler fence (a call that read the flag unset still
// uses a full fence, which is always correct).
void register_os_barrier() {
#if defined(__linux__) && defined(__NR_membarrier)
  if (g_os_barrier.load(std::memory_order_relaxed)) return;
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0)
    g_os_barrier.store(true, std::memory_order_release);
#endif
}

// A full fence on every thread of the process (cannot fail once registered).
void os_barrier() {
#if defined(__linux__) && defined(__NR_membarrier)
  if (g_os_barrier.load(std::memory_order_acquire)) syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
#endif
}

// Caller holds g_lifecycle.
Runtime& start_locked(const Config& requested) {
  Config cfg = apply_environment(requested);  // may throw ConfigError: nothing started
  // Threads beyond the hardware threads only wait for a core (oneTBB starts
  // no more workers than that anyway), and the cost model would count them.
  // An explicit profile may model another machine (tests do): taken as given.
  if (const int cores = tbb::info::default_concurrency(); cfg.threads() > cores && cfg.profile().empty()) {
    configure_logging(cfg.log_level());
    log().warn("{} threads asked for, {} hardware threads available to this process: veda uses {}", cfg.threads(),
               cores, cores);
    cfg = with_threads(cfg, cores);
  }
  try {
    g_runtime = std::make_unique<Runtime>(std::make_unique<RuntimeState>(cfg));
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("veda::init: not enough memory to start the runtime");
  } catch (const std::exception& e) {  // e.g. oneTBB cannot create its threads
    throw Error(std::string("veda::init: could not start the runtime: ") + e.what());
  }
  g_phase = Phase::Running;
  register_os_barrier();
  g_running.store(g_runtime.get(), std::memory_order_seq_cst);
  // A program that never calls shutdown() must not meet the device after the
  // CUDA runtime has unloaded (g_runtime's destructor was registered before
  // CUDA's exit handlers, so it would run after them). Handlers run in reverse
  // order of registration: one registered once the device is up runs first.
  static bool registered_after_device = false;
  if (!registered_after_device && g_runtime->state().device_count() > 0) {
    registered_after_device = true;
    std::atexit(shutdown_at_exit);
  }
  return *g_runtime;
}

[[noreturn]] void throw_shut_down() {
  throw Error("veda runtime was shut down; call veda::init() to start it again");
}

// Releases the thread's record when it ends, for a later thread to reuse.
// A POSIX key's destructor runs after the thread's C++ thread_local
// destructors, so a veda call from one of those still finds its record.
void release_record(void* record) {
  t_record = nullptr;
  static_cast<ThreadRecord*>(record)->owned.store(false, std::memory_order_release);
}
pthread_key_t record_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    if (pthread_key_create(&k, release_record) != 0) throw Error("veda: no thread-specific key left");
    return k;
  }();
  return key;
}

void wait_for_calls() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  os_barrier();
  for (ThreadRecord* r = g_records.load(std::memory_order_acquire); r; r = r->next)
    while (r->in_flight.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}
}  // namespace

ThreadRecord& claim_thread_record() {
  const pthread_key_t key = record_key();
  ThreadRecord* mine = nullptr;
  for (ThreadRecord* r = g_records.load(std::memory_order_acquire); r && !mine; r = r->next) {
    bool free = false;  // (read first: a failing CAS would still take the line from its owner)
    if (!r->owned.load(std::memory_order_relaxed) &&
        r->owned.compare_exchange_strong(free, true, std::memory_order_seq_cst))
      mine = r;
  }
  if (!mine) {
    mine = new ThreadRecord;
    mine->owned.store(true, std::memory_order_relaxed);
    mine->next = g_records.load(std::memory_order_relaxed);
    while (!g_records.compare_exchange_weak(mine->next, mine, std::memory_order_seq_cst)) {
    }
  }
  if (pthread_setspecific(key, mine) != 0) {
    mine->owned.store(false, std::memory_order_release);
    throw OutOfMemory("veda: cannot register the thread's call record");
  }
  t_record = mine;
  return *mine;
}

Runtime& enter_runtime_slow() {
  // The scope is marked in flight; a concurrent shutdown() waits for it, so
  // it must not block on g_lifecycle while marked.
  ThreadRecord& mark = *t_record;
  if (Runtime* draining = g_draining.load(std::memory_order_seq_cst)) {
    if (on_cpu_worker()) return *draining;  // still marked: shutdown() waits for it
    mark.in_flight.store(0, std::memory_order_release);
    throw_shut_down();
  }
  // Back out, start or find the runtime, and mark again.
  mark.in_flight.store(0, std::memory_order_release);
  for (;;) {
    {
      std::lock_guard lock(g_lifecycle);
      if (g_phase == Phase::ShutDown) throw_shut_down();
      if (g_phase == Phase::NeverStarted) start_locked(Config::builder().build());
    }
    mark.in_flight.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (Runtime* rt = g_running.load(std::memory_order_seq_cst)) return *rt;
    mark.in_flight.store(0, std::memory_order_release);  // lost a race with shutdown
  }
}

RuntimeState::RuntimeState(const Config& c)
    : config(c), generation(g_generation.fetch_add(1) + 1) {
  const int emulate = emulated_device_count();  // first: a bad value throws before anything starts
  configure_logging(config.log_level());
  reset_log_once();
  cpu = detect_cpu();
  cpu.threads = config.threads();
  cpu_executor = std::make_unique<CpuExecutor>(config.threads(), config.pin_workers(), workers);
  gpu = discover_gpu(config);
#if VEDA_HAS_CUDA
  if (gpu.usable) {
    try {
      add_cuda_devices();
    } catch (const Error& e) {
      devices_.clear();
      gpu.usable = false;
      gpu.why = GpuUnavailable::DiscoveryFailed;
      gpu.reason = std::string("could not set up the device: ") + e.what();
      gpu.selected = -1;
      gpu.in_use.clear();
    }
  }
#endif
  if (gpu.usable)
    log().info("GPU {}: {}", gpu.selected, gpu.reason);
  else
    log().info("no usable GPU: {}; all work runs on the CPU", gpu.reason);
  set_profile(obtain_profile(config, cpu, gpu, *cpu_executor, all_devices()));
  log().debug("machine profile from {}", profile().source);
  if (profile().provisional && config.profile().empty() && config.calibration() != CalibrationMode::Off)
    refresh = std::make_unique<ProfileRefresh>(*this, ProfileRefresh::policy());
  if (config.learned_history() && config.profile().empty() && config.calibration() != CalibrationMode::Off)
    history = std::make_unique<HistoryStore>(profile_cache_dir() + "/history-" + profile().key() + ".json", [this] {
      const Blas& b = blas(cpu, profile().cpu.blas_core);
      return !b.available ? std::string("none") : b.core.empty() ? b.library : b.core;
    });
  if (config.telemetry()) {  // after calibration: its work is not the program's
    telemetry = std::make_unique<Telemetry>();
    for (auto& d : devices_) d->telemetry = telemetry.get();
    workers.set_listener(telemetry.get());
  }
  // Also after calibration: its allocations, copies and decisions are not the program's.
  if (!config.replay().empty()) replay = std::make_unique<DecisionReplay>(config.replay(), "replay");
  if (!config.record().empty()) recorder = std::make_unique<DecisionRecorder>(config.record(), "record");
  if (!config.faults().empty()) {
    faults = std::make_unique<FaultInjector>(parse_fault_plan(config.faults(), "faults"));
    set_fault_injector(faults.get());
  }
  if (emulate > 0) install_devices(emulated_devices(emulate));
  invalidate_settled_plans();  // last: plans made before now belong to another runtime or to calibration
}

#if VEDA_HAS_CUDA
// One CudaDevice per GPU of Config::devices() that exists (the first is
// Config::device(), which discovery checked); the others are skipped with a
// warning, as a missing Config::device() leaves veda on the CPU.
void RuntimeState::add_cuda_devices() {
  auto host_copy = [exec = cpu_executor.get()](void* d, const void* s, std::size_t n) { exec->copy(d, s, n); };
  std::vector<int> wanted = config.devices();
  if (config.all_devices()) {
    wanted = {gpu.selected};
    for (const GpuDeviceInfo& d : gpu.devices)
      if (d.index != gpu.selected) wanted.push_back(d.index);
  }
  gpu.in_use.clear();
  for (int index : wanted) {
    if (index < 0 || static_cast<std::size_t>(index) >= gpu.devices.size()) {
      log().warn("Config::devices: GPU {} does not exist ({} found); veda does not use it", index, gpu.devices.size());
      continue;
    }
    devices_.push_back(
        std::make_unique<cuda::CudaDevice>(gpu.devices[static_cast<std::size_t>(index)], config, host_copy));
    gpu.in_use.push_back(index);
  }
  if (devices_.size() > 1) {
    std::vector<cuda::CudaDevice*> all;
    for (auto& d : devices_) all.push_back(static_cast<cuda::CudaDevice*>(d.get()));
    for (const std::string& line : cuda::enable_peer_access(all)) log().info("{}", line);
  }
  devices_.front()->make_current();  // each constructor made its own device current
}
#endif

// VEDA_EMULATE_DEVICES=N (tests): N host-emulated devices with asynchronous
// streams, so that the data layer's multi-device paths run without GPUs.
int RuntimeState::emulated_device_count() {
  const char* text = std::getenv("VEDA_EMULATE_DEVICES");
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 1 || n > 16)
    throw ConfigError("VEDA_EMULATE_DEVICES", text, "must be a number of devices from 1 to 16");
  return static_cast<int>(n);
}

std::vector<std::unique_ptr<DeviceApi>> RuntimeState::emulated_devices(int n) {
  std::vector<std::unique_ptr<DeviceApi>> out;
  for (int i = 0; i < n; ++i) {
    auto d = HostDevice::async(50, static_cast<std::uint64_t>(i) + 1);
    d->set_index(i);
    out.push_back(std::move(d));
  }
  return out;
}

int RuntimeState::slot_of(int index) const noexcept {
  for (std::size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i]->index() == index) return static_cast<int>(i);
  return -1;
}

void RuntimeState::evict_devices_locked() noexcept {
  for (auto& d : devices_) {
    d->telemetry = nullptr;
    d->evict_all();  // arrays keep their data on the host
  }
  devices_.clear();
}

RuntimeState::~RuntimeState() {
  refresh.reset();  // first: it measures with the executor and writes the profile
  if (history && !history->save(generation))
    log().warn("could not write the learned history to {}: {}", history->path(), history->save_error());
  if (faults) set_fault_injector(nullptr);
  if (replay && replay->remaining())
    log().warn("veda replay ({}): {} recorded calls were not made by this run", config.replay(), replay->remaining());
  write_trace_if_asked();
  {
    std::unique_lock life(device_lifetime());  // Arrays being destroyed finish first
    evict_devices_locked();
  }
  // Workers report to the telemetry until the executor has gone.
  cpu_executor.reset();
  telemetry.reset();
}

void RuntimeState::set_profile(MachineProfile p) {
  ProfileVersion v;
  for (std::size_t slot = 1; slot <= p.other_gpus.size(); ++slot) v.by_slot.push_back(p.for_device(slot));
  v.whole = std::move(p);
  std::lock_guard lock(profiles_mu_);
  profiles_.push_back(std::move(v));
  profile_.store(&profiles_.back(), std::memory_order_release);
}

std::vector<DeviceApi*> RuntimeState::all_devices() const {
  std::vector<DeviceApi*> all;
  for (const auto& d : devices_) all.push_back(d.get());
  return all;
}

void RuntimeState::install_device(std::unique_ptr<DeviceApi> d) {
  std::vector<std::unique_ptr<DeviceApi>> one;
  if (d) one.push_back(std::move(d));
  install_devices(std::move(one));
}

void RuntimeState::install_devices(std::vector<std::unique_ptr<DeviceApi>> d) {
  std::unique_lock life(device_lifetime());
  evict_devices_locked();
  devices_ = std::move(d);
  bool real_gpu = !devices_.empty();
  for (auto& dev : devices_) {
    dev->telemetry = telemetry.get();
#if VEDA_HAS_CUDA
    real_gpu &= dynamic_cast<cuda::CudaDevice*>(dev.get()) != nullptr;
#else
    real_gpu = false;
#endif
  }
  // GPU tiers launch CUDA kernels: with an emulated device in place they are
  // not candidates, exactly as on a machine without a GPU.
  if (!real_gpu && gpu.usable) {
    gpu.usable = false;
    gpu.why = GpuUnavailable::Emulated;
    gpu.reason = "a host-emulated device replaced the GPU";
  }
  invalidate_settled_plans();  // plans made while the GPU was usable
}

void RuntimeState::write_trace_if_asked() noexcept {
  if (!telemetry || config.trace().empty()) return;
  try {
    for (auto& d : devices_) d->flush_trace();
    // A regular file only (a FIFO would block shutdown), never through a
    // symbolic link; every write and the close checked (a full disk).
    FileWriter out;
    std::string why;
    if (!out.open(config.trace(), why)) throw std::runtime_error(why);
    if (!out.write(trace_json(*telemetry, devices_.empty() ? std::string() : devices_.front()->name(), config.rank())) || !out.close())
      throw std::runtime_error(out.error());
    log().info("trace written to {}", config.trace());
  } catch (const std::exception& e) {
    log().error("could not write the trace to {}: {}", config.trace(), e.what());
  }
}

}  // namespace detail

Runtime::Runtime(std::unique_ptr<detail::RuntimeState> s) : state_(std::move(s)), config_(&state_->config) {}
Runtime::~Runtime() = default;
const CpuInfo& Runtime::cpu() const noexcept { return state_->cpu; }
const GpuStatus& Runtime::gpu() const noexcept { return state_->gpu; }

GpuMonitorReport Runtime::gpu_monitor() const { return detail::read_nvml(gpu().devices); }

MemoryStats Runtime::memory_stats() const {
  MemoryStats m;
  m.cpu_fallbacks = state_->cpu_fallbacks.load(std::memory_order_relaxed);
  if (state_->faults)
    for (std::size_t k = 0; k < detail::kFaultKinds; ++k)
      m.faults_injected += state_->faults->injected(static_cast<detail::FaultKind>(k));
  for (std::size_t slot = 0; slot < state_->device_count(); ++slot) {
    detail::DeviceApi* dev = state_->device_at(slot);
    const auto p = dev->pool().stats();
    const auto info = dev->memory_info();
    DeviceMemoryStats d;
    d.device = dev->index();
    d.used = p.bytes_in_use;
    d.cached = p.bytes_cached;
    d.free = info.free;
    d.total = info.total;
    d.peak = p.peak_in_use;
    d.limit = p.limit;
    d.largest_free_block = p.largest_free_block;
    d.allocations = p.allocations;
    d.cache_hits = p.cache_hits;
    d.hit_rate = p.hit_rate();
    d.oom_retries = p.oom_retries;
    d.oom_failures = p.oom_failures;
    m.devices.push_back(d);
    m.pinned_staging_in_use += dev->staging_in_use();
    m.pinned_staging_total += dev->staging_total();
  }
  return m;
}

std::uint64_t Runtime::device_launches() const noexcept {
  return detail::launch_count() - state_->launches_at_start;
}

std::size_t Runtime::empty_cache() {
  std::size_t freed = 0;
  for (std::size_t slot = 0; slot < state_->device_count(); ++slot) freed += state_->device_at(slot)->pool().trim();
  if (freed) detail::log().info("empty_cache: released {:.1f} MiB of cached device memory", freed / 1048576.0);
  return freed;
}

std::size_t empty_cache() { return is_running() ? get_runtime().empty_cache() : 0; }

std::string Runtime::describe() const {
  std::ostringstream os;
  const auto& c = cpu();
  os << "veda " << VEDA_VERSION << "\n"
     << "CPU: " << c.model << " (" << c.hardware_threads << " hardware threads, veda uses "
     << c.threads << (state_->cpu_executor->pinned() ? ", pinned" : "") << ")"
     << (c.avx512 ? " AVX-512" : c.avx2 ? " AVX2" : "");
  if (const auto cap = detail::isa_cap()) os << " (kernels capped at " << to_string(*cap) << " by VEDA_MAX_CPU_ISA)";
  os << "\n";
  const auto& g = gpu();
  if (!g.devices.empty()) {
    for (const auto& d : g.devices)
      os << "GPU " << d.index << ": " << d.name << ", compute capability " << d.cc_major << "."
         << d.cc_minor << ", " << d.sm_count << " SMs, " << (d.memory_total >> 20) << " MiB"
         << (d.index == g.selected ? " (selected, " + std::to_string(d.memory_free >> 20) + " MiB free)"
             : std::find(g.in_use.begin(), g.in_use.end(), d.index) != g.in_use.end() ? std::string(" (in use)")
                                                                                      : std::string())
         << "\n";
  }
  os << "GPU: " << (g.usable ? "usable" : "not usable") << " - " << g.reason << "\n";
  const GpuMonitorReport mon = gpu_monitor();
  if (!mon.available) os << "GPU monitor: none (" << mon.why_not << ")\n";
  for (const auto& m : mon.devices)
    os << "GPU monitor: " << m.name << (m.index >= 0 ? " (CUDA device " + std::to_string(m.index) + ")" : "")
       << ": " << (m.memory_used >> 20) << " of " << (m.memory_total >> 20) << " MiB used, " << m.utilization_pct
       << "% busy, " << m.temperature_c << " C\n";
  const auto& pc = state_->profile().cpu;
  const double peak = pc.fma_gflops_per_thread * c.threads;  // FP32, every thread veda uses
  os << "CPU FP32 FMA peak: " << std::fixed << std::setprecision(0) << peak << " GFLOP/s (" << c.threads << " x "
     << pc.fma_gflops_per_thread << ", " << state_->profile().source << ")\n";
  const auto& b = detail::blas(c, pc.blas_core);
  if (!b.available) {
    os << "BLAS: none (" << b.why_not << "); cpu-blas runs the cpu-tiled kernel\n";
  } else {
    os << "BLAS: " << b.library << ", " << b.core << " kernels (" << b.origin << ")";
    if (pc.sgemm_gflops > 0)
      os << "; sgemm n=1024 " << pc.sgemm_gflops << " GFLOP/s = " << 100 * pc.sgemm_gflops / peak
         << "% of peak, dgemm " << pc.dgemm_gflops << " GFLOP/s = " << 100 * pc.dgemm_gflops / (peak / 2) << "%";
    os << "\n";
    if (!pc.blas_probe.empty()) os << "BLAS kernel sets measured: " << pc.blas_probe << "\n";
  }
  os.unsetf(std::ios::floatfield);
  os << "Config: " << config().to_string() << "\n";
  return os.str();
}

void init(const Config& config) {
  std::lock_guard lock(detail::g_lifecycle);
  if (detail::g_phase == detail::Phase::Running)
    throw Error("veda::init called while the runtime is running; call veda::shutdown() first");
  detail::start_locked(config);
}

void init() { init(Config::builder().build()); }

void synchronize() {
  if (!is_running()) return;  // nothing can be queued
  detail::CallScope scope;
  detail::RuntimeState& st = scope.runtime().state();
  for (std::size_t slot = 0; slot < st.device_count(); ++slot) {
    detail::DeviceApi* dev = st.device_at(slot);
    dev->synchronize(dev->stream());
  }
}

void shutdown() {
  // A user function's thread (the caller's or a worker's): waiting here for
  // the calls in flight would wait for itself.
  if (detail::t_call_depth > 0 || detail::t_settled_depth > 0 || detail::on_cpu_worker())
    throw Error("veda::shutdown called from inside a veda call");
  std::unique_ptr<Runtime> dying;
  {
    std::lock_guard lock(detail::g_lifecycle);
    if (detail::g_phase != detail::Phase::Running) return;
    detail::g_draining.store(detail::g_runtime.get(), std::memory_order_seq_cst);
    detail::g_running.store(nullptr, std::memory_order_seq_cst);
    detail::invalidate_settled_plans();  // calls from now on take the full path, which refuses them
    detail::wait_for_calls();
    detail::g_draining.store(nullptr, std::memory_order_seq_cst);
    detail::wait_for_calls();
    detail::g_phase = detail::Phase::ShutDown;
    dying = std::move(detail::g_runtime);
  }
  dying.reset();  // outside the lock: may join worker threads
}

Runtime& get_runtime() {
  if (Runtime* rt = detail::g_running.load(std::memory_order_acquire)) return *rt;
  if (detail::t_call_depth > 0) return *detail::t_call_runtime;  // kept alive by the call
  if (Runtime* draining = detail::g_draining.load(std::memory_order_seq_cst)) {
    // A worker's chunk of a call in flight keeps it alive; blocking on the
    // lock below would deadlock with shutdown(). Others: shut down.
    if (detail::on_cpu_worker()) return *draining;
    detail::throw_shut_down();
  }
  std::lock_guard lock(detail::g_lifecycle);
  if (detail::g_phase == detail::Phase::ShutDown) detail::throw_shut_down();
  if (detail::g_phase == detail::Phase::NeverStarted) return detail::start_locked(Config::builder().build());
  return *detail::g_runtime;
}

GpuStatus detect_gpu(const Config& config) { return detail::discover_gpu(apply_environment(config)); }
GpuStatus detect_gpu() { return detect_gpu(Config::builder().build()); }

bool is_running() noexcept { return detail::g_running.load(std::memory_order_acquire) != nullptr; }

}  // namespace veda
