#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "agentctx/core/result.hpp"

namespace core_result_test {

using agentctx::errc;
using agentctx::result;

namespace {
result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return agentctx::fail(errc::invalid_argument, "not a digit", "input.txt", 7);
  return c - '0';
}
result<int> twice(char c) {
  auto r = parse_digit(c);
  if (!r) return agentctx::unexpected(r.error());
  return *r * 2;
}
result<void> check_positive(int v) {
  if (v <= 0) return agentctx::fail(errc::invalid_value, "not positive");
  return {};
}
result<void> chain(int v) {
  AGENTCTX_TRY(check_positive(v));
  return {};
}
}  // namespace

TEST_CASE("result holds a value or an error with path and offset") {
  auto ok = parse_digit('7');
  REQUIRE(ok.has_value());
  CHECK(*ok == 7);
  CHECK(ok.value() == 7);
  CHECK(ok.value_or(-1) == 7);

  auto bad = parse_digit('x');
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == errc::invalid_argument);
  CHECK(bad.error().path == "input.txt");
  CHECK(bad.error().offset == 7);
  CHECK(bad.error().describe() == "input.txt: at byte 7: not a digit");
  CHECK(bad.value_or(-1) == -1);
  CHECK_THROWS_AS((void)bad.value(), agentctx::bad_result_access);
}

TEST_CASE("errors propagate through unexpected and AGENTCTX_TRY") {
  CHECK(*twice('4') == 8);
  CHECK(twice('z').error().code == errc::invalid_argument);
  CHECK(chain(3).has_value());
  auto r = chain(-1);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == errc::invalid_value);
  CHECK(r.error().describe() == "not positive");
}

TEST_CASE("result works with move-only values") {
  result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  REQUIRE(r);
  std::unique_ptr<int> p = std::move(r).value();
  CHECK(*p == 5);
}

TEST_CASE("error codes have stable names and a data-error class") {
  CHECK(agentctx::to_string(errc::bad_magic) == "bad_magic");
  CHECK(agentctx::is_data_error(errc::truncated));
  CHECK_FALSE(agentctx::is_data_error(errc::io_error));
  auto e = agentctx::make_error(errc::corrupt, "bad").with_path("f.db");
  CHECK(e.describe() == "f.db: bad");
}

}  // namespace core_result_test
