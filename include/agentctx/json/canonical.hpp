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
#include <functional>
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
#include "agentctx/json/canonical_form.hpp"
#include "agentctx/json/detail/canonical_text.hpp"
#include "agentctx/json/long_integers.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::json {

namespace detail {

// How canonicalizer::tree_of reads a simdjson DOM element.
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

inline bool bool_of(simdjson::dom::element node) noexcept { return node.get_bool().value_unsafe(); }

inline std::string_view string_of(simdjson::dom::element node) noexcept { return node.get_string().value_unsafe(); }

inline double number_of(simdjson::dom::element node) noexcept {
  switch (node.type()) {
    case simdjson::dom::element_type::INT64: return static_cast<double>(node.get_int64().value_unsafe());
    case simdjson::dom::element_type::UINT64: return static_cast<double>(node.get_uint64().value_unsafe());
    default: return node.get_double().value_unsafe();
  }
}

// Index (0..7) of the first byte of `word` (bytes in memory order, loaded
// little-endian) that a JSON string must escape ('"', '\\' or a control
// character below 0x20) or, with StopAtNonAscii, that is 0x80 or above; 8
// when there is none. The zero-byte tricks can flag a byte after a real hit,
// never one before it, so the lowest flag is exact.
template <bool StopAtNonAscii>
inline unsigned first_byte_to_escape(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
  const std::uint64_t quote = word ^ (ones * '"');
  const std::uint64_t backslash = word ^ (ones * '\\');
  std::uint64_t flags = ((word - ones * 0x20) & ~word) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
  if constexpr (StopAtNonAscii) flags |= word;
  return static_cast<unsigned>(std::countr_zero(flags & high_bits)) / 8;
}

// Room write_escaped() needs for `size` bytes of text: every byte may become
// \u00xx, plus the quotes and 16 bytes of slack for block-sized copies.
constexpr std::size_t escaped_room(std::size_t size) noexcept { return 6 * size + 2 + 16; }

// Writes the bytes from `s` to `end` at `out` with the minimal escapes,
// sixteen at a time where there is nothing to escape; returns the end of
// what it wrote and leaves `s` where it stopped: at `end`, or, with
// StopAtNonAscii, at the first byte of 0x80 or above. Without it, such bytes
// are copied as they are (the caller has checked the text is UTF-8).
template <bool StopAtNonAscii>
inline char* copy_escaped(char* out, const char*& s, const char* const end) noexcept {
  while (s != end) {
#if defined(__SSE2__)
    if (end - s >= 16) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chunk);
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\'))),
                       _mm_cmpeq_epi8(_mm_min_epu8(chunk, _mm_set1_epi8(0x1F)), chunk));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      if constexpr (StopAtNonAscii) mask |= static_cast<unsigned>(_mm_movemask_epi8(chunk));
      const unsigned plain = mask == 0 ? 16u : static_cast<unsigned>(std::countr_zero(mask));
      out += plain;
      s += plain;
      if (plain == 16) continue;
    } else
#endif
    if (end - s >= 8) {
      const std::uint64_t word = load_u64(s);
      std::memcpy(out, s, 8);
      const unsigned plain = first_byte_to_escape<StopAtNonAscii>(word);
      out += plain;
      s += plain;
      if (plain == 8) continue;
    } else {
      const auto c = static_cast<unsigned char>(*s);
      if (c >= 0x20 && c != '"' && c != '\\' && !(StopAtNonAscii && c >= 0x80)) {
        *out++ = *s++;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(*s);
    if (StopAtNonAscii && c >= 0x80) return out;
    out = write_canonical_ascii(out, c);  // without StopAtNonAscii, bytes of 0x80 and above are copied
    ++s;
  }
  return out;
}

// Writes `text` quoted, with the minimal escapes, at `out`, which has
// escaped_room(text.size()) bytes, checking that it is UTF-8; returns the
// end, or nullptr when it is not UTF-8 (the bytes at `out` are then
// unspecified). ASCII text (most names and values) is checked as it is
// copied; at its first other byte, the rest is validated once by simdjson's
// validator and then copied in blocks too.
inline char* write_escaped(char* out, std::string_view text) noexcept {
  const char* s = text.data();
  const char* const end = s + text.size();
  *out++ = '"';
  out = copy_escaped<true>(out, s, end);
  if (s != end) {
    if (!is_valid_utf8(std::string_view(s, static_cast<std::size_t>(end - s)))) return nullptr;
    out = copy_escaped<false>(out, s, end);
  }
  *out++ = '"';
  return out;
}

