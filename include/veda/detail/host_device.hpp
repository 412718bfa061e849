// VEDA_HD: marks what public headers define for host and device code alike
// (__host__ __device__ under nvcc, nothing for host compilers).
#pragma once

#if defined(__CUDACC__)
#define VEDA_HD __host__ __device__
#else
#define VEDA_HD
#endif
