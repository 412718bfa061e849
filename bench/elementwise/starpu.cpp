// StarPU as its documentation shows it: vectors registered once, partitioned
// into one block per CPU worker, one task per block, then wait.
#include <starpu.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "bench/common/lanes.hpp"
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise::starpu {
namespace {

void saxpy_cpu(void* buffers[], void*) {
  const auto* x = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  const auto* y = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[1]));
  auto* out = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[2]));
  const unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
  for (unsigned i = 0; i < n; ++i) out[i] = saxpy_op(x[i], y[i]);
}

void expsin_cpu(void* buffers[], void*) {
  const auto* x = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  auto* out = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[1]));
  const unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
  for (unsigned i = 0; i < n; ++i) out[i] = expsin_op(x[i]);
}

void sum_cpu(void* buffers[], void* arg) {
  const auto* x = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  const unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
  float* slot = nullptr;
  starpu_codelet_unpack_args(arg, &slot);
  *slot = bench::sum_lanes<float>(0, n, [x](std::size_t i) { return x[i]; });
}

starpu_codelet saxpy_cl, expsin_cl, sum_cl;

void init_codelet(starpu_codelet& cl, starpu_cpu_func_t f, int nbuffers, const char* name) {
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = f;
  cl.nbuffers = nbuffers;
  for (int i = 0; i < nbuffers; ++i) cl.modes[i] = i + 1 == nbuffers && nbuffers > 1 ? STARPU_W : STARPU_R;
  cl.name = name;
}

// The workload's vectors as StarPU data, each split into `parts` blocks.
struct Registered {
  std::vector<starpu_data_handle_t> handles;
  unsigned parts;
  std::vector<float> partial;
  Registered(Workload& d, unsigned p) : parts(p), partial(p) {
    for (auto* v : {&d.x, &d.y, &d.out}) {
      starpu_data_handle_t h;
      starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v->data()),
                                  static_cast<uint32_t>(v->size()), sizeof(float));
      starpu_data_filter f{};
      f.filter_func = starpu_vector_filter_block;
      f.nchildren = parts;
      starpu_data_partition(h, &f);
      handles.push_back(h);
    }
  }
  ~Registered() {
    for (auto h : handles) {
      starpu_data_unpartition(h, STARPU_MAIN_RAM);
      starpu_data_unregister(h);
    }
  }
  starpu_data_handle_t block(int v, unsigned i) const { return starpu_data_get_sub_data(handles[v], 1, i); }
};

}  // namespace

bool start(std::string& why_not) {
  setenv("STARPU_SILENT", "1", 0);
  if (starpu_init(nullptr) != 0) {
    why_not = "starpu_init failed";
    return false;
  }
  init_codelet(saxpy_cl, saxpy_cpu, 3, "saxpy");
  init_codelet(expsin_cl, expsin_cpu, 2, "expsin");
  init_codelet(sum_cl, sum_cpu, 1, "sum");
  starpu_pause();
  return true;
}

void stop() {
  starpu_resume();  // StarPU shuts down running workers
  starpu_shutdown();
}

void resume() { starpu_resume(); }
void pause() { starpu_pause(); }

Runner make(Work w, Workload& d, unsigned parts) {
  if (parts == 0) parts = std::max(1u, starpu_cpu_worker_get_count());
  auto reg = std::make_shared<Registered>(d, static_cast<unsigned>(std::min<std::size_t>(parts, d.x.size())));
  return [reg, w] {
    for (unsigned i = 0; i < reg->parts; ++i) {
      if (w == Work::Saxpy)
        starpu_task_insert(&saxpy_cl, STARPU_R, reg->block(0, i), STARPU_R, reg->block(1, i), STARPU_W,
                           reg->block(2, i), 0);
      else if (w == Work::ExpSin)
        starpu_task_insert(&expsin_cl, STARPU_R, reg->block(0, i), STARPU_W, reg->block(2, i), 0);
      else {
        float* slot = &reg->partial[i];
        starpu_task_insert(&sum_cl, STARPU_VALUE, &slot, sizeof(slot), STARPU_R, reg->block(0, i), 0);
      }
    }
    starpu_task_wait_for_all();
    if (w == Work::Sum) {
      float s = 0;
      for (float p : reg->partial) s += p;
      volatile float sink = s;
      (void)sink;
    }
  };
}

}  // namespace bench::elementwise::starpu
