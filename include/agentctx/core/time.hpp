// agentctx/core/time.hpp: Unix-millisecond timestamps and their RFC 3339 text.
//
// agentctx stores instants as unsigned milliseconds since 1970-01-01T00:00:00Z
// (Unix time: every day has 86,400 seconds, leap seconds do not exist) and
// shows them as RFC 3339 UTC text with exactly three fraction digits
// (utc_instant, which Relay's times are read into, is signed and exact: it
// holds any year RFC 3339 can write, before 1970 too):
//
//   format_rfc3339_utc_ms(1765534272123) == "2025-12-12T10:11:12.123Z"
//
// The conversion is pure arithmetic on the proleptic Gregorian calendar
// (Howard Hinnant's days-from-civil algorithms): no locale, time zone
// database, gmtime or global state is involved, so it is thread-safe and
// gives the same text on every platform.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx {

/// The last instant format_rfc3339_utc_ms() can show: 9999-12-31T23:59:59.999Z.
inline constexpr std::uint64_t max_rfc3339_unix_ms = 253'402'300'799'999;

namespace detail {

struct civil_date {
  std::int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

// Days since 1970-01-01 of a proleptic Gregorian date (negative before it).
constexpr std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) noexcept {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146'097 + static_cast<std::int64_t>(day_of_era) - 719'468;
}

// Inverse of days_from_civil.
constexpr civil_date civil_from_days(std::int64_t days) noexcept {
  days += 719'468;
  const std::int64_t era = (days >= 0 ? days : days - 146'096) / 146'097;
  const auto day_of_era = static_cast<unsigned>(days - era * 146'097);
  const unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36'524 - day_of_era / 146'096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const unsigned month_index = (5 * day_of_year + 2) / 153;  // March = 0
  const unsigned day = day_of_year - (153 * month_index + 2) / 5 + 1;
  const unsigned month = month_index < 10 ? month_index + 3 : month_index - 9;
  const std::int64_t year = static_cast<std::int64_t>(year_of_era) + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

constexpr bool is_leap_year(std::int64_t year) noexcept {
  return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

constexpr unsigned days_in_month(std::int64_t year, unsigned month) noexcept {
  constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : days[month - 1];
}

// Writes `value` as exactly `width` decimal digits ending before `end`.
constexpr void write_digits(char* end, std::uint64_t value, int width) noexcept {
  for (int i = 0; i < width; ++i, value /= 10) *--end = static_cast<char>('0' + value % 10);
}

// Cursor over the timestamp text; every read reports failure instead of
// running past the end.
class rfc3339_reader {
 public:
  explicit rfc3339_reader(std::string_view text) noexcept : text_(text) {}

  bool digits(int count, unsigned& out) noexcept {
    if (static_cast<std::size_t>(count) > text_.size() - position_) return false;
    unsigned value = 0;
    for (int i = 0; i < count; ++i) {
      char c = text_[position_ + static_cast<std::size_t>(i)];
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    position_ += static_cast<std::size_t>(count);
    out = value;
    return true;
  }
  bool literal(char expected) noexcept { return literal_of(expected, expected); }
  // Matches either spelling (RFC 3339 allows lowercase 't' and 'z').
  bool literal_of(char first, char second) noexcept {
    if (position_ == text_.size() || (text_[position_] != first && text_[position_] != second)) return false;
    ++position_;
    return true;
  }
  bool at_end() const noexcept { return position_ == text_.size(); }
  // Reads YYYY-MM-DD, a real date; returns why not, or nullptr.
  const char* full_date(unsigned& year, unsigned& month, unsigned& day) noexcept {
    if (!digits(4, year) || !literal('-') || !digits(2, month) || !literal('-') || !digits(2, day)) {
      return "expected a date YYYY-MM-DD";
    }
    if (month < 1 || month > 12) return "month out of range";
    if (day < 1 || day > days_in_month(year, month)) return "day out of range for the month";
    return nullptr;
  }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
};

}  // namespace detail

/// Formats `unix_ms` as "YYYY-MM-DDTHH:MM:SS.mmmZ" (always 24 characters).
/// Instants after 9999-12-31T23:59:59.999Z, which RFC 3339's four-digit year
/// cannot show, are clamped to it: the result is always a valid timestamp,
/// and such values do not occur in practice (they are 8,000 years away).
inline std::string format_rfc3339_utc_ms(std::uint64_t unix_ms) {
  if (unix_ms > max_rfc3339_unix_ms) unix_ms = max_rfc3339_unix_ms;
  constexpr std::uint64_t ms_per_day = 86'400'000;
  const std::uint64_t ms_of_day = unix_ms % ms_per_day;
  const detail::civil_date date = detail::civil_from_days(static_cast<std::int64_t>(unix_ms / ms_per_day));
  std::string out = "0000-00-00T00:00:00.000Z";
  char* p = out.data();
  detail::write_digits(p + 4, static_cast<std::uint64_t>(date.year), 4);
  detail::write_digits(p + 7, date.month, 2);
  detail::write_digits(p + 10, date.day, 2);
  detail::write_digits(p + 13, ms_of_day / 3'600'000, 2);
  detail::write_digits(p + 16, ms_of_day / 60'000 % 60, 2);
  detail::write_digits(p + 19, ms_of_day / 1'000 % 60, 2);
  detail::write_digits(p + 23, ms_of_day % 1'000, 3);
  return out;
}

/// An instant read from RFC 3339 text exactly: Unix milliseconds (negative
/// before 1970: RFC 3339 names years 0000 to 9999), and the
/// digits of the second's fraction past the third without trailing zeros
/// ("12:00:00.0001Z" is {ms, "1"}, "12:00:00.00010Z" the same, ".001Z"
/// {ms + 1, ""}). Instants order as the times they name, however many
/// fraction digits their texts have: by ms, then by `finer` compared as
/// text (with no trailing zeros, a shorter run of digits that is a prefix of
/// a longer one is the earlier time, and otherwise the first differing digit
/// decides).
struct utc_instant {
  std::int64_t ms = 0;
  std::string finer;

  friend bool operator==(const utc_instant&, const utc_instant&) = default;
  friend std::strong_ordering operator<=>(const utc_instant& a, const utc_instant& b) noexcept {
    if (a.ms != b.ms) return a.ms <=> b.ms;
    return a.finer.compare(b.finer) <=> 0;
  }
};

/// Parses an RFC 3339 date-time exactly, as parse_rfc3339_utc_ms() does but
/// keeping the fraction digits past milliseconds (utc_instant::finer), and
/// reading instants before 1970 too, as negative milliseconds (a fraction
/// still counts forward from its second: 1969-12-31T23:59:59.250Z is -750).
/// Every text of the grammar is an instant, from 0000-01-01T00:00:00Z (and
/// an offset's hours before it) to 9999-12-31T23:59:60.999...Z. A leap
/// second is the last millisecond of its minute, with no finer digits.
inline result<utc_instant> parse_rfc3339_utc_instant(std::string_view text);

/// Parses an RFC 3339 date-time (section 5.6) into Unix milliseconds:
///   YYYY-MM-DD "T" hh:mm:ss [ "." 1*DIGIT ] ( "Z" / ("+" / "-") hh:mm )
/// "T" and "Z" may be lowercase. Offsets other than Z / +00:00 / -00:00 are
/// converted to UTC. Fraction digits beyond milliseconds are truncated (the
/// instant is rounded toward the past, never into the next second).
///
/// A leap second (second 60, which RFC 3339 allows in the last minute of a
/// month, in UTC: 2016-12-31T23:59:60Z) is read as the last millisecond of
/// that minute (23:59:59.999Z), since Unix time has no leap seconds: it sorts
/// after every earlier instant of the day and before the next day.
///
/// Returns errc::invalid_argument, with a message quoting the text, when the
/// text does not follow the grammar exactly (no leading or trailing spaces,
/// no space for "T"), when a field is out of range (month 13, 2025-02-30,
/// 2023-02-29, hour 24, minute 60, second 60 outside the last minute of a
/// month, offset hour above 23), or when the instant is before
/// 1970-01-01T00:00:00Z (not representable as unsigned milliseconds;
/// parse_rfc3339_utc_instant reads those). Instants
/// after year 9999 that an offset produces (9999-12-31T23:30:00-01:00) are
/// returned as they are, although format_rfc3339_utc_ms() clamps them.
inline result<std::uint64_t> parse_rfc3339_utc_ms(std::string_view text) {
  auto instant = parse_rfc3339_utc_instant(text);
  if (!instant) return unexpected(std::move(instant).error());
  if (instant->ms < 0) {
    return fail(errc::invalid_argument, "invalid RFC 3339 timestamp " + quote_for_message(text, 64) +
                                            ": the instant is before 1970-01-01T00:00:00Z");
  }
  return static_cast<std::uint64_t>(instant->ms);
}

inline result<utc_instant> parse_rfc3339_utc_instant(std::string_view text) {
  auto bad = [text](std::string_view why) {
    std::string message = "invalid RFC 3339 timestamp " + quote_for_message(text, 64) + ": ";
    message += why;
    return fail(errc::invalid_argument, std::move(message));
  };
  detail::rfc3339_reader in(text);
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (const char* why = in.full_date(year, month, day)) return bad(why);
  if (!in.literal_of('T', 't')) return bad("expected 'T' after the date");
  if (!in.digits(2, hour) || !in.literal(':') || !in.digits(2, minute) || !in.literal(':') || !in.digits(2, second)) {
    return bad("expected a time hh:mm:ss");
  }
  if (hour > 23) return bad("hour out of range");
  if (minute > 59) return bad("minute out of range");
  if (second > 60) return bad("second out of range");
  unsigned millisecond = 0;
  std::string finer;
  if (in.literal('.')) {
    std::size_t fraction_digits = 0;
    for (unsigned digit = 0; in.digits(1, digit); ++fraction_digits) {
      if (fraction_digits < 3) {
        millisecond = millisecond * 10 + digit;
      } else {
        finer += static_cast<char>('0' + digit);
      }
    }
    if (fraction_digits == 0) return bad("expected a digit after '.'");
    for (std::size_t i = fraction_digits; i < 3; ++i) millisecond *= 10;
    while (!finer.empty() && finer.back() == '0') finer.pop_back();
  }
  std::int64_t offset_minutes = 0;
  if (!in.literal_of('Z', 'z')) {
    const bool east = in.literal('+');
    if (!east && !in.literal('-')) return bad("expected 'Z' or an offset +hh:mm / -hh:mm");
    unsigned offset_hour = 0, offset_minute = 0;
    if (!in.digits(2, offset_hour) || !in.literal(':') || !in.digits(2, offset_minute)) {
      return bad("expected an offset +hh:mm / -hh:mm");
    }
    if (offset_hour > 23 || offset_minute > 59) return bad("offset out of range");
    offset_minutes = (east ? 1 : -1) * static_cast<std::int64_t>(offset_hour * 60 + offset_minute);
  }
  if (!in.at_end()) return bad("unexpected text after the timestamp");

  const bool leap_second = second == 60;
  if (leap_second) {
    second = 59;
    millisecond = 999;
    finer.clear();
  }
  const std::int64_t local_seconds = detail::days_from_civil(year, month, day) * 86'400 + hour * 3'600 + minute * 60 + second;
  const std::int64_t utc_seconds = local_seconds - offset_minutes * 60;
  if (leap_second) {
    // RFC 3339 5.7: a leap second ends a month (in UTC).
    const std::int64_t next = utc_seconds + 1;
    const std::int64_t next_day = next >= 0 ? next / 86'400 : -((-next + 86'399) / 86'400);
    if (next % 86'400 != 0 || detail::civil_from_days(next_day).day != 1) {
      return bad("second 60 (a leap second) is only in the last minute of a month, in UTC");
    }
  }
  return utc_instant{utc_seconds * 1'000 + millisecond, std::move(finer)};
}

/// A calendar date, as parse_calendar_date reads it.
using calendar_date = detail::civil_date;

/// Parses an RFC 3339 full-date "YYYY-MM-DD": exactly four, two and two
/// ASCII digits with '-' between, a day that exists in the proleptic
/// Gregorian calendar (2024-02-29 yes; 2023-02-29, 2025-02-30, 2025-13-45
/// no), nothing before or after (no space, no newline). Errors:
/// invalid_argument with a message quoting the text.
inline result<calendar_date> parse_calendar_date(std::string_view text) {
  detail::rfc3339_reader in(text);
  unsigned year = 0, month = 0, day = 0;
  const char* why = in.full_date(year, month, day);
  if (why == nullptr && !in.at_end()) why = "unexpected text after the date";
  if (why != nullptr) {
    return fail(errc::invalid_argument, "invalid date " + quote_for_message(text, 64) + " (YYYY-MM-DD): " + why);
  }
  return calendar_date{year, month, day};
}

/// "YYYY-MM-DD" of the UTC day of `unix_ms`.
inline std::string format_calendar_date(std::uint64_t unix_ms) { return format_rfc3339_utc_ms(unix_ms).substr(0, 10); }

/// The current wall-clock time in Unix milliseconds (0 if the system clock
/// is set before 1970).
inline std::uint64_t now_unix_ms() noexcept {
  const auto since_epoch =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return since_epoch < 0 ? 0 : static_cast<std::uint64_t>(since_epoch);
}

}  // namespace agentctx
