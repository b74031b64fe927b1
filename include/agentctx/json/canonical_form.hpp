// agentctx/json/canonical_form.hpp: the rules both canonical writers share
// (json/canonical.hpp writes trees, json/detail/canonical_text.hpp writes
// text in one pass): the two forms, how numbers are written, the order of
// member names, and the nesting limit. docs/relay/canonical-json.md has the
// full rules.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/quote.hpp"

namespace agentctx::json {

/// Which canonical form to write; see the file comment.
enum class canonical_form : std::uint8_t {
  relay,  ///< Agentic Protocol Appendix A: names by UTF-8 bytes, null members omitted
  jcs,    ///< RFC 8785: names by UTF-16 code units, null members kept
};

/// Deepest nesting of arrays and objects accepted (simdjson's default).
inline constexpr unsigned max_nesting_depth = 1024;
/// The message of the error (errc::invalid_value) for text or a tree that
/// nests deeper: a caller tells that refusal from the others by it.
inline constexpr const char* too_deep_message = "arrays and objects nest deeper than 1024 levels";
static_assert(max_nesting_depth == 1024, "too_deep_message names the limit");

/// Longest text write_es_number() produces ("-1.2345678901234567e-308" is 24).
inline constexpr std::size_t max_es_number_length = 32;

/// Writes a number given by its shortest round-trip decimal digits as
/// ECMAScript's Number::toString lays them out (RFC 8785 section 3.2.2.3):
/// value = (negative ? -1 : 1) * 0.d1d2...dk * 10^n, where `digits` holds
/// d1..dk (1 <= k <= 17, d1 and dk not '0'). Plain notation for
/// -6 < n <= 21, exponent form otherwise. `out` has room for
/// max_es_number_length characters; returns the end.
inline char* write_es_digits(char* out, bool negative, const char* digits, int k, int n) noexcept {
  if (negative) *out++ = '-';
  const auto put = [&out](const char* from, int count) {
    std::memcpy(out, from, static_cast<std::size_t>(count));
    out += count;
  };
  if (k <= n && n <= 21) {  // an integer: digits then zeros
    put(digits, k);
    for (int i = k; i < n; ++i) *out++ = '0';
  } else if (0 < n && n <= 21) {  // a point inside the digits
    put(digits, n);
    *out++ = '.';
    put(digits + n, k - n);
  } else if (-6 < n && n <= 0) {  // 0.000ddd
    *out++ = '0';
    *out++ = '.';
    for (int i = n; i < 0; ++i) *out++ = '0';
    put(digits, k);
  } else {  // d.ddde+XX
    *out++ = digits[0];
    if (k > 1) {
      *out++ = '.';
      put(digits + 1, k - 1);
    }
    *out++ = 'e';
    *out++ = n - 1 >= 0 ? '+' : '-';
    out = std::to_chars(out, out + 8, n - 1 >= 0 ? n - 1 : 1 - n).ptr;
  }
  return out;
}

/// Writes a number given as the shortest round-trip digits in exponent form
/// ("-d.ddde+XX", what std::to_chars writes with chars_format::scientific,
/// for a double or a float) as ECMAScript lays them out, at `out`, which has
/// room for max_es_number_length characters; returns the end.
inline char* write_es_scientific(char* out, const char* text, const char* end) noexcept {
  // Taken apart into k digits and the decimal exponent n of 0.digits * 10^n.
  const char* p = text;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[20];
  int k = 0;
  digits[k++] = *p++;
  if (*p == '.') {
    for (++p; *p != 'e'; ++p) digits[k++] = *p;
  }
  ++p;  // 'e'
  const bool negative_exponent = *p == '-';
  ++p;  // the exponent's sign
  int exponent = 0;
  for (; p < end; ++p) exponent = exponent * 10 + (*p - '0');
  return write_es_digits(out, negative, digits, k, (negative_exponent ? -exponent : exponent) + 1);
}

/// Writes `number` as ECMAScript's Number::toString writes it (RFC 8785
/// section 3.2.2.3) at `out`, which has room for max_es_number_length
/// characters; returns the end. `number` must be finite.
inline char* write_es_number(char* out, double number) {
  if (number == 0) {  // +0 and -0 alike
    *out++ = '0';
    return out;
  }
  // Whole numbers below 2^53 are their integer digits; that is most numbers
  // in practice, and cheaper than the shortest-digits search.
  if (std::fabs(number) < 0x1p53 && number == std::trunc(number)) {
    return std::to_chars(out, out + max_es_number_length, static_cast<std::int64_t>(number)).ptr;
  }
  char text[32];
  const char* const end = std::to_chars(text, text + sizeof text, number, std::chars_format::scientific).ptr;
  return write_es_scientific(out, text, end);
}

/// Appends `number` as write_es_number() writes it.
inline void append_es_number(std::string& out, double number) {
  char text[max_es_number_length];
  out.append(text, static_cast<std::size_t>(write_es_number(text, number) - text));
}

/// True when member name `a` sorts before `b` in `form`. RFC 8785 compares
/// UTF-16 code units; UTF-8 bytes give the same order except that characters
/// U+E000..U+FFFF (lead bytes 0xEE, 0xEF) come after the supplementary
/// characters (lead bytes 0xF0..0xF4, surrogate pairs in UTF-16).
inline bool name_less(std::string_view a, std::string_view b, canonical_form form) noexcept {
  if (form == canonical_form::relay) return a < b;
  const std::size_t common = std::min(a.size(), b.size());
  const auto [ia, ib] = std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(common), b.begin());
  if (ia == a.begin() + static_cast<std::ptrdiff_t>(common)) return a.size() < b.size();
  const auto rank = [](char c) -> unsigned {
    const auto byte = static_cast<unsigned char>(c);
    return byte == 0xEE || byte == 0xEF ? byte + 0x10u : byte;
  };
  return rank(*ia) < rank(*ib);
}

