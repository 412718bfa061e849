// Config's field checks, shared by Config::Builder::build() (config.cpp) and
// the VEDA_* overrides (environment.cpp): throws ConfigError naming the
// first field out of range.
#pragma once

#include "veda/config.hpp"

namespace veda::detail {
void validate(const Config& c);
}
