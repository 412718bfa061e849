// veda::mpi's communicator, start-up, error agreement and layout helpers.
#include "veda/mpi/comm.hpp"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string_view>
#include <thread>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support
#endif

#include "veda/runtime.hpp"

namespace veda::mpi {

RemoteError::RemoteError(int rank, const std::string& op, const std::string& what)
    : Error("veda::mpi::" + op + ": rank " + std::to_string(rank) + " failed: " + what), rank_(rank) {}

Comm::Comm() : Comm(MPI_COMM_WORLD) {}
Comm::Comm(MPI_Comm c) : c_(c) {
  detail::check(MPI_Comm_rank(c, &rank_), "MPI_Comm_rank");
  detail::check(MPI_Comm_size(c, &size_), "MPI_Comm_size");
}
void Comm::barrier() const { detail::check(MPI_Barrier(c_), "MPI_Barrier"); }

Environment::Environment(int& argc, char**& argv, std::optional<Config> config) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    detail::check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_mpi_ = true;
  }
  MPI_Comm node;
  detail::check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                "MPI_Comm_split_type");
  int node_rank = 0, world_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size_);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);

  // A rank that mpirun bound to some cores uses those; an unbound one an
  // equal share of the node.
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t mask;
  const int bound = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : hw;
  const int share = bound < hw ? std::max(1, bound) : std::max(1, hw / node_size_);
  Config c = config ? *config : apply_environment(Config::builder().threads(share).build());
  // A node's ranks take its GPUs in turn (unless told which).
  if (!config && !std::getenv("VEDA_DEVICE") && c.gpu()) {
    const GpuStatus g = detect_gpu(c);
    if (!g.devices.empty())
      c = Config::builder(c).device(node_rank % static_cast<int>(g.devices.size())).build();
  }
  c = Config::builder(c).rank(world_rank).build();
  // One rank per node first: it measures (or loads) the machine profile on a
  // quiet node; the others then find it cached. Every rank reaches both
  // barriers, and a rank whose init failed throws after the second.
  std::exception_ptr failed;
  for (int turn = 0; turn < 2; ++turn) {
    if ((node_rank == 0) == (turn == 0)) {
      try {
        veda::init(c);
      } catch (...) {
        failed = std::current_exception();
      }
    }
    MPI_Barrier(node);
  }
  MPI_Comm_free(&node);
  if (failed) {
    if (owns_mpi_) MPI_Finalize();
    std::rethrow_exception(failed);
  }
}

Environment::~Environment() {
  veda::shutdown();
  if (owns_mpi_) MPI_Finalize();
}

bool cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

namespace detail {

bool pass_device_pointers() noexcept {
  if (cuda_aware()) return true;
  const char* on = std::getenv("VEDA_MPI_DEVICE_POINTERS");
  const char* emulated = std::getenv("VEDA_EMULATE_DEVICES");
  return on && std::string_view(on) == "1" && emulated && *emulated;
}

std::string message_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

void agree(const Comm& c, std::exception_ptr local, const char* op) {
  int mine = local ? c.rank() : INT_MAX, first = INT_MAX;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c.native()), "MPI_Allreduce");
  if (first == INT_MAX) return;
  std::string what = c.rank() == first ? message_of(local) : std::string();
  int len = static_cast<int>(std::min<std::size_t>(what.size(), 4096));
  check(MPI_Bcast(&len, 1, MPI_INT, first, c.native()), "MPI_Bcast");
  what.resize(static_cast<std::size_t>(len));
  check(MPI_Bcast(what.data(), len, MPI_CHAR, first, c.native()), "MPI_Bcast");
  if (local) std::rethrow_exception(local);
  throw RemoteError(first, op, what);
}

int to_count(std::size_t n, const char* op) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument(std::string("veda::mpi::") + op + ": " + std::to_string(n) +
                          " elements on one rank exceed MPI's int counts");
  return static_cast<int>(n);
}

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("veda::mpi: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

ElementType::ElementType(std::size_t bytes) {
  check(MPI_Type_contiguous(to_count(bytes, "element type"), MPI_BYTE, &t_), "MPI_Type_contiguous");
  check(MPI_Type_commit(&t_), "MPI_Type_commit");
}
ElementType::~ElementType() { MPI_Type_free(&t_); }

}  // namespace detail
}  // namespace veda::mpi
