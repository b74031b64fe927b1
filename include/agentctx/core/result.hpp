// agentctx/core/result.hpp: `result<T>`, the library's value-or-error type.
//
// It follows the vocabulary of C++23 `std::expected<T, agentctx::error>`
// (has_value, value, error, value_or, operator*, operator->), which GCC 12
// does not offer in C++20 mode. A function that can fail returns a result;
// a result constructed from an `unexpected` holds an error.
//
//   result<int> parse(std::string_view s);
//   auto r = parse("42");
//   if (!r) return unexpected(r.error());
//   use(*r);
//
// Calling value() on a result that holds an error is a programming mistake;
// it throws `bad_result_access` (like std::expected). Check has_value() first.
#pragma once

#include <exception>
#include <type_traits>
#include <utility>
#include <variant>

#include "agentctx/core/error.hpp"

namespace agentctx {

/// Thrown only by result::value() on a result holding an error (a caller bug).
class bad_result_access : public std::exception {
 public:
  const char* what() const noexcept override { return "agentctx: value() called on a result holding an error"; }
};

/// Wraps an error to construct the error side of a result.
class unexpected {
 public:
  explicit unexpected(agentctx::error e) : error_(std::move(e)) {}
  const agentctx::error& error() const& noexcept { return error_; }
  agentctx::error&& error() && noexcept { return std::move(error_); }

 private:
  agentctx::error error_;
};

template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, agentctx::error>, "result<error> is ambiguous");

 public:
  using value_type = T;

  result()
    requires std::is_default_constructible_v<T>
      : storage_(std::in_place_index<0>) {}
  template <class U = T>
    requires std::is_constructible_v<T, U&&> && (!std::is_same_v<std::remove_cvref_t<U>, result>) &&
             (!std::is_same_v<std::remove_cvref_t<U>, unexpected>)
  result(U&& value) : storage_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT: implicit by design
  result(unexpected e) : storage_(std::in_place_index<1>, std::move(e).error()) {}  // NOLINT

  bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { check(); return std::get<0>(storage_); }
  const T& value() const& { check(); return std::get<0>(storage_); }
  T&& value() && { check(); return std::get<0>(std::move(storage_)); }

  T& operator*() & noexcept { return *std::get_if<0>(&storage_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&storage_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&storage_)); }
  T* operator->() noexcept { return std::get_if<0>(&storage_); }
  const T* operator->() const noexcept { return std::get_if<0>(&storage_); }

  /// The error; only meaningful when !has_value().
  const agentctx::error& error() const& noexcept { return *std::get_if<1>(&storage_); }
  agentctx::error&& error() && noexcept { return std::move(*std::get_if<1>(&storage_)); }

  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  T value_or(U&& fallback) && {
    return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void check() const {
    if (!has_value()) throw bad_result_access();
  }
  std::variant<T, agentctx::error> storage_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() noexcept = default;
  result(unexpected e) : error_(std::move(e).error()), failed_(true) {}  // NOLINT

  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (failed_) throw bad_result_access();
  }
  const agentctx::error& error() const& noexcept { return error_; }
  agentctx::error&& error() && noexcept { return std::move(error_); }

 private:
  agentctx::error error_;
  bool failed_ = false;
};

/// Shorthand for `unexpected(make_error(...))`.
inline unexpected fail(errc code, std::string message, std::string path = {},
                       std::uint64_t offset = error::no_offset) {
  return unexpected(make_error(code, std::move(message), std::move(path), offset));
}

}  // namespace agentctx

/// Propagates the error of a result-returning expression, else yields nothing.
/// Usage: AGENTCTX_TRY(file.sync());
#define AGENTCTX_TRY(expr)                                              \
  do {                                                                  \
    auto&& agentctx_try_result_ = (expr);                               \
    if (!agentctx_try_result_) return ::agentctx::unexpected(std::move(agentctx_try_result_).error()); \
  } while (0)
