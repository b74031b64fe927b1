// agentctx/json/canonical.hpp: canonical JSON text, the bytes a content hash
// is computed over, and strict parsing into json::value.
//
// Two canonical forms (docs/relay/canonical-json.md has the full rules):
//
//   canonical_form::relay  the Agentic Protocol's Appendix A: object members
//                          sorted by the UTF-8 bytes of their names, members
//                          whose value is null left out (nulls inside arrays
//                          are kept), no whitespace;
//   canonical_form::jcs    RFC 8785 (JSON Canonicalization Scheme): members
//                          sorted by the UTF-16 code units of their names,
//                          null members kept.
//
// Both write strings with minimal escapes (\" \\ \b \f \n \r \t, other
// control characters as \u00xx in lowercase hex, every other character as
// its UTF-8 bytes) and numbers as ECMAScript's Number::toString does (the
// shortest digits that read back to the same double; exponent form exactly
// when the value is >= 1e21 or < 1e-6; -0 as 0). Both refuse what RFC 8785
// refuses: duplicate member names (simdjson itself accepts them), lone
// surrogates (\ud800 without its pair), numbers beyond the double range
// (1e400), text that is not UTF-8, and NaN or infinities in a json::value.
// Integers too large for 64 bits (18446744073709551616) are read as the
// nearest double, as JavaScript's JSON.parse reads them.
//
//   json::canonicalizer c;                 // reuse: it keeps its buffers
//   auto text = c.canonicalize(R"({"b":1,"a":[1.0,null],"c":null})");
//   // *text == R"({"a":[1,null],"b":1})"
//
// Errors are values (errc::invalid_value, invalid_utf8) with a one-line
// message naming the problem ("duplicate member name \"a\"").
#pragma once

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::json {

/// Which canonical form to write; see the file comment.
enum class canonical_form : std::uint8_t {
  relay,  ///< Agentic Protocol Appendix A: names by UTF-8 bytes, null members omitted
  jcs,    ///< RFC 8785: names by UTF-16 code units, null members kept
};

/// Deepest nesting of arrays and objects accepted (simdjson's default).
inline constexpr unsigned max_nesting_depth = 1024;

/// Longest text write_es_number() produces ("-1.2345678901234567e-308" is 24).
inline constexpr std::size_t max_es_number_length = 32;

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
  // The shortest round-trip digits in exponent form, "-d.ddde+XX", rearranged
  // per Number::toString with k digits and decimal exponent n (value =
  // 0.digits * 10^n).
  char text[32];
  const char* const end = std::to_chars(text, text + sizeof text, number, std::chars_format::scientific).ptr;
  const char* p = text;
  if (*p == '-') {
    *out++ = '-';
    ++p;
  }
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
  const int n = (negative_exponent ? -exponent : exponent) + 1;
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
    out = std::to_chars(out, out + 8, std::abs(n - 1)).ptr;
  }
  return out;
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