// A growable output buffer written through a cursor: a std::string kept at
// its full size between uses (so reuse never zero-fills), `used` bytes valid.
// Given a spill function, it hands what it holds to that function rather
// than hold more than spill_threshold bytes, or past them the room one write
// asked for, so a large output is never held whole (spill_rest() hands over
// the last bytes).
class output_buffer {
 public:
  using spill_function = void (*)(void* context, std::string_view bytes);
  static constexpr std::size_t spill_threshold = std::size_t{64} << 10;

  explicit output_buffer(std::string& storage, spill_function spill = nullptr, void* spill_context = nullptr)
      : storage_(storage), spill_(spill), spill_context_(spill_context) {
    if (storage_.size() < 4096) storage_.resize(4096);
    cursor_ = storage_.data();
    end_ = cursor_ + window(0);
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

  /// Hands the bytes held to the spill function (there must be one).
  void spill_rest() {
    if (used() != 0) spill_(spill_context_, std::string_view(storage_.data(), used()));
    cursor_ = storage_.data();
  }

 private:
  void grow(std::size_t n) {
    if (spill_ != nullptr && used() != 0 && used() + n > spill_threshold) spill_rest();
    const std::size_t at = used();
    if (storage_.size() < at + n) storage_.resize(std::max(storage_.size() * 2, at + n));
    cursor_ = storage_.data() + at;
    end_ = storage_.data() + window(at + n);
  }

  // The bytes the cursor may reach: all of the storage, or with a spill
  // function (storage kept large by an earlier use included) the threshold,
  // or past it the `needed` bytes alone.
  std::size_t window(std::size_t needed) const noexcept {
    if (spill_ == nullptr) return storage_.size();
    return std::max(needed, std::min(storage_.size(), spill_threshold));
  }
  std::string& storage_;
  spill_function spill_;
  void* spill_context_;
  char* cursor_;
  char* end_;
};

// Writes a tree canonically, checking what a program may have put in it
// (text that is not UTF-8, NaN, duplicate names, nesting). The walk keeps
// its own stack in `scratch` rather than recursing, so a tree 1,024 levels
// deep costs the call stack nothing; `scratch.members` holds the members of
// the objects being written, innermost last, so one buffer serves every
// depth. write() returns false on the first problem, which failure() then
// describes (a bool rather than a result per node keeps the walk cheap).
class canonical_writer {
 public:
  using member = member_entry<const value*>;
  // An array or object being written: its elements (an array's items from
  // `items`, an object's members in scratch.members), the next one's index
  // and the end, where its members start in scratch.members, and whether a
  // member was written (null members of Appendix A are not).
  struct open_node {
    const value* items;
    std::size_t next;
    std::size_t end;
    std::size_t begin;
    bool is_array;
    bool written;
  };
  struct scratch {
    std::vector<member> members;
    std::vector<open_node> open;
    void clear() noexcept {
      members.clear();
      open.clear();
    }
  };

  canonical_writer(output_buffer& out, canonical_form form, scratch& scratch) : out_(out), form_(form), scratch_(scratch) {}

  bool write(const value& root) {
    if (!is_container(root)) return write_scalar(root);
    std::vector<open_node>& open = scratch_.open;
    std::vector<member>& members = scratch_.members;
    const bool skip_null_members = form_ == canonical_form::relay;
    if (!open_container(root)) return false;
    while (!open.empty()) {
      // The innermost container's elements are written up to the next
      // array or object among them, which is opened in its place.
      open_node& top = open.back();
      const value* inner = nullptr;
      if (top.is_array) {
        while (top.next != top.end) {
          const value& item = top.items[top.next];
          if (top.next++ != 0) out_.put(',');
          if (is_container(item)) {
            inner = &item;
            break;
          }
          if (!write_scalar(item)) return false;
        }
        if (inner == nullptr) {
          out_.put(']');
          open.pop_back();
          continue;
        }
      } else {
        while (top.next != top.end) {
          const member& m = members[top.next++];
          // Appendix A leaves null members out (after the duplicate check:
          // a name twice is an error even when both values are null).
          if (skip_null_members && m.place->is_null()) continue;
          if (top.written) out_.put(',');
          top.written = true;
          if (!write_string(m.name)) return false;
          out_.put(':');
          if (is_container(*m.place)) {
            inner = m.place;
            break;
          }
          if (!write_scalar(*m.place)) return false;
        }
        if (inner == nullptr) {
          members.resize(top.begin);
          out_.put('}');
          open.pop_back();
          continue;
        }
      }
      if (!open_container(*inner)) return false;  // `top` may dangle after this
    }
    return true;
  }

