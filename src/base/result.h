// Result<T>: a value or an Error, with method names after std::expected.
//
// Success costs one discriminated union; no allocation happens unless an Error is built.
// TRY(expr) evaluates a Result and returns its Error from the enclosing function on failure.
#pragma once

#include <utility>
#include <variant>

#include "base/check.h"
#include "base/error.h"

namespace berth {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    CHECK(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    CHECK(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    CHECK(has_value());
    return std::get<0>(std::move(v_));
  }
  T value_or(T fallback) const& { return has_value() ? std::get<0>(v_) : std::move(fallback); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    CHECK(!has_value());
    return std::get<1>(v_);
  }
  Error&& error() && {
    CHECK(!has_value());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success carries nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const { CHECK(ok_); }
  const Error& error() const& {
    CHECK(!ok_);
    return error_;
  }
  Error&& error() && {
    CHECK(!ok_);
    return std::move(error_);
  }

 private:
  Error error_{Cause::kInternal, ""};
  bool ok_ = true;
};

using Status = Result<void>;

// Drops a failure on purpose. Every discarded Result goes through here instead of a `(void)`
// cast, so that a reader (and grep) finds each place where berth chooses to go on after a
// failure, with the reason it is safe: `IgnoreError(store.AppendEvent(...), "events are
// advisory; the state change that follows is what counts")`.
template <typename T>
inline void IgnoreError(const Result<T>& result, const char* why) {
  (void)result;
  (void)why;
}

}  // namespace berth

// Evaluates `expr` (a Result); on failure returns its Error from the enclosing function.
// As an expression it yields the value: `auto fd = TRY(OpenFile(path));`
#define TRY(expr)                                                                    \
  ({                                                                                 \
    auto&& berth_try_result_ = (expr);                                               \
    if (!berth_try_result_.has_value()) return std::move(berth_try_result_).error(); \
    std::move(berth_try_result_).value();                                            \
  })

// Like TRY, adding context to the error: TRY_CTX(Open(p), "loading policy").
#define TRY_CTX(expr, context)                                                    \
  ({                                                                              \
    auto&& berth_try_result_ = (expr);                                            \
    if (!berth_try_result_.has_value())                                           \
      return std::move(std::move(berth_try_result_).error().AddContext(context)); \
    std::move(berth_try_result_).value();                                         \
  })
