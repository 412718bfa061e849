// veda/error.hpp — the exceptions veda throws.
//
// Every error veda reports derives from veda::Error (itself a
// std::runtime_error), so `catch (const veda::Error&)` catches all of them.
// Errors are thrown before any work starts and before any output is written.
//
//   ConfigError      a Config field or an environment variable has a bad value
//   InvalidArgument  a call's arguments are wrong (lengths, shapes, indices)
//   DeviceError      a GPU operation failed in a way veda could not recover from
//   DeviceFault      (a DeviceError) a launch or copy failed and so did the recovery
//   OutOfMemory      neither the device nor the CPU could provide the memory
//   ReplayMismatch   a VEDA_REPLAY file does not describe the calls this program makes
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

// A device operation (a kernel launch, a copy) failed in a way the runtime
// recovers from: it retries the copy or runs the call on the CPU instead.
// Reaches the caller only when the recovery failed too.
class DeviceFault : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// The program made a call that the replay file (Config::replay, VEDA_REPLAY)
// does not have at this point: another program, other inputs, or a file
// from another version. Names the call's position and both descriptions.
class ReplayMismatch : public Error {
 public:
  using Error::Error;
};

}  // namespace veda
