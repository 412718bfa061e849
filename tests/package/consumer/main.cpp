// A program using an installed veda through find_package(veda).
#include <veda/veda.hpp>

#include <cstdio>

int main() {
#if defined(__CUDACC__)
  std::puts("compiled by nvcc: yes");
#else
  std::puts("compiled by nvcc: no");
#endif
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  std::printf("%s", veda::get_runtime().describe().c_str());
  veda::shutdown();
  return 0;
}
