// quickstart: start veda and print what it found.
#include <veda/veda.hpp>

#include <cstdio>

int main() {
  veda::Runtime& rt = veda::get_runtime();
  std::printf("%s", rt.describe().c_str());
  return 0;
}