namespace detail {

inline constexpr const char* too_deep_message = "arrays and objects nest deeper than 1024 levels";
static_assert(max_nesting_depth == 1024, "too_deep_message names the limit");

// How the canonical writer reads a node: a simdjson DOM element (already
// validated by simdjson) or a json::value (checked as it is written).
inline value::kind kind_of(simdjson::dom::element node) noexcept {
  switch (node.type()) {
    case simdjson::dom::element_type::ARRAY: return value::kind::array;
    case simdjson::dom::element_type::OBJECT: return value::kind::object;
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return value::kind::number;
    case simdjson::dom::element_type::STRING: return value::kind::string;
    case simdjson::dom::element_type::BOOL: return value::kind::boolean;
    case simdjson::dom::element_type::NULL_VALUE: return value::kind::null;
  }
  return value::kind::null;
}
inline value::kind kind_of(const value* node) noexcept { return node->type(); }

inline bool bool_of(simdjson::dom::element node) noexcept { return node.get_bool().value_unsafe(); }
inline bool bool_of(const value* node) noexcept { return node->as_bool(); }

inline std::string_view string_of(simdjson::dom::element node) noexcept { return node.get_string().value_unsafe(); }
inline std::string_view string_of(const value* node) noexcept { return node->as_string(); }

inline double number_of(simdjson::dom::element node) noexcept {
  switch (node.type()) {
    case simdjson::dom::element_type::INT64: return static_cast<double>(node.get_int64().value_unsafe());
    case simdjson::dom::element_type::UINT64: return static_cast<double>(node.get_uint64().value_unsafe());
    default: return node.get_double().value_unsafe();
  }
}
inline double number_of(const value* node) noexcept { return node->as_number(); }

template <class F>
void for_each_element(simdjson::dom::element node, F&& f) {
  simdjson::dom::array items;
  if (node.get_array().get(items) != simdjson::SUCCESS) return;
  for (simdjson::dom::element item : items) f(item);
}
template <class F>
void for_each_element(const value* node, F&& f) {
  for (const value& item : node->as_array()) f(&item);
}
template <class F>
void for_each_member(simdjson::dom::element node, F&& f) {
  simdjson::dom::object members;
  if (node.get_object().get(members) != simdjson::SUCCESS) return;
  for (simdjson::dom::key_value_pair member : members) f(member.key, member.value);
}
template <class F>
void for_each_member(const value* node, F&& f) {
  for (const value::member& member : node->as_object()) f(std::string_view(member.first), &member.second);
}

// Index (0..7) of the first byte of `word` (bytes in memory order, loaded
// little-endian) that a JSON string must escape: '"', '\\' or a control
// character below 0x20; 8 when there is none. The zero-byte tricks can flag
// a byte after a real hit, never one before it, so the lowest flag is exact.
inline unsigned first_byte_to_escape(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
  const std::uint64_t quote = word ^ (ones * '"');
  const std::uint64_t backslash = word ^ (ones * '\\');
  const std::uint64_t flags =
      (((word - ones * 0x20) & ~word) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & high_bits;
  return static_cast<unsigned>(std::countr_zero(flags)) / 8;
}

// Room write_escaped() needs for `size` bytes of text: every byte may become
// \u00xx, plus the quotes and 16 bytes of slack for block-sized copies.
constexpr std::size_t escaped_room(std::size_t size) noexcept { return 6 * size + 2 + 16; }

// Writes `text` (valid UTF-8) quoted, with the minimal escapes, at `out`,
// which has escaped_room(text.size()) bytes; returns the end. Plain bytes are
// copied eight at a time.
inline char* write_escaped(char* out, std::string_view text) noexcept {
  static constexpr char hex_digits[] = "0123456789abcdef";
  const char* s = text.data();
  const std::size_t size = text.size();
  std::size_t i = 0;
  *out++ = '"';
  while (i < size) {
#if defined(__SSE2__)
    // Sixteen bytes at a time: flag '"', '\\' and bytes below 0x20.
    if (size - i >= 16) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chunk);
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\'))),
                       _mm_cmpeq_epi8(_mm_min_epu8(chunk, _mm_set1_epi8(0x1F)), chunk));
      const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      const unsigned plain = mask == 0 ? 16u : static_cast<unsigned>(std::countr_zero(mask));
      out += plain;
      i += plain;
      if (plain == 16) continue;
    } else
#endif
    if (size - i >= 8) {
      const std::uint64_t word = load_u64(s + i);
      std::memcpy(out, s + i, 8);
      const unsigned plain = first_byte_to_escape(word);
      out += plain;
      i += plain;
      if (plain == 8) continue;
    }
    const auto c = static_cast<unsigned char>(s[i++]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      *out++ = static_cast<char>(c);
      continue;
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
  }
  *out++ = '"';
  return out;
}

// A growable output buffer written through a cursor: a std::string kept at
// its full size between uses (so reuse never zero-fills), `used` bytes valid.
class output_buffer {
 public:
  explicit output_buffer(std::string& storage) : storage_(storage) {
    if (storage_.size() < 4096) storage_.resize(4096);
    cursor_ = storage_.data();
    end_ = cursor_ + storage_.size();
  }
  /// Makes room for `n` more bytes; returns the cursor.
  char* room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - cursor_) < n) grow(n);
    return cursor_;
  }
  void advance_to(char* position) noexcept { cursor_ = position; }
  void put(char c) {
    *room(1) = c;
    ++cursor_;
  }
  void put(std::string_view text) {
    std::memcpy(room(text.size()), text.data(), text.size());
    cursor_ += text.size();
  }
  std::size_t used() const noexcept { return static_cast<std::size_t>(cursor_ - storage_.data()); }

 private:
  void grow(std::size_t n) {
    const std::size_t at = used();
    storage_.resize(std::max(storage_.size() * 2, at + n));
    cursor_ = storage_.data() + at;
    end_ = storage_.data() + storage_.size();
  }
  std::string& storage_;
  char* cursor_;
  char* end_;
};

