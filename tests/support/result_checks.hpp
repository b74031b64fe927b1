// Checks on agentctx::result values shared by the test suites: the value or
// a failed test that shows the error, and the code of a result.
#pragma once

#include <doctest/doctest.h>

#include <utility>

#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"

namespace test_support {

/// The value of `r`; fails the test with the error's description otherwise.
template <class T>
T require_value(agentctx::result<T> r) {
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  return std::move(*r);
}

/// Fails the test with the error's description unless `r` succeeded.
inline void require_ok(const agentctx::result<void>& r) { REQUIRE_MESSAGE(r.has_value(), r.error().describe()); }

/// The error of `r`; fails the test if `r` holds a value.
template <class T>
agentctx::error require_error(agentctx::result<T> r) {
  REQUIRE_FALSE(r.has_value());
  return std::move(r).error();
}

/// errc::ok for a value, else the error's code.
template <class T>
agentctx::errc code_of(const agentctx::result<T>& r) {
  return r.has_value() ? agentctx::errc::ok : r.error().code;
}

}  // namespace test_support
