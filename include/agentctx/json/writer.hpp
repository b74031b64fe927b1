// agentctx/json/writer.hpp: a small, fast, streaming JSON writer.
//
//   std::string out;
//   agentctx::json::writer w(out);
//   w.begin_object();
//   w.key("name").value("AGENTS.db");
//   w.key("layers").begin_array().value(1).value(2).end_array();
//   w.end_object();
//   // out == R"({"name":"AGENTS.db","layers":[1,2]})"
//
// The writer appends to a caller-owned std::string (so a buffer can be reused
// across messages) and inserts commas, colons and, with layout::pretty,
// newlines and two-space indentation itself. The output is always valid JSON
// text (RFC 8259) as long as the calls follow the grammar:
//   - strings are escaped: '"' '\\' and \b \f \n \r \t by their short forms,
//     other control characters below 0x20 as \u00xx (lowercase hex); all
//     other bytes, including valid UTF-8, are copied verbatim;
//   - invalid UTF-8 is replaced by U+FFFD, one per maximal ill-formed
//     subsequence (the Unicode / WHATWG convention);
//   - doubles use the shortest digits that read back to the same value, laid
//     out as ECMAScript and canonical JSON lay them out (0.1 -> "0.1",
//     1e6 -> "1000000", 1e-7 -> "1e-7", -0.0 -> "0", 1.0 -> "1"); whole
//     numbers from 2^53 up use exponent form ("1e+21"); NaN and infinities,
//     which JSON cannot express, are written as null;
//   - floats likewise use the shortest digits that read back to the same f32
//     (0.7f -> "0.7"); whole numbers from 2^24 up use exponent form.
//
// Calls that break the grammar (a value in an object without a key, a key
// outside an object, an end_* that does not match, a second top-level value)
// are programming errors: the writer never throws or aborts; it still emits
// the token and records the mistake, which ok() reports. Check complete() in
// tests and debug paths.
//
// The writer keeps a pointer to the string: the string must outlive it and
// must not be modified by others while the writer is in use.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/canonical_form.hpp"

namespace agentctx::json {

/// Whitespace of the output.
enum class layout {
  compact,  ///< no whitespace at all
  pretty,   ///< one member or element per line, two-space indentation
};

namespace detail {

template <class T>
concept character_type = std::same_as<T, char> || std::same_as<T, wchar_t> || std::same_as<T, char8_t> ||
                         std::same_as<T, char16_t> || std::same_as<T, char32_t>;

// Length of the maximal ill-formed subsequence at the start of `text`, which
// does not start with a valid sequence: its longest prefix (at most three
// bytes) that continuation bytes could still complete, else one byte
// (Unicode 15, section 3.9, U+FFFD substitution of maximal subparts). Past
// the second byte UTF-8 asks only for continuation bytes, so padding a prefix
// with 0x80 and validating tells whether it can be completed.
inline std::size_t ill_formed_length(std::string_view text) noexcept {
  for (std::size_t prefix = std::min<std::size_t>(text.size(), 3); prefix >= 2; --prefix) {
    std::array<char, 4> candidate = {'\x80', '\x80', '\x80', '\x80'};
    std::copy_n(text.data(), prefix, candidate.data());
    for (std::size_t length = prefix + 1; length <= candidate.size(); ++length) {
      if (is_valid_utf8(std::string_view(candidate.data(), length))) return prefix;
    }
  }
  return 1;
}

// Index (0..7) of the first byte in `word` (bytes in memory order, loaded
// little-endian) that needs attention: a control character, '"', '\\' or a
// byte >= 0x80 (checked as UTF-8); 8 when there is none. The zero-byte tricks
// can flag a byte after a real hit, never one before it, so the lowest flag
// is exact.
inline unsigned first_special_byte(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
  const std::uint64_t quote = word ^ (ones * '"');
  const std::uint64_t backslash = word ^ (ones * '\\');
  const std::uint64_t flags = (word | ((word - ones * 0x20) & ~word) | ((quote - ones) & ~quote) |
                               ((backslash - ones) & ~backslash)) & high_bits;
  return static_cast<unsigned>(std::countr_zero(flags)) / 8;
}

// Appends `text` as a quoted, escaped JSON string.
inline void append_quoted(std::string& out, std::string_view text) {
  static constexpr char hex_digits[] = "0123456789abcdef";
  const char* s = text.data();
  const std::size_t size = text.size();
  std::size_t first_invalid = find_invalid_utf8(text);
  std::size_t run_start = 0;  // start of the bytes not yet copied
  std::size_t i = 0;
  out.push_back('"');
  while (i < size) {
    while (size - i >= 8) {  // skip plain bytes a word at a time
      const unsigned plain = first_special_byte(load_u64(s + i));
      i += plain;
      if (plain < 8) break;
    }
    if (i == size) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (i < first_invalid) {  // a valid sequence starts here: skip all of it
        i += c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        continue;
      }
      out.append(s + run_start, i - run_start);
      out.append("\xEF\xBF\xBD");
      i += ill_formed_length(text.substr(i));
      run_start = i;
      first_invalid = i + find_invalid_utf8(text.substr(i));
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s + run_start, i - run_start);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default: {
        const char escape[] = {'\\', 'u', '0', '0', hex_digits[c >> 4], hex_digits[c & 0x0F]};
        out.append(escape, sizeof escape);
      }
    }
    run_start = ++i;
  }
  out.append(s + run_start, size - run_start);
  out.push_back('"');
}

}  // namespace detail