// A member of an object being written, with its sort key's first 8 bytes
// (big-endian, zero-padded; in RFC 8785 form with the lead bytes 0xEE and
// 0xEF raised to 0xFE and 0xFF, values UTF-8 never uses, so that byte order
// is UTF-16 order) to settle most comparisons without memcmp.
template <class Node>
struct member_entry {
  std::uint64_t prefix;
  std::string_view name;
  Node value;
};

inline std::uint64_t name_prefix(std::string_view name, canonical_form form) noexcept {
  std::uint64_t prefix = 0;
  const std::size_t n = std::min<std::size_t>(name.size(), 8);
  for (std::size_t i = 0; i < n; ++i) {
    auto byte = static_cast<unsigned char>(name[i]);
    if (form == canonical_form::jcs && (byte == 0xEE || byte == 0xEF)) byte = static_cast<unsigned char>(byte + 0x10);
    prefix |= std::uint64_t{byte} << (56 - 8 * i);
  }
  return prefix;
}

// Writes one node canonically. `scratch` holds the members of the objects
// being written, innermost last, so one buffer serves every depth. write()
// returns false on the first problem, which failure() then describes (a bool
// rather than a result per node keeps the walk cheap).
template <class Node>
class canonical_writer {
 public:
  static constexpr bool checks_text = std::is_same_v<Node, const value*>;

  canonical_writer(output_buffer& out, canonical_form form, std::vector<member_entry<Node>>& scratch)
      : out_(out), form_(form), scratch_(scratch) {}

  bool write(Node node, unsigned depth) {
    switch (kind_of(node)) {
      case value::kind::null: out_.put("null"); return true;
      case value::kind::boolean: out_.put(bool_of(node) ? std::string_view("true") : std::string_view("false")); return true;
      case value::kind::number: {
        const double number = number_of(node);
        if (!std::isfinite(number)) return fail(errc::invalid_value, "a number is NaN or infinite, which JSON cannot express");
        out_.advance_to(write_es_number(out_.room(max_es_number_length), number));
        return true;
      }
      case value::kind::string: return write_string(string_of(node));
      case value::kind::array: {
        if (depth >= max_nesting_depth) return too_deep();
        out_.put('[');
        bool first = true;
        bool ok = true;
        for_each_element(node, [&](Node item) {
          if (!ok) return;
          if (!first) out_.put(',');
          first = false;
          ok = write(item, depth + 1);
        });
        if (!ok) return false;
        out_.put(']');
        return true;
      }
      case value::kind::object: return write_object(node, depth);
    }
    return true;
  }

  /// The problem that made write() return false.
  error& failure() noexcept { return failure_; }

 private:
  bool fail(errc code, std::string message) {
    failure_ = make_error(code, std::move(message));
    return false;
  }

  bool write_string(std::string_view text) {
    if constexpr (checks_text) {
      if (!is_valid_utf8(text)) return fail(errc::invalid_utf8, "a string is not valid UTF-8");
    }
    out_.advance_to(write_escaped(out_.room(escaped_room(text.size())), text));
    return true;
  }

  bool write_object(Node node, unsigned depth) {
    if (depth >= max_nesting_depth) return too_deep();
    const std::size_t begin = scratch_.size();
    const canonical_form form = form_;
    for_each_member(node, [&](std::string_view name, Node child) {
      scratch_.push_back({name_prefix(name, form), name, child});
    });
    const auto first = scratch_.begin() + static_cast<std::ptrdiff_t>(begin);
    std::sort(first, scratch_.end(), [form](const member_entry<Node>& a, const member_entry<Node>& b) {
      if (a.prefix != b.prefix) return a.prefix < b.prefix;
      return name_less(a.name, b.name, form);
    });
    for (auto it = first; it != scratch_.end() && it + 1 != scratch_.end(); ++it) {
      if (it->name == (it + 1)->name) {
        std::string message = "duplicate member name " + quote_for_message(it->name, 80);
        scratch_.resize(begin);
        return fail(errc::invalid_value, std::move(message));
      }
    }
    out_.put('{');
    bool ok = true;
    bool first_written = true;
    for (std::size_t i = begin; ok && i < scratch_.size(); ++i) {
      const std::string_view name = scratch_[i].name;  // copied: the recursion may grow scratch_
      const Node child = scratch_[i].value;
      // Appendix A leaves null members out (after the duplicate check: a
      // name twice is an error even when both values are null).
      if (form_ == canonical_form::relay && kind_of(child) == value::kind::null) continue;
      if (!first_written) out_.put(',');
      first_written = false;
      ok = write_string(name);
      if (ok) {
        out_.put(':');
        ok = write(child, depth + 1);
      }
    }
    scratch_.resize(begin);
    if (ok) out_.put('}');
    return ok;
  }

