// CPU-only builds: no cuBLAS to compare with.
#include "bench/matmul/contenders.hpp"

namespace bench::matmul {
std::unique_ptr<CublasDirect> make_cublas_direct(std::size_t) { return nullptr; }
}  // namespace bench::matmul
