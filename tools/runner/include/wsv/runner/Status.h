// Errors for the GPU runner. The runner builds on GPU machines that have CUDA but no LLVM
// (WSV_ANALYZER=OFF), so it carries this small stand-in for llvm::Error / llvm::Expected with the
// same discipline: environment failures are values that callers must look at, never exceptions.
#pragma once

#include <cassert>
#include <string>
#include <utility>

namespace wsv {
namespace runner {

/// A failure with a message, or success. Lowercase message, no final period.
class [[nodiscard]] Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string Message) { return Status(std::move(Message)); }

  explicit operator bool() const { return Failed; } ///< true on failure, like llvm::Error
  const std::string &message() const { return Message; }

private:
  Status() = default;
  explicit Status(std::string M) : Failed(true), Message(std::move(M)) {}
  bool Failed = false;
  std::string Message;
};

/// A value or the Status that explains why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Value(std::move(Value)), Err(Status::ok()) {}
  Expected(Status E) : Err(std::move(E)) { assert(Err && "Expected built from a success"); }

  explicit operator bool() const { return !Err; } ///< true when a value is present
  T &operator*() {
    assert(!Err);
    return Value;
  }
  const T &operator*() const {
    assert(!Err);
    return Value;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  const Status &status() const { return Err; }
  Status takeError() { return std::move(Err); }

private:
  T Value{};
  Status Err;
};

} // namespace runner
} // namespace wsv