  bool too_deep() {
    return fail(errc::invalid_value, too_deep_message);
  }

  output_buffer& out_;
  canonical_form form_;
  std::vector<member_entry<Node>>& scratch_;
  error failure_;
};

// A copy of `text` in which every integer of 19 digits or more (outside
// strings) is followed by ".0", so that simdjson, which refuses integers
// beyond 64 bits, reads it as the nearest double as JSON.parse does.
inline std::string widen_long_integers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {  // copy the string, escapes included
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      // The whole number: integer digits, then a fraction and an exponent
      // if present; only a plain integer is widened.
      const auto digits_from = [&](std::size_t j) {
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
        return j;
      };
      const std::size_t integer_start = i + (c == '-' ? 1 : 0);
      std::size_t j = digits_from(integer_start);
      const std::size_t integer_digits = j - integer_start;
      bool plain_integer = true;
      if (j < text.size() && text[j] == '.') {
        plain_integer = false;
        j = digits_from(j + 1);
      }
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        plain_integer = false;
        ++j;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        j = digits_from(j);
      }
      out.append(text.substr(i, j - i));
      if (plain_integer && integer_digits >= 19) out.append(".0");
      i = std::max(j, i + 1);
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

inline error parse_failure(simdjson::error_code code) {
  switch (code) {
    case simdjson::UTF8_ERROR: return make_error(errc::invalid_utf8, "the text is not valid UTF-8");
    case simdjson::STRING_ERROR:
      return make_error(errc::invalid_value, "a string has a bad escape or a lone surrogate (\\ud800 without its pair)");
    case simdjson::NUMBER_ERROR:
      return make_error(errc::invalid_value, "a number is malformed or beyond the range of a double");
    case simdjson::DEPTH_ERROR:
      return make_error(errc::invalid_value, too_deep_message);
    case simdjson::EMPTY: return make_error(errc::invalid_value, "not JSON: the text is empty");
    default: return make_error(errc::invalid_value, std::string("not JSON: ") + simdjson::error_message(code));
  }
}

}  // namespace detail

/// Parses JSON text and writes canonical forms. Holds a simdjson parser and
/// output buffers: reuse one per thread; not thread-safe.
class canonicalizer {
 public:
  canonicalizer() {
    // simdjson counts a scalar inside the innermost container as a level:
    // one more lets it read every document serialize() writes.
    // A failed allocation here is retried by the first parse.
    const simdjson::error_code allocated = parser_.allocate(simdjson::SIMDJSON_PADDING, max_nesting_depth + 1);
    static_cast<void>(allocated);
  }

  /// The canonical form of one JSON text (any value, not only objects). The
  /// view is valid until the next call on this object.
  result<std::string_view> canonicalize(std::string_view json_text, canonical_form form = canonical_form::relay) {
    simdjson::dom::element root;
    if (auto parsed = parse_dom(json_text); !parsed) {
      return unexpected(std::move(parsed).error());
    } else {
      root = *parsed;
    }
    return canonicalize(root, form);
  }

  /// The canonical form of an element of a document parsed by simdjson.
  result<std::string_view> canonicalize(simdjson::dom::element root, canonical_form form = canonical_form::relay) {
    dom_scratch_.clear();
    detail::output_buffer buffer(out_);
    detail::canonical_writer<simdjson::dom::element> writer(buffer, form, dom_scratch_);
    if (!writer.write(root, 0)) return unexpected(std::move(writer.failure()));
    return std::string_view(out_.data(), buffer.used());
  }