/// Streaming JSON writer; see the file comment. Every call returns *this so
/// calls chain: w.key("n").value(1).
class writer {
 public:
  /// Appends to `out` (existing contents are kept). `out` must outlive the writer.
  explicit writer(std::string& out, json::layout style = json::layout::compact) noexcept
      : out_(&out), pretty_(style == json::layout::pretty) {}

  writer& begin_object() { return open('{', true); }
  writer& end_object() { return close('}', true); }
  writer& begin_array() { return open('[', false); }
  writer& end_array() { return close(']', false); }

  /// Writes an object member's name; the next call must write its value.
  writer& key(std::string_view name) {
    if (!in_object() || after_key_) misused_ = true;
    separate();
    detail::append_quoted(*out_, name);
    if (pretty_) {
      out_->append(": ");
    } else {
      out_->push_back(':');
    }
    after_key_ = true;
    return *this;
  }

  writer& value(std::string_view text) {
    before_value();
    detail::append_quoted(*out_, text);
    return *this;
  }
  /// A null pointer is written as null.
  writer& value(const char* text) { return text == nullptr ? value(nullptr) : value(std::string_view(text)); }
  writer& value(bool flag) { return literal(flag ? "true" : "false"); }
  writer& value(std::nullptr_t) { return literal("null"); }
  /// The value when there is one, null otherwise.
  template <class T>
  writer& value(const std::optional<T>& maybe) {
    return maybe ? value(*maybe) : value(nullptr);
  }

