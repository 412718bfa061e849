// The checks behind veda::parallel_for / parallel_reduce (parallel_for.hpp,
// index_space.hpp), made before any work.
#include <string>
#include <string_view>

#include "veda/detail/buffer.hpp"
#include "veda/error.hpp"
#include "veda/index_space.hpp"
#include "veda/parallel_for.hpp"

namespace veda::detail {

void throw_view_index(std::size_t i, std::size_t j, std::size_t k, std::size_t n0, std::size_t n1, std::size_t n2) {
  const bool three = n2 > 1 || k > 0;
  const std::string index = "(" + std::to_string(i) + ", " + std::to_string(j) + (three ? ", " + std::to_string(k) : "") + ")";
  const std::string shape = std::to_string(n0) + " x " + std::to_string(n1) + (three ? " x " + std::to_string(n2) : "");
  throw InvalidArgument("veda::View: index " + index + " is outside the array's " + shape + " (as 1-D: element " +
                        std::to_string((i * n1 + j) * n2 + k) + " of " + std::to_string(n0 * n1 * n2) + ")");
}

void check_index_call(std::string_view name, const std::size_t* lo, const std::size_t* hi, std::size_t dims,
                      const Buffer* const* arrays, std::size_t n_arrays) {
  for (std::size_t d = 0; d < dims; ++d)
    if (lo[d] > hi[d])
      throw InvalidArgument(std::string(name) + ": box dimension " + std::to_string(d) + " has lo " + std::to_string(lo[d]) +
                            " > hi " + std::to_string(hi[d]));
  for (std::size_t a = 0; a < n_arrays; ++a)
    for (std::size_t b = a + 1; b < n_arrays; ++b)
      if (arrays[a] && arrays[a] == arrays[b])
        throw InvalidArgument(std::string(name) + ": declarations " + std::to_string(a + 1) + " and " + std::to_string(b + 1) +
                              " are the same Array; declare it once (read_write when f updates its own elements; "
                              "a stencil reading neighbours needs a second Array)");
}

}  // namespace veda::detail