  /// The canonical form of a tree (checked as it is written: see the file comment).
  result<std::string_view> serialize(const value& root, canonical_form form = canonical_form::relay) {
    value_scratch_.clear();
    detail::output_buffer buffer(out_);
    detail::canonical_writer<const value*> writer(buffer, form, value_scratch_);
    if (!writer.write(&root, 0)) return unexpected(std::move(writer.failure()));
    return std::string_view(out_.data(), buffer.used());
  }

  /// Parses JSON text with the canonicalizer's checks (duplicate member
  /// names, lone surrogates, numbers beyond the double range are errors)
  /// into a tree that keeps the members' order. Numbers become doubles.
  result<value> parse(std::string_view json_text) {
    simdjson::dom::element root;
    if (auto parsed = parse_dom(json_text); !parsed) {
      return unexpected(std::move(parsed).error());
    } else {
      root = *parsed;
    }
    return to_value(root, 0);
  }

  /// A tree of an element of a document parsed by simdjson, with the same
  /// checks as parse() (duplicate member names are an error).
  result<value> to_value(simdjson::dom::element element) { return to_value(element, 0); }

  /// Parses JSON text with simdjson, reading integers beyond 64 bits as
  /// doubles. The element is valid until the next call on this object.
  result<simdjson::dom::element> parse_dom(std::string_view json_text) {
    simdjson::dom::element root;
    auto code = parser_.parse(json_text.data(), json_text.size()).get(root);
    if (code == simdjson::NUMBER_ERROR) {
      widened_ = detail::widen_long_integers(json_text);
      code = parser_.parse(widened_.data(), widened_.size()).get(root);
    }
    if (code != simdjson::SUCCESS) return unexpected(detail::parse_failure(code));
    return root;
  }

 private:
  result<value> to_value(simdjson::dom::element node, unsigned depth) {
    switch (detail::kind_of(node)) {
      case value::kind::null: return value();
      case value::kind::boolean: return value(detail::bool_of(node));
      case value::kind::number: return value(detail::number_of(node));
      case value::kind::string: return value(detail::string_of(node));
      case value::kind::array: {
        value::array_type items;
        simdjson::dom::array elements;
        if (node.get_array().get(elements) != simdjson::SUCCESS) return value();
        for (simdjson::dom::element item : elements) {
          auto converted = to_value(item, depth + 1);
          if (!converted) return converted;
          items.push_back(std::move(*converted));
        }
        return value(std::move(items));
      }
      case value::kind::object: {
        value::object_type members;
        simdjson::dom::object object;
        if (node.get_object().get(object) != simdjson::SUCCESS) return value();
        names_.clear();
        for (simdjson::dom::key_value_pair member : object) names_.push_back(member.key);
        std::sort(names_.begin(), names_.end());
        if (const auto dup = std::adjacent_find(names_.begin(), names_.end()); dup != names_.end()) {
          return unexpected(make_error(errc::invalid_value, "duplicate member name " + quote_for_message(*dup, 80)));
        }
        for (simdjson::dom::key_value_pair member : object) {
          auto converted = to_value(member.value, depth + 1);
          if (!converted) return converted;
          members.emplace_back(std::string(member.key), std::move(*converted));
        }
        return value(std::move(members));
      }
    }
    return value();
  }

  simdjson::dom::parser parser_;
  std::string widened_;
  std::string out_;
  std::vector<std::string_view> names_;
  std::vector<detail::member_entry<simdjson::dom::element>> dom_scratch_;
  std::vector<detail::member_entry<const value*>> value_scratch_;
};

/// Convenience: the canonical form of JSON text, in a new string.
inline result<std::string> canonicalize(std::string_view json_text, canonical_form form = canonical_form::relay) {
  canonicalizer c;
  auto text = c.canonicalize(json_text, form);
  if (!text) return unexpected(std::move(text).error());
  return std::string(*text);
}

/// Convenience: the canonical form of a tree, in a new string.
inline result<std::string> serialize(const value& root, canonical_form form = canonical_form::relay) {
  canonicalizer c;
  auto text = c.serialize(root, form);
  if (!text) return unexpected(std::move(text).error());
  return std::string(*text);
}

/// Convenience: json::canonicalizer().parse(json_text).
inline result<value> parse(std::string_view json_text) { return canonicalizer().parse(json_text); }

}  // namespace agentctx::json
