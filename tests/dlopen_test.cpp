// Contract: libveda loads with dlopen into a process that did not link it
// (a Python extension module, an application's plugin) and works there, on
// any thread: its thread-locals need no space reserved at the process's
// start. (Initial-exec thread-locals, ~3.6 KiB, made that dlopen fail:
// "cannot allocate memory in static TLS block".) This executable links
// neither libveda nor the plugin.
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <string>
#include <thread>

TEST_CASE("a plugin linked against libveda loads with dlopen and sums through veda, from two threads") {
  void* h = dlopen(VEDA_DLOPEN_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  const char* err = h ? nullptr : dlerror();
  INFO(std::string(err ? err : ""));
  REQUIRE(h != nullptr);
  auto* sum = reinterpret_cast<double (*)(int)>(dlsym(h, "veda_plugin_sum"));
  REQUIRE(reinterpret_cast<void*>(sum) != nullptr);
  for (int n : {0, 1, 1009, 100000}) CHECK(sum(n) == doctest::Approx(0.5 * n * (n + 1.0)));
  double other = 0;
  std::thread([&] { other = sum(4096); }).join();
  CHECK(other == doctest::Approx(0.5 * 4096 * 4097.0));
  // Not closed: oneTBB's workers, started from libveda, outlive the calls.
}
