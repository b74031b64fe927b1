#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "agentctx/core/time.hpp"
#include "support/result_checks.hpp"

namespace core_time_test {

using agentctx::format_rfc3339_utc_ms;
using agentctx::max_rfc3339_unix_ms;
using agentctx::parse_rfc3339_utc_ms;
using test_support::require_value;

TEST_CASE("formatting shows UTC with three fraction digits") {
  struct row {
    std::uint64_t unix_ms;
    std::string text;
  };
  const std::vector<row> rows = {
      {0, "1970-01-01T00:00:00.000Z"},
      {1, "1970-01-01T00:00:00.001Z"},
      {86'399'999, "1970-01-01T23:59:59.999Z"},
      {951'782'400'000, "2000-02-29T00:00:00.000Z"},   // leap day of a year divisible by 400
      {1'709'164'800'000, "2024-02-29T00:00:00.000Z"},
      {1'709'251'199'999, "2024-02-29T23:59:59.999Z"},
      {1'765'534'272'123, "2025-12-12T10:11:12.123Z"},
      {4'107'456'000'000, "2100-02-28T00:00:00.000Z"},
      {4'107'542'400'000, "2100-03-01T00:00:00.000Z"},  // one day later: 2100 is not a leap year
      {max_rfc3339_unix_ms, "9999-12-31T23:59:59.999Z"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.unix_ms);
    CHECK(format_rfc3339_utc_ms(r.unix_ms) == r.text);
  }
}

TEST_CASE("formatting clamps instants after year 9999") {
  CHECK(format_rfc3339_utc_ms(max_rfc3339_unix_ms + 1) == "9999-12-31T23:59:59.999Z");
  CHECK(format_rfc3339_utc_ms(std::numeric_limits<std::uint64_t>::max()) == "9999-12-31T23:59:59.999Z");
}

TEST_CASE("formatting agrees with gmtime_r") {
  std::mt19937_64 generator(11);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t unix_ms = generator() % (max_rfc3339_unix_ms + 1);
    const auto seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm civil{};
    REQUIRE(gmtime_r(&seconds, &civil) != nullptr);
    char expected[32];
    REQUIRE(std::strftime(expected, sizeof expected, "%Y-%m-%dT%H:%M:%S", &civil) == 19);
    CAPTURE(unix_ms);
    CHECK(format_rfc3339_utc_ms(unix_ms).substr(0, 19) == expected);
  }
}

TEST_CASE("parsing accepts RFC 3339 timestamps and converts offsets to UTC") {
  struct row {
    const char* text;
    std::uint64_t unix_ms;
  };
  const std::vector<row> rows = {
      {"1970-01-01T00:00:00Z", 0},
      {"1970-01-01T00:00:00.000Z", 0},
      {"1970-01-01T01:00:00+01:00", 0},
      {"2025-12-12T10:11:12.123Z", 1'765'534'272'123},
      {"2025-12-12t10:11:12.123z", 1'765'534'272'123},
      {"2025-12-12T10:11:12.123+00:00", 1'765'534'272'123},
      {"2025-12-12T10:11:12.123-00:00", 1'765'534'272'123},
      {"2025-12-12T11:11:12.123+01:00", 1'765'534'272'123},
      {"2025-12-12T05:41:12.123-04:30", 1'765'534'272'123},
      {"2025-12-13T09:41:12.123+23:30", 1'765'534'272'123},
      {"2025-12-12T10:11:12Z", 1'765'534'272'000},
      {"2025-12-12T10:11:12.1Z", 1'765'534'272'100},
      {"2025-12-12T10:11:12.12Z", 1'765'534'272'120},
      {"2025-12-12T10:11:12.123456789Z", 1'765'534'272'123},  // truncated, not rounded
      {"2025-12-12T10:11:12.999999999Z", 1'765'534'272'999},
      {"2025-12-31T23:30:00-01:00", 1'767'227'400'000},        // crosses into 2026
      {"2000-02-29T12:00:00Z", 951'825'600'000},
      {"2024-02-29T00:00:00Z", 1'709'164'800'000},
      {"1972-06-30T23:59:59Z", 78'796'799'000},
      {"2025-12-12T10:11:12.1234567891234Z", 1'765'534'272'123},  // any number of fraction digits
      {"2016-12-31T23:59:60Z", 1'483'228'799'999},                // a leap second: the minute's last ms
      {"2016-12-31T23:59:60.5Z", 1'483'228'799'999},
      {"2017-01-01T00:59:60+01:00", 1'483'228'799'999},           // the same leap second, an hour east
      {"2015-06-30T23:59:60Z", 1'435'708'799'999},
      {"2024-02-29T23:59:60Z", 1'709'251'199'999},                // any month's end
      {"9999-12-31T23:59:59.999Z", max_rfc3339_unix_ms},
      {"9999-12-31T23:59:59.999-01:00", max_rfc3339_unix_ms + 3'600'000},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    auto parsed = parse_rfc3339_utc_ms(r.text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == r.unix_ms);
  }
}

TEST_CASE("parsing rejects malformed text and impossible dates") {
  const std::vector<const char*> rows = {
      "",
      "2025-02-30T00:00:00Z",            // February has 28 days in 2025
      "2023-02-29T00:00:00Z",            // 2023 is not a leap year
      "1900-02-29T00:00:00Z",            // divisible by 100, not by 400
      "2100-02-29T00:00:00Z",
      "2025-04-31T00:00:00Z",
      "2025-13-01T00:00:00Z",
      "2025-00-10T00:00:00Z",
      "2025-01-00T00:00:00Z",
      "2025-01-32T00:00:00Z",
      "2025-01-01T24:00:00Z",            // hour 24
      "2025-01-01T23:60:00Z",
      "2025-01-01T23:59:60Z",            // second 60 outside a month's last minute
      "2025-01-01T23:58:60Z",
      "2016-12-31T23:59:60+01:00",       // 22:59:60 UTC
      "2016-12-31T23:59:61Z",
      "2025-01-01T00:00:00",             // no offset
      "2025-01-01 00:00:00Z",            // space instead of T
      "2025-01-01T00:00Z",               // no seconds
      "2025-01-01T00:00:00.Z",           // empty fraction
      "2025-01-01T00:00:00,5Z",
      "2025-01-01T00:00:00+01:60",
      "2025-01-01T00:00:00+24:00",
      "2025-01-01T00:00:00+0100",
      "2025-01-01T00:00:00+01",
      "2025-01-01T00:00:00Z ",
      " 2025-01-01T00:00:00Z",
      "2025-01-01T00:00:00ZZ",
      "25-01-01T00:00:00Z",
      "2025-1-01T00:00:00Z",
      "+2025-01-01T00:00:00Z",
      "2025-01-01T0a:00:00Z",
      "1969-12-31T23:59:59.999Z",        // before the Unix epoch
      "1970-01-01T00:30:00+01:00",
      "0000-01-01T00:00:00Z",
  };
  for (const char* text : rows) {
    const std::string shown(text);
    CAPTURE(shown);
    auto parsed = parse_rfc3339_utc_ms(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == agentctx::errc::invalid_argument);
    CHECK(parsed.error().message.find("invalid RFC 3339 timestamp") == 0);
  }
}

TEST_CASE("instants keep the fraction past milliseconds and order as the times they name") {
  const auto at = [](std::string_view text) { return require_value(agentctx::parse_rfc3339_utc_instant(text)); };
  const auto base = static_cast<std::int64_t>(require_value(agentctx::parse_rfc3339_utc_ms("2026-01-01T00:00:00Z")));
  CHECK(at("2026-01-01T00:00:00Z") == agentctx::utc_instant{base, ""});
  CHECK(at("2026-01-01T00:00:00.0001Z") == agentctx::utc_instant{base, "1"});
  CHECK(at("2026-01-01T00:00:00.00010Z") == at("2026-01-01T00:00:00.0001Z"));  // trailing zeros say nothing
  CHECK(at("2026-01-01T00:00:00.000000Z") == at("2026-01-01T00:00:00Z"));
  CHECK(at("2026-01-01T00:00:00.123456789Z") == agentctx::utc_instant{base + 123, "456789"});
  CHECK(at("2026-01-01T01:00:00.0005+01:00") == agentctx::utc_instant{base, "5"});
  // A leap second is the last millisecond of its minute, however it is written.
  CHECK(at("2016-12-31T23:59:60.5Z") == at("2016-12-31T23:59:59.999Z"));
  // In increasing order, each pair compared both ways and with itself.
  const char* increasing[] = {"2026-01-01T00:00:00Z",          "2026-01-01T00:00:00.00000001Z",
                              "2026-01-01T00:00:00.0000001Z",  "2026-01-01T00:00:00.00001Z",
                              "2026-01-01T00:00:00.0001Z",     "2026-01-01T00:00:00.00015Z",
                              "2026-01-01T00:00:00.0009Z",     "2026-01-01T00:00:00.00099999999999Z",
                              "2026-01-01T00:00:00.001Z",      "2026-01-01T00:00:00.0010000000001Z",
                              "2026-01-01T00:00:00.5Z",        "2026-01-01T00:00:01Z"};
  for (std::size_t i = 0; i < std::size(increasing); ++i) {
    CAPTURE(increasing[i]);
    CHECK(at(increasing[i]) == at(increasing[i]));
    for (std::size_t j = i + 1; j < std::size(increasing); ++j) {
      CAPTURE(increasing[j]);
      CHECK(at(increasing[i]) < at(increasing[j]));
      CHECK(at(increasing[j]) > at(increasing[i]));
    }
  }
  // The millisecond reading is the instant's, truncated as before.
  CHECK(static_cast<std::int64_t>(require_value(agentctx::parse_rfc3339_utc_ms("2026-01-01T00:00:00.0009Z"))) == base);
  CHECK_FALSE(agentctx::parse_rfc3339_utc_instant("2026-01-01T00:00:00.Z").has_value());
  // parse_rfc3339_utc_ms refuses instants before 1970; the exact reading
  // counts them as negative milliseconds, the fraction forward from its second.
  CHECK(at("1969-12-31T23:59:59.9999Z") == agentctx::utc_instant{-1, "9"});
  CHECK(at("1969-12-31T23:59:59.250Z") == agentctx::utc_instant{-750, ""});
  CHECK(at("1970-01-01T00:30:00+01:00") == agentctx::utc_instant{-1'800'000, ""});
  CHECK(at("1969-07-20T20:17:40Z").ms == -14'182'940'000);
  CHECK(at("0000-01-01T00:00:00Z").ms == -62'167'219'200'000);
  CHECK(at("0000-01-01T00:00:00+23:59").ms == -62'167'219'200'000 - (23 * 60 + 59) * 60'000);
  CHECK(at("9999-12-31T23:59:59.999Z").ms == static_cast<std::int64_t>(agentctx::max_rfc3339_unix_ms));
  CHECK(at("1969-12-31T23:59:60Z") == at("1969-12-31T23:59:59.999Z"));  // the last minute of a month
  CHECK_FALSE(agentctx::parse_rfc3339_utc_instant("1969-12-30T23:59:60Z").has_value());
  const char* across[] = {"0000-01-01T00:00:00+01:00", "0000-01-01T00:00:00Z", "0001-03-01T00:00:00Z",
                          "1900-02-28T23:59:59.9999Z", "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.0000001Z",
                          "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.0000001Z"};
  for (std::size_t i = 0; i + 1 < std::size(across); ++i) {
    CAPTURE(across[i]);
    CHECK(at(across[i]) < at(across[i + 1]));
  }
  // Round trip through the calendar, over every year of RFC 3339.
  std::mt19937_64 generator(11);
  const std::int64_t first = at("0000-01-01T00:00:00Z").ms;
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t ms = first + static_cast<std::int64_t>(generator() % static_cast<std::uint64_t>(
                                                                  static_cast<std::int64_t>(agentctx::max_rfc3339_unix_ms) - first + 1));
    const std::int64_t day = ms >= 0 ? ms / 86'400'000 : -((-ms + 86'399'999) / 86'400'000);
    const std::int64_t of_day = ms - day * 86'400'000;
    const auto date = agentctx::detail::civil_from_days(day);
    char text[96];
    std::snprintf(text, sizeof text, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(date.year),
                  date.month, date.day, static_cast<long long>(of_day / 3'600'000),
                  static_cast<long long>(of_day / 60'000 % 60), static_cast<long long>(of_day / 1'000 % 60),
                  static_cast<long long>(of_day % 1'000));
    CAPTURE(text);
    CHECK(at(text) == agentctx::utc_instant{ms, ""});
  }
}

TEST_CASE("format and parse round-trip") {
  std::mt19937_64 generator(5);
  for (int i = 0; i < 20000; ++i) {
    // Half over the whole range, half near today where real data lives.
    const std::uint64_t unix_ms = i % 2 == 0 ? generator() % (max_rfc3339_unix_ms + 1)
                                             : 1'700'000'000'000 + generator() % 100'000'000'000;
    const std::string text = format_rfc3339_utc_ms(unix_ms);
    CAPTURE(text);
    auto parsed = parse_rfc3339_utc_ms(text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == unix_ms);
  }
}

TEST_CASE("now_unix_ms is a plausible current time") {
  const std::uint64_t now = agentctx::now_unix_ms();
  CHECK(now > *parse_rfc3339_utc_ms("2025-01-01T00:00:00Z"));
  CHECK(now < max_rfc3339_unix_ms);
}

TEST_CASE("calendar dates: YYYY-MM-DD exactly, and only days that exist") {
  struct date_case {
    std::string text;
    bool ok;
  };
  const std::vector<date_case> cases = {
      {"2025-01-05", true},   {"2024-02-29", true},   {"2000-02-29", true},     {"1970-01-01", true},
      {"0001-01-01", true},   {"9999-12-31", true},   {"2025-13-45", false},    {"2025-02-30", false},
      {"2023-02-29", false},  {"1900-02-29", false},  {"2025-00-10", false},    {"2025-01-00", false},
      {"2025-1-5", false},    {"20250105", false},    {"2025-01-05\n", false},  {"2025-01-05 ", false},
      {" 2025-01-05", false}, {"", false},            {"2025-01-05T00:00:00Z", false},
      {"2025/01/05", false},  {"\xd9\xa2\xd9\xa0\xd9\xa2\xd9\xa5-01-05", false},  // Arabic-Indic digits
      {"２０２５-01-05", false},                                                      // fullwidth digits
      {std::string("2025-01-05\0", 11), false},
  };
  for (const date_case& c : cases) {
    CAPTURE(c.text);
    auto parsed = agentctx::parse_calendar_date(c.text);
    CHECK(parsed.has_value() == c.ok);
    if (!parsed) {
      CHECK(parsed.error().code == agentctx::errc::invalid_argument);
      CHECK(parsed.error().message.find('\n') == std::string::npos);
    }
  }
  auto leap = agentctx::parse_calendar_date("2024-02-29");
  REQUIRE(leap.has_value());
  CHECK(leap->year == 2024);
  CHECK(leap->month == 2);
  CHECK(leap->day == 29);
  CHECK(agentctx::format_calendar_date(0) == "1970-01-01");
  CHECK(agentctx::format_calendar_date(1'709'164'800'000) == "2024-02-29");
}

}  // namespace core_time_test