  /// Any integer type except bool and the character types (write a char as a
  /// one-character string instead).
  template <std::integral T>
    requires(!std::same_as<T, bool> && !detail::character_type<T>)
  writer& value(T number) {
    static_assert(sizeof(T) <= 8, "integers wider than 64 bits are not supported");
    std::array<char, 24> digits;
    char* end = std::to_chars(digits.data(), digits.data() + digits.size(), number).ptr;  // 24 hold any 64-bit integer
    return literal(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
  }
  template <class T>
    requires detail::character_type<T>
  writer& value(T) = delete;

  /// Shortest round-trip digits laid out as ECMAScript (and canonical JSON)
  /// writes numbers (1000000, 0.000001, 1e-7, -0 as 0); NaN and infinities
  /// become null. Whole numbers of magnitude 2^53 or more are written in
  /// exponent form (1.2345678901234568e+20, not 123456789012345683968) so that
  /// no parser mistakes them for integers it cannot hold (simdjson rejects
  /// integers above 2^64 - 1).
  writer& value(double number) {
    if (!std::isfinite(number)) return value(nullptr);
    std::array<char, 32> digits;
    char* const first = digits.data();
    char* const last = first + digits.size();
    char* end = nullptr;
    if (std::fabs(number) >= 0x1p53 && number == std::trunc(number)) {
      end = std::to_chars(first, last, number, std::chars_format::scientific).ptr;
    } else {
      end = write_es_number(first, number);  // 32 characters hold any double
    }
    return literal(std::string_view(first, static_cast<std::size_t>(end - first)));
  }

  /// The shortest text that reads back to the same f32 (0.7f -> "0.7", not
  /// the "0.699999988079071" of its double value); NaN and infinities become
  /// null. For values stored as f32: confidences, embedding values.
  writer& value(float number) {
    if (!std::isfinite(number)) return value(nullptr);
    std::array<char, 32> digits;
    char* const first = digits.data();
    char* const last = first + digits.size();
    char* end = std::to_chars(first, last, number, std::chars_format::scientific).ptr;  // 32 hold any float
    if (number == 0) {  // +0 and -0 alike, as for doubles
      end = first;
      *end++ = '0';
    } else if (std::fabs(number) < 0x1p24f || number != std::trunc(number)) {
      std::array<char, 32> scientific = digits;
      end = write_es_scientific(first, scientific.data(), scientific.data() + (end - first));
    }
    return literal(std::string_view(first, static_cast<std::size_t>(end - first)));
  }

  /// Splices `json`, which the caller guarantees is one complete, valid JSON
  /// value (it is not checked), where a value is expected. In pretty layout it
  /// is copied as is, without re-indentation.
  writer& raw(std::string_view json) { return literal(json); }

  /// False once a call has broken the JSON grammar (see the file comment).
  bool ok() const noexcept { return !misused_; }

  /// True when exactly one complete top-level value has been written and no
  /// call broke the grammar: the appended text is one valid JSON document.
  bool complete() const noexcept { return !misused_ && stack_.empty() && top_level_written_; }

 private:
  bool in_object() const noexcept { return !stack_.empty() && stack_.back(); }

  // Comma (if this is not the container's first entry) and pretty-layout
  // line break before a key or an array element.
  void separate() {
    if (!first_in_container_) out_->push_back(',');
    first_in_container_ = false;
    if (pretty_) new_line(stack_.size());
  }

  void before_value() {
    if (stack_.empty()) {
      if (top_level_written_) misused_ = true;
      top_level_written_ = true;
    } else if (in_object()) {
      if (!after_key_) misused_ = true;
      after_key_ = false;
    } else {
      separate();
    }
  }

  writer& literal(std::string_view text) {
    before_value();
    out_->append(text);
    return *this;
  }

  writer& open(char bracket, bool is_object) {
    before_value();
    out_->push_back(bracket);
    stack_.push_back(is_object);
    first_in_container_ = true;
    return *this;
  }

  writer& close(char bracket, bool is_object) {
    if (stack_.empty() || stack_.back() != is_object || after_key_) {
      misused_ = true;
      after_key_ = false;
    }
    if (!stack_.empty()) stack_.pop_back();
    if (pretty_ && !first_in_container_) new_line(stack_.size());
    out_->push_back(bracket);
    // The container just closed was an entry of its parent.
    first_in_container_ = false;
    return *this;
  }

  void new_line(std::size_t depth) {
    out_->push_back('\n');
    out_->append(2 * depth, ' ');
  }

  std::string* out_;
  std::vector<bool> stack_;  // one entry per open container: true = object
  bool pretty_ = false;
  bool first_in_container_ = false;
  bool after_key_ = false;
  bool top_level_written_ = false;
  bool misused_ = false;
};

}  // namespace agentctx::json
