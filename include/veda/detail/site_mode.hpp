// How the including translation unit is compiled, for veda's templates.
//
// VEDA_FN marks a lambda or function callable on the device when the file is
// compiled by nvcc; it is empty for the host compiler. VEDA_GPU_SITE is 1 in
// nvcc-compiled files using a CUDA-enabled libveda: only there can call sites
// instantiate kernels for user functions. Templates whose bodies differ
// between the two modes live in the inline namespace VEDA_TU_NS, so host- and
// nvcc-compiled instantiations never clash (no ODR violation).
#pragma once

#include "veda/build_config.hpp"
#include "veda/detail/dual.hpp"

#if defined(__CUDACC__)
#define VEDA_FN __host__ __device__
#else
#define VEDA_FN
#endif

#if VEDA_HAS_CUDA && defined(__CUDACC__)
#define VEDA_GPU_SITE 1
#define VEDA_TU_NS nvcc_tu
#include "veda/detail/gpu_bridge.hpp"
#include "veda/detail/map_kernels.hpp"
#else
#define VEDA_GPU_SITE 0
#define VEDA_TU_NS host_tu
#endif
