// Contenders of the elementwise case: saxpy, an exp/sin map and a float sum,
// each written the way its peer's users write it, over the same Workload as
// the placement case (whose veda runners are veda's contender here, on auto).
#pragma once

#include <functional>
#include <string>

#include "bench/placement/contenders.hpp"

namespace bench::elementwise {

using placement::Runner;
using placement::Workload;
enum class Work { Saxpy, ExpSin, Sum };

// The shared arithmetic, so every contender computes the same thing.
inline float saxpy_op(float x, float y) { return 2.0f * x + y; }
float expsin_op(float x);  // exp(-x) * sin(4x), defined out of line (one definition for all)

Runner serial(Work w, Workload& d);
Runner tbb_static(Work w, Workload& d);
Runner tbb_auto(Work w, Workload& d);
Runner omp(Work w, Workload& d);
Runner stdpar(Work w, Workload& d);

// StarPU: one task per block of partitioned vectors, as its docs show;
// `parts` 0 means one block per CPU worker. start() once per process; a
// runner registers and partitions d when made.
//
// StarPU's idle CPU workers poll for tasks, which takes the cores from
// anything else running (a serial loop ran 2x slower beside them); paused
// (starpu_pause) they sleep. So start() leaves them paused, and a runner is
// made, run and destroyed only while an Awake is alive: StarPU can then be
// timed in rotation with the other contenders.
namespace starpu {
bool start(std::string& why_not);
void stop();
Runner make(Work w, Workload& d, unsigned parts = 0);
void resume();
void pause();
struct Awake {
  Awake() { resume(); }
  ~Awake() { pause(); }
  Awake(const Awake&) = delete;
  Awake& operator=(const Awake&) = delete;
};
}  // namespace starpu

}  // namespace bench::elementwise
