// Contenders of the random case: n floats, uniform in [0, 1) or standard
// normal, into a std::vector on the host, each written as its users write
// it: std::mt19937 with the standard distributions (serial), a oneTBB loop
// over the same Philox blocks veda uses (veda's generator by hand, built
// with -march=native), cuRAND's host API into device memory and back (GPU
// builds), and veda::random::uniform_into / normal_into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench::random {

void std_mt19937(std::vector<float>& out, bool normal, std::uint64_t seed);
void tbb_philox(std::vector<float>& out, bool normal, std::uint64_t seed);
void veda_fill(std::vector<float>& out, bool normal, std::uint64_t seed);
std::string veda_tier();
// False where cuRAND is not built or there is no GPU.
bool curand_setup(std::size_t n);
void curand_fill(std::vector<float>& out, bool normal, std::uint64_t seed);
void curand_release();

}  // namespace bench::random
