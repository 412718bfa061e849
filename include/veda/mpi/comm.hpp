// veda/mpi/comm.hpp — veda::mpi's process group, start-up and errors.
//
//   int main(int argc, char** argv) {
//     veda::mpi::Environment env(argc, argv);   // MPI_Init_thread + veda::init
//     veda::mpi::Comm world;                    // MPI_COMM_WORLD
//     auto x = veda::mpi::DistArray<float>(world, 1 << 24);
//     ...
//   }
//
// Contract:
// - Environment initialises MPI (unless the program already did) and then
//   veda, one rank of each node first: it calibrates or loads the cached
//   machine profile while the node is quiet, the node's other ranks then read
//   that profile instead of measuring against each other. Unless the Config
//   or VEDA_THREADS says otherwise, a rank that mpirun bound to cores uses
//   those, and an unbound one an equal share of its node's hardware threads
//   (8 cores, 4 ranks: 2 oneTBB threads each); and the node's ranks take its
//   GPUs in turn (node-local rank modulo the devices CUDA shows the process).
//   Telemetry records carry the rank. The destructor shuts veda down, then
//   MPI (only if it initialised MPI).
// - Every veda::mpi operation is collective over its Comm: all ranks call it,
//   in the same order, with the same arguments (the root, the options).
// - Errors never hang the group: an operation first runs each rank's local
//   part, then the ranks agree whether any failed. If one did, the rank(s)
//   that failed rethrow their own exception and every other rank throws
//   RemoteError naming the lowest failed rank and its message. No result is
//   returned on any rank, and every rank stays usable.
//
// Thread-safety: call veda::mpi operations from the thread that initialised
// MPI (MPI_THREAD_FUNNELED); veda's own worker threads never call MPI.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "veda/config.hpp"
#include "veda/error.hpp"

namespace veda::mpi {

// Another rank's local part of a collective operation failed.
class RemoteError : public Error {
 public:
  RemoteError(int rank, const std::string& op, const std::string& what);
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

// A non-owning handle to an MPI communicator.
class Comm {
 public:
  Comm();  // MPI_COMM_WORLD
  explicit Comm(MPI_Comm c);
  MPI_Comm native() const noexcept { return c_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  void barrier() const;

 private:
  MPI_Comm c_;
  int rank_ = 0;
  int size_ = 1;
};

class Environment {
 public:
  // `config`: what veda::init gets; nullopt: the VEDA_* environment, with
  // the node's threads shared among its ranks.
  Environment(int& argc, char**& argv, std::optional<Config> config = std::nullopt);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  int ranks_on_node() const noexcept { return node_size_; }

 private:
  bool owns_mpi_ = false;
  int node_size_ = 1;
};

// The MPI library says it takes device pointers (Open MPI's
// MPIX_Query_cuda_support); false when it cannot tell.
bool cuda_aware() noexcept;

namespace detail {

// The what() of an exception_ptr, "unknown exception" for a non-std one.
std::string message_of(std::exception_ptr e);

// Collective: see "Errors never hang the group" above. `local` is this
// rank's failure, null when its part succeeded.
void agree(const Comm& c, std::exception_ptr local, const char* op);

// Runs this rank's part `f` of collective `op` and agrees on the outcome:
// returns f's result on every rank, or throws on every rank.
template <class F>
auto guarded(const Comm& c, const char* op, F&& f) {
  using R = decltype(f());
  std::exception_ptr failed;
  if constexpr (std::is_void_v<R>) {
    try {
      f();
    } catch (...) {
      failed = std::current_exception();
    }
    agree(c, failed, op);
  } else {
    std::optional<R> r;
    try {
      r.emplace(f());
    } catch (...) {
      failed = std::current_exception();
    }
    agree(c, failed, op);
    return std::move(*r);
  }
}

// Whether to hand MPI the address of data on a device: cuda_aware(), or in
// tests VEDA_MPI_DEVICE_POINTERS=1 with VEDA_EMULATE_DEVICES set (emulated
// device memory is host memory, which any MPI takes).
bool pass_device_pointers() noexcept;

// MPI's counts are ints: a larger count is InvalidArgument naming `op`.
int to_count(std::size_t n, const char* op);
// An MPI return code other than MPI_SUCCESS is veda::Error naming `call`
// (reached only where the communicator returns errors instead of aborting).
void check(int rc, const char* call);

// A committed contiguous datatype of `bytes` bytes (one element), freed on
// destruction: counts stay element counts however large the element.
class ElementType {
 public:
  explicit ElementType(std::size_t bytes);
  ~ElementType();
  ElementType(const ElementType&) = delete;
  ElementType& operator=(const ElementType&) = delete;
  MPI_Datatype get() const noexcept { return t_; }

 private:
  MPI_Datatype t_;
};

}  // namespace detail
}  // namespace veda::mpi