  /// The problem that made write() return false.
  error& failure() noexcept { return failure_; }

 private:
  static bool is_container(const value& node) noexcept { return node.is_array() || node.is_object(); }

  [[gnu::cold, gnu::noinline]] bool fail(errc code, std::string message) {
    failure_ = make_error(code, std::move(message));
    return false;
  }

  bool write_scalar(const value& node) {
    switch (node.type()) {
      case value::kind::null: out_.put("null"); return true;
      case value::kind::boolean: out_.put(node.as_bool() ? std::string_view("true") : std::string_view("false")); return true;
      case value::kind::number: {
        const double number = node.as_number();
        if (!std::isfinite(number)) return fail(errc::invalid_value, "a number is NaN or infinite, which JSON cannot express");
        out_.advance_to(write_es_number(out_.room(max_es_number_length), number));
        return true;
      }
      case value::kind::string: return write_string(node.as_string());
      default: return true;
    }
  }

  bool write_string(std::string_view text) {
    char* const end = write_escaped(out_.room(escaped_room(text.size())), text);
    if (end == nullptr) return fail(errc::invalid_utf8, "a string is not valid UTF-8");
    out_.advance_to(end);
    return true;
  }

  // Writes the opening bracket of `node` and puts it on the stack: an
  // object's members in canonical order in scratch.members, checked for a
  // name given twice.
  bool open_container(const value& node) {
    if (scratch_.open.size() >= max_nesting_depth) return fail(errc::invalid_value, too_deep_message);
    if (node.is_array()) {
      out_.put('[');
      const value::array_type& items = node.as_array();
      scratch_.open.push_back({items.data(), 0, items.size(), 0, true, false});
      return true;
    }
    std::vector<member>& members = scratch_.members;
    const std::size_t begin = members.size();
    const canonical_form form = form_;
    for (const value::member& m : node.as_object()) members.push_back({name_prefix(m.first, form), m.first, &m.second});
    const auto first = members.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto less = [form](const member& a, const member& b) { return member_less(a, b, form); };
    // Members in canonical order already (a tree read from canonical text)
    // need no sort, and hold no name twice.
    if (std::adjacent_find(first, members.end(), [&](const member& a, const member& b) { return !less(a, b); }) !=
        members.end()) {
      std::sort(first, members.end(), less);
      for (auto it = first; it != members.end() && it + 1 != members.end(); ++it) {
        if (it->name == (it + 1)->name) return fail(errc::invalid_value, duplicate_name_message(it->name));
      }
    }
    out_.put('{');
    scratch_.open.push_back({nullptr, begin, members.size(), begin, false, false});
    return true;
  }

