// veda/veda.hpp — everything: configuration, runtime, wrapped calls, arrays,
// pipelines and ops. Include the individual headers to compile less.
#pragma once

#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/config.hpp"
#include "veda/decision.hpp"
#include "veda/device.hpp"
#include "veda/error.hpp"
#include "veda/gpu.hpp"
#include "veda/gpu_kernel.hpp"
#include "veda/matmul.hpp"
#include "veda/memory_stats.hpp"
#include "veda/parallel_for.hpp"
#include "veda/par_iter.hpp"
#include "veda/reduce.hpp"
#include "veda/scan.hpp"
#include "veda/sort.hpp"
#include "veda/sparse.hpp"
#include "veda/telemetry.hpp"
#include "veda/transpose.hpp"
#include "veda/runtime.hpp"
