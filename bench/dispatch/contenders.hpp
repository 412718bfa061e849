// Contenders of the dispatch case: the cost of one call on a tiny input.
#pragma once

#include <cstddef>
#include <vector>

namespace bench::dispatch {

struct Data {
  std::vector<float> x, y, out;
  explicit Data(std::size_t n) : x(n, 1.0f), y(n, 2.0f), out(n) {}
};

void plain(Data& d);        // plain.cpp: the loop a user would write
void tbb_static(Data& d);   // tbb.cpp: raw oneTBB parallel_for, static partitioner
void veda_into(Data& d);    // veda.cpp: wrapped call writing into d.out
void veda_return(Data& d);  // veda.cpp: wrapped call returning a new vector
void veda_assign(Data& d);  // veda.cpp: the expression 2 * x + y assigned to an Array (its own copies of d)
void veda_release();        // veda.cpp: frees veda_assign's Arrays (before veda::shutdown)
void plain_return(Data& d); // plain.cpp: the loop into a new vector

}  // namespace bench::dispatch
