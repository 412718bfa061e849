// Config's field checks, shared by Config::Builder::build() (config.cpp) and
// the VEDA_* overrides (environment.cpp): throws ConfigError naming the
// first field out of range.
#pragma once

#include "veda/config.hpp"

namespace veda::detail {
void validate(const Config& c);
// A device list: not empty, indices >= 0, none twice (ConfigError naming `option`).
void check_devices(const std::vector<int>& devices, const char* option);
}