/// Writes the character `c` (below 0x80) as a canonical string holds it:
/// '"' and '\\' as \" and \\, U+0008 U+000C U+000A U+000D U+0009 as
/// \b \f \n \r \t, other control characters as \u00xx in lowercase hex,
/// everything else as itself. `out` has room for 6 bytes; returns the end.
inline char* write_canonical_ascii(char* out, unsigned char c) noexcept {
  static constexpr char hex_digits[] = "0123456789abcdef";
  if (c >= 0x20 && c != '"' && c != '\\') {
    *out++ = static_cast<char>(c);
    return out;
  }
  *out++ = '\\';
  switch (c) {
    case '"': *out++ = '"'; break;
    case '\\': *out++ = '\\'; break;
    case '\b': *out++ = 'b'; break;
    case '\f': *out++ = 'f'; break;
    case '\n': *out++ = 'n'; break;
    case '\r': *out++ = 'r'; break;
    case '\t': *out++ = 't'; break;
    default:
      *out++ = 'u';
      *out++ = '0';
      *out++ = '0';
      *out++ = hex_digits[c >> 4];
      *out++ = hex_digits[c & 0x0F];
  }
  return out;
}

namespace detail {

/// The message for a name that occurs twice in one object.
inline std::string duplicate_name_message(std::string_view name) {
  return "duplicate member name " + quote_for_message(name, 80);
}

/// A member name's sort key, first 8 bytes: big-endian, zero-padded; in the
/// RFC 8785 form with the lead bytes 0xEE and 0xEF raised to 0xFE and 0xFF
/// (values UTF-8 never uses), so that byte order is UTF-16 order. Most
/// comparisons of two names are settled by their prefixes; equal prefixes
/// fall back to name_less(). `word` holds the name's first min(size, 8)
/// bytes in memory order, loaded little-endian (bytes past the name are
/// ignored).
inline std::uint64_t name_prefix_of_word(std::uint64_t word, std::size_t size, canonical_form form) noexcept {
  std::uint64_t prefix = __builtin_bswap64(word);
  if (size < 8) prefix &= ~(~std::uint64_t{0} >> (8 * size));
  if (form == canonical_form::jcs && (prefix & 0x8080808080808080ULL) != 0) {
    for (int shift = 0; shift < 64; shift += 8) {
      const std::uint64_t byte = (prefix >> shift) & 0xFF;
      if (byte == 0xEE || byte == 0xEF) prefix += std::uint64_t{0x10} << shift;
    }
  }
  return prefix;
}

/// name_prefix_of_word() of a name anywhere in memory.
inline std::uint64_t name_prefix(std::string_view name, canonical_form form) noexcept {
  std::uint64_t word = 0;
  if (name.size() >= 8) {
    word = load_u64(name.data());
  } else {
    unsigned char bytes[8] = {};
    std::memcpy(bytes, name.data(), name.size());
    word = load_u64(bytes);
  }
  return name_prefix_of_word(word, name.size(), form);
}

/// A member of an object being written: its name's sort-key prefix, its
/// name, and where it is (a node of a tree, or a span of written text).
template <class Place>
struct member_entry {
  std::uint64_t prefix;
  std::string_view name;
  Place place;
};

/// The canonical order of members in `form`.
template <class Place>
inline bool member_less(const member_entry<Place>& a, const member_entry<Place>& b, canonical_form form) noexcept {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  return name_less(a.name, b.name, form);
}

}  // namespace detail

}  // namespace agentctx::json
