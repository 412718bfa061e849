#include "backends/cpu/cpu_info.hpp"

#include <tbb/info.h>

#include <cstring>
#include <fstream>
#include <string>

#include "backends/cpu/cpu_isa.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define VEDA_X86 1
#endif

namespace veda::detail {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0' || s.back() == '\n')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::string model_from_proc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"model name", "Model", "cpu model"}) {
      if (line.rfind(key, 0) == 0) {
        auto colon = line.find(':');
        if (colon != std::string::npos) return trim(line.substr(colon + 1));
      }
    }
  }
  return "unknown CPU";
}

#if VEDA_X86
// XCR0 says which register states the OS saves; without it AVX is unusable.
unsigned long long xgetbv0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

}  // namespace

CpuInfo detect_cpu() {
  CpuInfo info;
  info.hardware_threads = tbb::info::default_concurrency();
  info.model = model_from_proc();
#if VEDA_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    info.vendor = vendor;
  }
  char brand[49] = {};
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002 + leaf, &a, &b, &c, &d);
      std::memcpy(brand + leaf * 16 + 0, &a, 4);
      std::memcpy(brand + leaf * 16 + 4, &b, 4);
      std::memcpy(brand + leaf * 16 + 8, &c, 4);
      std::memcpy(brand + leaf * 16 + 12, &d, 4);
    }
    if (auto s = trim(brand); !s.empty()) info.model = s;
  }
  bool osxsave = false;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    info.fma = (c >> 12) & 1;
    osxsave = (c >> 27) & 1;
  }
  const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    info.avx2 = os_avx && ((b >> 5) & 1);
    const bool f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    info.avx512 = os_avx512 && f && dq && bw && vl;
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) info.avx512_bf16 = info.avx512 && ((a >> 5) & 1);
  info.fma = info.fma && os_avx;
#endif
  // What VEDA_MAX_CPU_ISA hides, veda's choices (OpenBLAS's kernel set, the
  // profile's key) do not see either. FMA counts only beside AVX2 here.
  if (const auto cap = isa_cap()) {
    if (*cap < Isa::Avx2) info.avx2 = info.fma = false;
    if (*cap < Isa::Avx512) info.avx512 = info.avx512_bf16 = false;
  }
  return info;
}

}  // namespace veda::detail
