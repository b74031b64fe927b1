// Checks on agentctx::result values shared by the test suites: the value or
// a failed test that shows the error, and the code of a result.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"

namespace test_support {

/// The description of `r`'s error, or nothing when it holds a value. The
/// message of a REQUIRE_MESSAGE is built for passing checks too when doctest
/// reports successes (-s), so it must not read an error that is not there.
template <class R>
std::string error_text(const R& r) {
  return r.has_value() ? std::string() : r.error().describe();
}

/// The value of `r`; fails the test with the error's description otherwise.
template <class T>
T require_value(agentctx::result<T> r) {
  REQUIRE_MESSAGE(r.has_value(), error_text(r));
  return std::move(*r);
}

/// Fails the test with the error's description unless `r` succeeded (its
/// value, if any, unused).
template <class T>
void require_ok(const agentctx::result<T>& r) {
  REQUIRE_MESSAGE(r.has_value(), error_text(r));
}

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
