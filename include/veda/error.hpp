// veda/error.hpp — the exceptions veda throws.
//
// Every error veda reports derives from veda::Error (itself a
// std::runtime_error), so `catch (const veda::Error&)` catches all of them.
// Errors are thrown before any work starts and before any output is written.
//
//   ConfigError      a Config field or an environment variable has a bad value
//   InvalidArgument  a call's arguments are wrong (lengths, shapes, indices)
//   DeviceError      a GPU operation failed in a way veda could not recover from
//   OutOfMemory      neither the device nor the CPU could provide the memory
//
// Thread-safety: plain value types.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace veda {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigError : public Error {
 public:
  // `field` is the builder option or environment variable at fault,
  // `value` the rejected value as text, `why` what was expected.
  ConfigError(std::string field, std::string value, const std::string& why)
      : Error("veda config: " + field + " = '" + value + "': " + why),
        field_(std::move(field)), value_(std::move(value)) {}
  const std::string& field() const noexcept { return field_; }
  const std::string& value() const noexcept { return value_; }

 private:
  std::string field_;
  std::string value_;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class DeviceError : public Error {
 public:
  using Error::Error;
};

class OutOfMemory : public Error {
 public:
  using Error::Error;
};

}  // namespace veda