  output_buffer& out_;
  canonical_form form_;
  scratch& scratch_;
  error failure_;
};

inline error parse_failure(simdjson::error_code code) {
  switch (code) {
    case simdjson::UTF8_ERROR: return make_error(errc::invalid_utf8, "the text is not valid UTF-8");
    case simdjson::STRING_ERROR:
      return make_error(errc::invalid_value,
                        "a string has a bad escape or a lone surrogate (a \\ud800..\\udfff escape without its pair)");
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

  /// The canonical form of one JSON text (any value, not only objects),
  /// parsed and written in one pass (detail/canonical_text.hpp). The view is
  /// valid until the next call on this object. Errors carry the byte offset
  /// of the problem where there is one.
  result<std::string_view> canonicalize(std::string_view json_text, canonical_form form = canonical_form::relay) {
    // The text may be the view the last call returned (canonicalizing a
    // result again): copied first, since this call rewrites that buffer.
    if (!json_text.empty() && !out_.empty() && std::less_equal<const char*>()(out_.data(), json_text.data()) &&
        std::less<const char*>()(json_text.data(), out_.data() + out_.size())) {
      own_input_.assign(json_text);
      json_text = own_input_;
    }
    if (auto bom = byte_order_mark(json_text)) return unexpected(std::move(*bom));
    auto size = text_.run(json_text, form, out_);
    if (!size) return unexpected(std::move(size).error());
    return std::string_view(out_.data(), *size);
  }

  /// The canonical form of a tree (checked as it is written: see the file comment).
  result<std::string_view> serialize(const value& root, canonical_form form = canonical_form::relay) {
    value_scratch_.clear();
    detail::output_buffer buffer(out_);
    detail::canonical_writer writer(buffer, form, value_scratch_);
    if (!writer.write(root)) return unexpected(std::move(writer.failure()));
    return std::string_view(out_.data(), buffer.used());
  }

  /// The canonical form of a tree given to `sink` (callable with a
  /// std::string_view) in successive pieces, in order, so that it is never
  /// held whole: what a hash of a large tree needs. On an error (or an
  /// exception, the sink's or a failed allocation) the pieces given so far
  /// are a prefix of nothing; the caller discards them. The sink must not
  /// use this canonicalizer.
  template <class Sink>
  result<void> serialize_to(const value& root, canonical_form form, Sink&& sink) {
    value_scratch_.clear();
    const auto call = [&sink](std::string_view bytes) { sink(bytes); };  // a function's name too
    detail::output_buffer buffer(
        out_, [](void* context, std::string_view bytes) { (*static_cast<const decltype(call)*>(context))(bytes); },
        const_cast<void*>(static_cast<const void*>(&call)));
    detail::canonical_writer writer(buffer, form, value_scratch_);
    if (!writer.write(root)) return unexpected(std::move(writer.failure()));
    buffer.spill_rest();
    return {};
  }

  /// Parses JSON text with the canonicalizer's checks (duplicate member
  /// names, lone surrogates, numbers beyond the double range are errors)
  /// into a tree that keeps the members' order. Numbers become doubles.
  /// Errors are those of canonicalize(): named precisely, with their byte
  /// offset.
  result<value> parse(std::string_view json_text) {
    if (auto bom = byte_order_mark(json_text)) return unexpected(std::move(*bom));
    simdjson::dom::element root;
    if (auto parsed = parse_dom(json_text); !parsed) {
      return unexpected(explained(json_text, std::move(parsed).error()));
    } else {
      root = *parsed;
    }
    auto tree = tree_of(root);
    if (!tree) return unexpected(explained(json_text, std::move(tree).error()));
    return tree;
  }

  /// A tree of an element of a document parsed by simdjson, with the same
  /// checks as parse() (duplicate member names are an error).
  result<value> to_value(simdjson::dom::element element) { return tree_of(element); }

  /// Parses JSON text with simdjson, reading integers beyond 64 bits as
  /// doubles. The element is valid until the next call on this object.
  result<simdjson::dom::element> parse_dom(std::string_view json_text) {
    simdjson::dom::element root;
    const auto code = parse_widening_long_integers(parser_, json_text, widened_, root);
    if (code != simdjson::SUCCESS) return unexpected(detail::parse_failure(code));
    return root;
  }

 private:
  // JSON text starts with no byte-order mark (RFC 8259 section 8.1): one is
  // refused by name rather than as "expected a value", unless the text is
  // not UTF-8, which is reported first whatever else is wrong with it.
  static std::optional<error> byte_order_mark(std::string_view json_text) {
    if (!json_text.starts_with("\xEF\xBB\xBF")) return std::nullopt;
    if (const std::size_t bad = find_invalid_utf8(json_text); bad != json_text.size()) {
      return make_error(errc::invalid_utf8, "the text is not valid UTF-8", "", bad);
    }
    return make_error(errc::invalid_value, "not JSON: the text starts with a byte-order mark (U+FEFF)", "", 0);
  }

  // The refusal of `json_text` as the one-pass canonicalizer words it (the
  // problem named precisely, with its byte offset; simdjson's codes say less
  // and carry no offset): the text path refuses what the tree path refuses
  // (the fuzz target canonical_json_fuzz checks it), so `fallback` is only
  // returned should the two ever disagree.
  [[gnu::cold]] error explained(std::string_view json_text, error fallback) {
    std::string scratch;
    auto refused = text_.run(json_text, canonical_form::jcs, scratch);
    return refused ? std::move(fallback) : std::move(refused).error();
  }

  // One array or object of the tree being built, with what of its element
  // is left to read. The tree is built with this explicit stack, not by
  // recursion: 1,024 levels cost the call stack nothing (a recursive build
  // took about 0.5 KB of it a level).
  struct open_container {
    value built;
    simdjson::dom::array::iterator next_item{}, end_item{};
    simdjson::dom::object::iterator next_member{}, end_member{};
    std::string_view name;  // its name in the object that holds it
  };

  // Starts the tree of array or object `node` at depth open_.size(), or
  // says why it is refused (too deep, a member name twice).
  std::optional<error> open(simdjson::dom::element node, std::string_view name) {
    // simdjson reads one level more (its limit counts a scalar inside the
    // innermost container): empty containers there are refused here.
    if (open_.size() >= max_nesting_depth) return make_error(errc::invalid_value, too_deep_message);
    open_container& c = open_.emplace_back();
    c.name = name;
    if (detail::kind_of(node) == value::kind::array) {
      const simdjson::dom::array elements = node.get_array().value_unsafe();
      value::array_type items;
      items.reserve(elements.size());
      c.built = value(std::move(items));
      c.next_item = elements.begin();
      c.end_item = elements.end();
      return std::nullopt;
    }
    const simdjson::dom::object object = node.get_object().value_unsafe();
    names_.clear();
    for (simdjson::dom::key_value_pair member : object) names_.push_back(member.key);
    // Names in increasing byte order (a tree read from canonical text) hold
    // none twice: the sort is for the others.
    if (std::adjacent_find(names_.begin(), names_.end(), std::greater_equal<std::string_view>()) != names_.end()) {
      std::sort(names_.begin(), names_.end());
      if (const auto dup = std::adjacent_find(names_.begin(), names_.end()); dup != names_.end()) {
        return make_error(errc::invalid_value, detail::duplicate_name_message(*dup));
      }
    }
    value::object_type members;
    members.reserve(names_.size());
    c.built = value(std::move(members));
    c.next_member = object.begin();
    c.end_member = object.end();
    return std::nullopt;
  }

  static value scalar_of(simdjson::dom::element node) {
    switch (detail::kind_of(node)) {
      case value::kind::boolean: return value(detail::bool_of(node));
      case value::kind::number: return value(detail::number_of(node));
      case value::kind::string: return value(detail::string_of(node));
      default: return value();
    }
  }

  static bool is_container(simdjson::dom::element node) noexcept {
    const value::kind k = detail::kind_of(node);
    return k == value::kind::array || k == value::kind::object;
  }

  // Adds `v`, named `name` when the innermost open container is an object.
  void add_to_innermost(std::string_view name, value v) {
    value& into = open_.back().built;
    if (into.is_array()) {
      into.as_array().push_back(std::move(v));
    } else {
      into.as_object().emplace_back(std::string(name), std::move(v));
    }
  }

  // The tree of `root`, built in document order. A container is checked as
  // it is opened (its depth, then its names), so a name twice in an object
  // is found before a problem inside it; parse() reports the first problem
  // in the text instead (explained()).
  result<value> tree_of(simdjson::dom::element root) {
    if (!is_container(root)) return scalar_of(root);
    // What a refusal (or an exception) leaves half built is freed on the way
    // out, not kept until the next call.
    struct release_on_exit {
      std::vector<open_container>& open;
      ~release_on_exit() { open.clear(); }
    } release{open_};  // so open_ is empty here too
    if (auto refused = open(root, {})) return unexpected(std::move(*refused));
    for (;;) {
      open_container& top = open_.back();
      simdjson::dom::element child;
      std::string_view name;
      if (top.built.is_array() && top.next_item != top.end_item) {
        child = *top.next_item;
        ++top.next_item;
      } else if (top.built.is_object() && top.next_member != top.end_member) {
        name = top.next_member.key();
        child = top.next_member.value();
        ++top.next_member;
      } else {
        value done = std::move(top.built);
        name = top.name;
        open_.pop_back();
        if (open_.empty()) return done;
        add_to_innermost(name, std::move(done));
        continue;
      }
      if (!is_container(child)) {
        add_to_innermost(name, scalar_of(child));
      } else if (auto refused = open(child, name)) {
        return unexpected(std::move(*refused));
      }
    }
  }

  simdjson::dom::parser parser_;
  std::string widened_;
  std::string out_;
  std::vector<std::string_view> names_;
  std::vector<open_container> open_;  // tree_of's stack
  detail::canonical_writer::scratch value_scratch_;
  std::string own_input_;  // a copy of a text that was this object's own output
  detail::text_canonicalizer text_;
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

/// A refusal of parse() or canonicalize() said of `what`: "the package is not
/// JSON: the text is empty", "the package is not valid JSON: duplicate member
/// name ..." (the parser's own "not JSON: ..." is not said twice).
inline std::string refusal_of(std::string_view what, const error& refused) {
  const std::string& why = refused.message;
  return std::string(what) + (why.starts_with("not JSON") ? " is " : " is not valid JSON: ") + why;
}

}  // namespace agentctx::json
