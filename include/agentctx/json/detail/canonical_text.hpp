// agentctx/json/detail/canonical_text.hpp: JSON text to canonical JSON text
// in one pass, without building a tree (json::canonicalizer::canonicalize).
//
// The parser checks RFC 8259's grammar and RFC 8785's refusals as it reads
// (UTF-8 inside strings, escapes, lone surrogates, numbers beyond the double
// range, duplicate member names, the nesting limit) and writes each token's
// canonical form as soon as it has read it:
//   - a string's plain bytes are copied sixteen at a time while the same
//     block is searched for '"', '\\', control characters and non-ASCII
//     bytes; only those take the slow path (an escape is rewritten in its
//     minimal form, a non-ASCII sequence is validated and copied);
//   - a plain integer of up to 15 digits is its own canonical form, and so
//     are the significant digits of any number with at most 15 of them (laid
//     out by write_es_digits); only other numbers go through std::from_chars
//     and write_es_number();
//   - an object's members are written in the order they come, each recorded
//     with its name's sort prefix and the span it was written to. At the
//     closing brace, members already in canonical order (text that was
//     canonical already) stay where they are; others are sorted (a sorting
//     network over 64-bit keys for up to 32 members: no data-dependent
//     branches) and their text is moved into that order through a scratch
//     buffer (for the outermost object the scratch buffer then becomes the
//     output: no copy back). In the relay form a member whose value is null
//     is written and then taken back.
// The canonical text is never longer than the input except for numbers
// ("1e20" becomes "100000000000000000000"), so the output buffer is sized
// from the input once and grown only before a number that needs it. Input is
// never read past its end: sixteen-byte loads are taken only where sixteen
// bytes remain.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <unordered_set>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/canonical_form.hpp"

namespace agentctx::json::detail {

// ---- sixteen-byte blocks ---------------------------------------------------------------

#if defined(__SSE2__)
using byte_block = __m128i;
inline byte_block load_block(const char* p) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void store_block(char* p, byte_block b) noexcept { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), b); }
// Bit i set where byte i of a string's text needs a look: '"', '\\', a
// control character, or a non-ASCII byte.
inline unsigned string_stop_mask(byte_block b) noexcept {
  const __m128i special =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\\'))),
                   _mm_cmpeq_epi8(_mm_min_epu8(b, _mm_set1_epi8(0x1F)), b));
  return static_cast<unsigned>(_mm_movemask_epi8(special) | _mm_movemask_epi8(b));
}
// Bit i set where byte i is not a space.
inline unsigned non_space_mask(byte_block b) noexcept {
  return static_cast<unsigned>(~_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8(' ')))) & 0xFFFFu;
}
// Bit i set where byte i is an ASCII digit.
inline unsigned digit_mask(byte_block b) noexcept {
  // Signed compares: bytes of 0x80 and above are negative, below '0'.
  return static_cast<unsigned>(_mm_movemask_epi8(
      _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(b, _mm_set1_epi8('9' + 1)))));
}
// Bit i set where byte i is not JSON white space (space, \n, \r, \t).
inline unsigned non_whitespace_mask(byte_block b) noexcept {
  const __m128i space =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\n'))),
                   _mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\t'))));
  return static_cast<unsigned>(~_mm_movemask_epi8(space)) & 0xFFFFu;
}
#else
struct byte_block {
  unsigned char bytes[16];
};
inline byte_block load_block(const char* p) noexcept {
  byte_block b;
  std::memcpy(b.bytes, p, 16);
  return b;
}
inline void store_block(char* p, const byte_block& b) noexcept { std::memcpy(p, b.bytes, 16); }
inline unsigned string_stop_mask(const byte_block& b) noexcept {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned char c = b.bytes[i];
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) mask |= 1u << i;
  }
  return mask;
}
inline unsigned non_space_mask(const byte_block& b) noexcept {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) mask |= (b.bytes[i] != ' ' ? 1u : 0u) << i;
  return mask;
}
inline unsigned digit_mask(const byte_block& b) noexcept {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) mask |= (b.bytes[i] >= '0' && b.bytes[i] <= '9' ? 1u : 0u) << i;
  return mask;
}
inline unsigned non_whitespace_mask(const byte_block& b) noexcept {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned char c = b.bytes[i];
    mask |= (c != ' ' && c != '\n' && c != '\r' && c != '\t' ? 1u : 0u) << i;
  }
  return mask;
}
#endif

// ---- sorting networks ------------------------------------------------------------------

// Batcher's odd-even merge sort for 2^log2 elements: the comparators as
// (i, j) pairs with i < j, smaller key to i.
template <unsigned Log2>
constexpr auto odd_even_merge_network() {
  constexpr std::size_t n = std::size_t{1} << Log2;
  constexpr std::size_t count = Log2 == 0 ? 0 : ((Log2 * Log2 - Log2 + 4) << Log2) / 4 - 1;
  std::array<std::pair<std::uint8_t, std::uint8_t>, count> pairs{};
  std::size_t at = 0;
  for (std::size_t p = 1; p < n; p <<= 1) {
    for (std::size_t k = p; k >= 1; k >>= 1) {
      for (std::size_t j = k % p; j + k < n; j += 2 * k) {
        for (std::size_t i = 0; i < k && i + j + k < n; ++i) {
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
            pairs[at++] = {static_cast<std::uint8_t>(i + j), static_cast<std::uint8_t>(i + j + k)};
          }
        }
      }
    }
  }
  return pairs;
}

inline void compare_exchange(std::uint64_t& a, std::uint64_t& b) noexcept {
  const std::uint64_t low = a < b ? a : b;  // conditional moves: no branch on the data
  const std::uint64_t high = a < b ? b : a;
  a = low;
  b = high;
}

// The comparators of Batcher's network for the next power of two at or
// above `count` that touch only positions below `count`. The others are no-
// ops when the positions from `count` up hold keys above every real key, as
// they would (a comparator with one such key leaves both where they are), so
// these sort `count` keys by themselves: 22 keys take 119 comparators, not the
// 191 of the 32-key network.
template <std::size_t Count>
constexpr std::size_t pruned_network_size() {
  constexpr auto network = odd_even_merge_network<std::bit_width(Count - 1)>();
  std::size_t size = 0;
  for (const auto& pair : network) size += pair.second < Count ? 1 : 0;
  return size;
}

template <std::size_t Count>
constexpr auto pruned_network() {
  constexpr auto network = odd_even_merge_network<std::bit_width(Count - 1)>();
  std::array<std::pair<std::uint8_t, std::uint8_t>, pruned_network_size<Count>()> pairs{};
  std::size_t at = 0;
  for (const auto& pair : network) {
    if (pair.second < Count) pairs[at++] = pair;
  }
  return pairs;
}

template <std::size_t Count, std::size_t... I>
inline void sort_with_network(std::uint64_t* keys, std::index_sequence<I...>) noexcept {
  static constexpr auto network = pruned_network<Count>();
  // Unrolled, with the keys in locals, so that the compiler can keep them in
  // registers instead of storing and reloading each one per comparator.
  std::uint64_t k[Count];
  std::memcpy(k, keys, sizeof k);
  (compare_exchange(k[network[I].first], k[network[I].second]), ...);
  std::memcpy(keys, k, sizeof k);
}

/// Sorts `Count` keys (2..32) with a sorting network.
template <std::size_t Count>
inline void sort_with_network(std::uint64_t* keys) noexcept {
  sort_with_network<Count>(keys, std::make_index_sequence<pruned_network_size<Count>()>());
}

/// Sorts `count` keys (2..32) with the network for that count.
inline void sort_small(std::uint64_t* keys, std::size_t count) noexcept {
  using sorter = void (*)(std::uint64_t*) noexcept;
  static constexpr auto sorters = []<std::size_t... C>(std::index_sequence<C...>) {
    return std::array<sorter, sizeof...(C)>{&sort_with_network<C + 2>...};
  }(std::make_index_sequence<31>());
  sorters[count - 2](keys);
}

// ---- the canonicalizer -----------------------------------------------------------------

/// Parses JSON text and writes its canonical form in the same pass. Keeps
/// its buffers between runs; not thread-safe.
class text_canonicalizer {
 public:
  /// Writes the canonical form of `text` at the start of `out` (grown as
  /// needed and never shrunk, so that reuse does not allocate) and returns
  /// the number of bytes written. Errors: errc::invalid_utf8 when the text
  /// is not UTF-8 (wherever the first bad byte is, as simdjson reports it),
  /// else errc::invalid_value naming the first problem, with its offset.
  result<std::size_t> run(std::string_view text, canonical_form form, std::string& out) {
    begin_ = text.data();
    end_ = text.data() + text.size();
    form_ = form;
    storage_ = &out;
    names_ready_ = false;
    names_used_ = 0;
    member_count_ = 0;
    const std::size_t need = text.size() + slack;
    if (out.size() < need) out.resize(std::max(need, out.size() * 2));
    base_ = out.data();
    limit_ = out.data() + out.size();

    cursor c{skip_whitespace(begin_), base_};
    if (c.in == end_) {
      return unexpected(make_error(errc::invalid_value, text.empty() ? "not JSON: the text is empty"
                                                                     : "not JSON: the text is only white space"));
    }
    c = value(c, 0);
    if (c.in != nullptr) {
      c.in = skip_whitespace(c.in);
      if (c.in != end_) c = fail(c.in, "not JSON: more text after the value");
    }
    if (c.in == nullptr) {
      // As simdjson does, a text that is not UTF-8 is reported as such
      // whatever else is wrong with it, at its first bad byte.
      if (const std::size_t bad = find_invalid_utf8(text); bad != text.size()) {
        return unexpected(make_error(errc::invalid_utf8, "the text is not valid UTF-8", {}, bad));
      }
      return unexpected(std::move(failure_));
    }
    return static_cast<std::size_t>(c.out - base_);
  }

 private:
  // Bytes of room past the input's length in the output, and past every
  // name in names_ and every object's text in scratch_: block stores and
  // copies run up to 16 bytes past what they write, eight-byte loads up to
  // 8, and the longest escape is 6 bytes.
  static constexpr std::size_t slack = 64;

  // Where the parser is: the next input byte and the next output byte. The
  // parsing functions take and return it by value so that both stay in
  // registers (stores through char* could alias member variables); in ==
  // nullptr means failure_ holds an error.
  struct cursor {
    const char* in;
    char* out;
  };

  // A member of an object being written: where its "name":value text is in
  // the output ([begin, end), begin == end when the relay form left it out).
  struct span {
    std::size_t begin;
    std::size_t end;
  };
  using slot = member_entry<span>;

  [[gnu::cold, gnu::noinline]] cursor fail(const char* at, const char* message) {
    failure_ = make_error(errc::invalid_value, message, {}, static_cast<std::uint64_t>(at - begin_));
    return {nullptr, nullptr};
  }

  // An object whose `count` members hold a name twice: the refusal names
  // the first member, in the text's order, whose name an earlier member
  // has, at its opening quote when the name is the input's own bytes (a
  // name with escapes was decoded elsewhere: the object's closing brace is
  // named instead).
  [[gnu::cold, gnu::noinline]] void duplicate_name(const slot* members, std::size_t count, const char* closing) {
    std::unordered_set<std::string_view> seen;
    seen.reserve(count);
    std::string_view second;
    for (std::size_t i = 0; i < count; ++i) {
      if (!seen.insert(members[i].name).second) {
        second = members[i].name;
        break;
      }
    }
    const bool in_input = second.data() > begin_ && second.data() < end_;
    const char* at = in_input ? second.data() - 1 : closing;
    failure_ = make_error(errc::invalid_value,
                          duplicate_name_message(second) + (in_input ? "" : " (in the object that closes here)"), {},
                          static_cast<std::uint64_t>(at - begin_));
  }

  static bool is_digit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

  // The end of the run of digits starting at `p`: runs shorter than sixteen
  // (nearly all) are measured from one block, without a branch per digit.
  const char* digits_end(const char* p) const noexcept {
    if (end_ - p >= 16) {
      const unsigned run = static_cast<unsigned>(std::countr_zero(~digit_mask(load_block(p))));
      if (run < 16) return p + run;
      p += 16;
    }
    while (p != end_ && is_digit(*p)) ++p;
    return p;
  }
  static bool above_space(char c) noexcept { return static_cast<unsigned char>(c) > ' '; }

  // ---- white space

  // The next token at or after `p`. Most tokens follow the last one
  // directly, or the one space a pretty-printer puts after a colon, or a
  // newline and an indentation of spaces; anything else takes the loop.
  [[gnu::always_inline]] const char* skip_whitespace(const char* p) const noexcept {
    if (end_ - p >= 17) {
      if (above_space(p[0])) return p;
      if (p[0] == ' ' && above_space(p[1])) return p + 1;
      if (p[0] == '\n') {
        const unsigned other = non_space_mask(load_block(p + 1));
        if (other != 0) {
          const char* const next = p + 1 + std::countr_zero(other);
          if (above_space(*next)) return next;
        }
      }
    }
    return skip_whitespace_run(p);
  }

  [[gnu::noinline]] const char* skip_whitespace_run(const char* p) const noexcept {
    const char* const end = end_;
    while (end - p >= 16) {
      const unsigned other = non_whitespace_mask(load_block(p));
      if (other != 0) return p + std::countr_zero(other);
      p += 16;
    }
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    return p;
  }

  // ---- values

  cursor value(cursor c, unsigned depth) {
    if (c.in == end_) return fail(c.in, "not JSON: the text ends where a value should be");
    if (*c.in == '"') return string_token(c);  // the most common value: a test rather than the jump table
    switch (*c.in) {
      case '{': return object(c, depth);
      case '[': return array(c, depth);
      case 't': return literal(c, "true", 4);
      case 'f': return literal(c, "false", 5);
      case 'n': return literal(c, "null", 4);
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9': return number(c);
      default: return fail(c.in, "not JSON: expected a value");
    }
  }

  cursor literal(cursor c, const char* word, std::size_t size) {
    if (static_cast<std::size_t>(end_ - c.in) < size || std::memcmp(c.in, word, size) != 0) {
      return fail(c.in, "not JSON: expected a value");
    }
    std::memcpy(c.out, word, size);
    return {c.in + size, c.out + size};
  }

  cursor array(cursor c, unsigned depth) {
    if (depth >= max_nesting_depth) return fail(c.in, too_deep_message);
    *c.out++ = '[';
    c.in = skip_whitespace(c.in + 1);
    if (c.in != end_ && *c.in == ']') {
      *c.out++ = ']';
      return {c.in + 1, c.out};
    }
    for (;;) {
      c = c.in != end_ && *c.in == '"' ? string_token(c) : value(c, depth + 1);
      if (c.in == nullptr) return c;
      c.in = skip_whitespace(c.in);
      if (c.in == end_) return fail(c.in, "not JSON: an array is not closed");
      if (*c.in == ',') {
        *c.out++ = ',';
        c.in = skip_whitespace(c.in + 1);
        continue;
      }
      if (*c.in == ']') {
        *c.out++ = ']';
        return {c.in + 1, c.out};
      }
      return fail(c.in, "not JSON: expected ',' or ']' in an array");
    }
  }

  // ---- objects

  cursor object(cursor c, unsigned depth) {
    if (depth >= max_nesting_depth) return fail(c.in, too_deep_message);
    *c.out++ = '{';
    c.in = skip_whitespace(c.in + 1);
    if (c.in != end_ && *c.in == '}') {
      *c.out++ = '}';
      return {c.in + 1, c.out};
    }
    const std::size_t first = member_count_;
    const auto content = static_cast<std::size_t>(c.out - base_);
    bool written = false;
    for (;;) {
      if (c.in == end_ || *c.in != '"') return fail(c.in, "not JSON: expected a member name in double quotes");
      const auto before_comma = static_cast<std::size_t>(c.out - base_);
      if (written) *c.out++ = ',';
      const auto start = static_cast<std::size_t>(c.out - base_);
      const char* const name_begin = c.in + 1;
      c = string_token(c);
      if (c.in == nullptr) return c;
      std::string_view name(name_begin, static_cast<std::size_t>(c.in - 1 - name_begin));
      std::uint64_t prefix;
      if (escaped_) {
        name = decoded_name(name_begin - 1);
        prefix = name_prefix_of_word(load_u64(name.data()), name.size(), form_);  // names_ has room past it
      } else if (end_ - name_begin >= 8) {
        prefix = name_prefix_of_word(load_u64(name_begin), name.size(), form_);
      } else {
        prefix = name_prefix(name, form_);  // near the end of the text
      }

      c.in = skip_whitespace(c.in);
      if (c.in == end_ || *c.in != ':') return fail(c.in, "not JSON: expected ':' after a member name");
      *c.out++ = ':';
      c.in = skip_whitespace(c.in + 1);
      span place{0, 0};
      if (form_ == canonical_form::relay && c.in != end_ && *c.in == 'n') {
        c = literal(c, "null", 4);
        if (c.in == nullptr) return c;
        c.out = base_ + before_comma;  // Appendix A leaves null members out
      } else {
        // Most values are strings: no call for them.
        c = c.in != end_ && *c.in == '"' ? string_token(c) : value(c, depth + 1);
        if (c.in == nullptr) return c;
        place = {start, static_cast<std::size_t>(c.out - base_)};
        written = true;
      }
      if (member_count_ == member_capacity_) grow_members();
      members_[member_count_++] = {prefix, name, place};

      c.in = skip_whitespace(c.in);
      if (c.in == end_) return fail(c.in, "not JSON: an object is not closed");
      if (*c.in == ',') {
        c.in = skip_whitespace(c.in + 1);
        continue;
      }
      if (*c.in == '}') break;
      return fail(c.in, "not JSON: expected ',' or '}' in an object");
    }
    // Members in canonical order already (and so no name twice) stay where
    // they are.
    const slot* const members = members_.data() + first;
    const std::size_t count = member_count_ - first;
    std::size_t i = 1;
    while (i < count && member_less(members[i - 1], members[i], form_)) ++i;
    if (i < count) {
      c.out = put_in_order(first, content, c.out, c.in);
      if (c.out == nullptr) return {nullptr, nullptr};
    }
    member_count_ = first;
    *c.out++ = '}';
    return {c.in + 1, c.out};
  }

  [[gnu::noinline]] void grow_members() {
    members_.resize(std::max<std::size_t>(64, members_.size() * 2));
    member_capacity_ = members_.size();
  }

  // Sorts the members of the object whose records start at `first` and whose
  // text starts at output offset `content` (and ends at `end`), and moves
  // their text into that order; returns the end of that text (which may now
  // be in another buffer: base_ is updated), or nullptr (with failure_ set)
  // for a name seen twice (`closing`: the object's '}' in the input). Each member is sorted as one 64-bit key: its name's prefix in the
  // high bits, its index in the low bits (as few as the count needs); keys
  // whose prefix parts are equal are put in order by their whole names
  // afterwards.
  [[gnu::noinline]] char* put_in_order(std::size_t first, std::size_t content, char* end, const char* closing) {
    const slot* const members = members_.data() + first;
    const std::size_t count = member_count_ - first;
    const int index_bits = std::max(1, static_cast<int>(std::bit_width(count - 1)));
    if (index_bits > 32) {
      failure_ = make_error(errc::invalid_value, "an object has more than 2^32 members");
      return nullptr;
    }
    const std::uint64_t index_mask = (std::uint64_t{1} << index_bits) - 1;
    if (keys_.size() < count) keys_.resize(std::max(count, keys_.size() * 2));
    std::uint64_t* const keys = keys_.data();
    for (std::size_t k = 0; k < count; ++k) keys[k] = (members[k].prefix & ~index_mask) | k;
    if (count <= 32) {
      sort_small(keys, count);  // count >= 2: an object of one member is in order
    } else {
      std::sort(keys, keys + count);
    }
    // Runs of equal prefix parts: their whole names decide, and two equal
    // names are an error. Runs are usually short (insertion sort), but the
    // text decides how long they are (names that share their first bytes),
    // so a long run is sorted in O(n log n).
    const canonical_form form = form_;
    const auto by_name = [members, index_mask, form](std::uint64_t a, std::uint64_t b) {
      return name_less(members[a & index_mask].name, members[b & index_mask].name, form);
    };
    for (std::size_t k = 0; k < count;) {
      std::size_t run_end = k + 1;
      while (run_end < count && ((keys[run_end] ^ keys[k]) & ~index_mask) == 0) ++run_end;
      if (run_end - k > 16) {
        std::sort(keys + k, keys + run_end, by_name);
      } else {
        for (std::size_t r = k + 1; r < run_end; ++r) {
          const std::uint64_t key = keys[r];
          std::size_t at = r;
          while (at > k && by_name(key, keys[at - 1])) {
            keys[at] = keys[at - 1];
            --at;
          }
          keys[at] = key;
        }
      }
      for (std::size_t r = k + 1; r < run_end; ++r) {
        const std::string_view name = members[keys[r] & index_mask].name;
        if (name == members[keys[r - 1] & index_mask].name) {
          duplicate_name(members, count, closing);
          return nullptr;
        }
      }
      k = run_end;
    }
    const auto size = static_cast<std::size_t>(end - (base_ + content));
    // The root object is the only one whose text starts right after the
    // output's first byte.
    const bool root = content == 1;
    if (scratch_.size() < size + slack) scratch_.resize(std::max(size + slack, scratch_.size() * 2));
    char* out = scratch_.data() + (root ? 1 : 0);
    bool written = false;
    for (std::size_t k = 0; k < count; ++k) {
      const span place = members[keys[k] & index_mask].place;
      if (place.begin == place.end) continue;
      if (written) *out++ = ',';
      written = true;
      // Sixteen bytes at a time, past the member's end: the output has
      // slack beyond its cursor, scratch_ beyond the object's size. Most
      // members are done by the first four blocks, copied whatever the
      // member's length, so that the loop's exit is a branch only for
      // the longer ones.
      const char* from = base_ + place.begin;
      const std::size_t bytes = place.end - place.begin;
      const byte_block b0 = load_block(from);
      const byte_block b1 = load_block(from + 16);
      const byte_block b2 = load_block(from + 32);
      const byte_block b3 = load_block(from + 48);
      store_block(out, b0);
      store_block(out + 16, b1);
      store_block(out + 32, b2);
      store_block(out + 48, b3);
      if (bytes > 64) std::memcpy(out + 64, from + 64, bytes - 64);
      out += bytes;
    }
    if (root) {
      // The ordered text (after its '{') becomes the output: no copy back.
      scratch_[0] = '{';
      storage_->swap(scratch_);
      base_ = storage_->data();
      limit_ = base_ + storage_->size();
    } else {
      std::memcpy(base_ + content, scratch_.data(), size);
    }
    return base_ + content + size;
  }

  // The decoded bytes of the member name whose opening quote is at `quote`
  // (a name with escapes, already checked), kept in names_, which has room
  // for every name of the text and slack past the last.
  std::string_view decoded_name(const char* quote) {
    if (!names_ready_) {
      const std::size_t need = static_cast<std::size_t>(end_ - begin_) + slack;
      if (names_.size() < need) names_.resize(need);
      names_ready_ = true;
    }
    char* const start = names_.data() + names_used_;
    const cursor decoded = string<false>(quote, {quote + 1, start});
    const auto size = static_cast<std::size_t>(decoded.out - start);
    names_used_ += size;
    return {start, size};
  }

  // ---- strings

  // The string whose opening quote is at c.in, written canonically; sets
  // escaped_ when the input held an escape. A string of fewer than sixteen
  // plain ASCII bytes (most member names and many values) is done here with
  // one block; longer or other ones go on in string().
  [[gnu::always_inline]] cursor string_token(cursor c) {
    if (end_ - c.in >= 17) {
      const byte_block block = load_block(c.in + 1);
      c.out[0] = '"';
      store_block(c.out + 1, block);
      const unsigned stop = string_stop_mask(block);
      const unsigned plain = stop == 0 ? 16u : static_cast<unsigned>(std::countr_zero(stop));
      if (plain < 16 && c.in[1 + plain] == '"') {
        c.out[1 + plain] = '"';
        escaped_ = false;
        return {c.in + plain + 2, c.out + plain + 2};
      }
      return string<true>(c.in, {c.in + 1 + plain, c.out + 1 + plain});
    }
    *c.out = '"';
    return string<true>(c.in, {c.in + 1, c.out + 1});
  }

  // The rest of the string whose opening quote is at `quote`, from c.in
  // (which follows the quote or plain bytes already copied to c.out).
  // Canonical: writes it with the minimal escapes and the closing quote;
  // else (a member name being decoded again) writes its bytes unescaped.
  // Sets escaped_ when the input held an escape.
  template <bool Canonical>
  [[gnu::noinline]] cursor string(const char* quote, cursor c) {
    const char* in = c.in;
    char* out = c.out;
    const char* const end = end_;
    bool escaped = false;
    for (;;) {
      if (end - in >= 16) {
        const byte_block block = load_block(in);
        store_block(out, block);
        const unsigned stop = string_stop_mask(block);
        if (stop == 0) {
          in += 16;
          out += 16;
          continue;
        }
        const unsigned plain = static_cast<unsigned>(std::countr_zero(stop));
        in += plain;
        out += plain;
      } else {
        while (in != end) {
          const auto byte = static_cast<unsigned char>(*in);
          if (byte == '"' || byte == '\\' || byte < 0x20 || byte >= 0x80) break;
          *out++ = *in++;
        }
        if (in == end) return fail(quote, "not JSON: a string is not closed");
      }
      const auto byte = static_cast<unsigned char>(*in);
      if (byte == '"') {
        if constexpr (Canonical) *out++ = '"';
        escaped_ = escaped;
        return {in + 1, out};
      }
      if (byte == '\\') {
        escaped = true;
        const cursor next = escape<Canonical>({in, out});
        if (next.in == nullptr) return next;
        in = next.in;
        out = next.out;
        continue;
      }
      if (byte >= 0x80) {
        const std::size_t size = utf8_sequence_size(in, end);
        if (size == 0) return fail_utf8(in);
        for (std::size_t k = 0; k < size; ++k) out[k] = in[k];
        in += size;
        out += size;
        continue;
      }
      return fail(in, "not JSON: a string holds a control character that must be escaped");
    }
  }

  // A surrogate escape at `at` (of `unit`) without its pair.
  [[gnu::cold, gnu::noinline]] cursor fail_surrogate(const char* at, int unit) {
    char hex[5];
    for (int k = 0; k < 4; ++k) hex[k] = "0123456789abcdef"[(unit >> (12 - 4 * k)) & 0xF];
    hex[4] = '\0';
    std::string message = "a string has a lone surrogate (\\u";
    message += hex;
    message += unit <= 0xDBFF ? " is not followed by a low surrogate \\udc00..\\udfff)"
                              : " is not preceded by a high surrogate \\ud800..\\udbff)";
    failure_ = make_error(errc::invalid_value, std::move(message), {}, static_cast<std::uint64_t>(at - begin_));
    return {nullptr, nullptr};
  }

  [[gnu::cold, gnu::noinline]] cursor fail_utf8(const char* at) {
    failure_ = make_error(errc::invalid_utf8, "the text is not valid UTF-8", {}, static_cast<std::uint64_t>(at - begin_));
    return {nullptr, nullptr};
  }

  // The value of four hex digits at `p`, or -1.
  static int hex4(const char* p) noexcept {
    int value = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = p[k];
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        digit = (c | 0x20) - 'a' + 10;
      } else {
        return -1;
      }
      value = value * 16 + digit;
    }
    return value;
  }

  // The escape at c.in ('\\'), written canonically or decoded.
  template <bool Canonical>
  cursor escape(cursor c) {
    const char* in = c.in;
    char* out = c.out;
    if (end_ - in < 2) return fail(in, "not JSON: a string is not closed");
    const char kind = in[1];
    switch (kind) {
      case '"':
      case '\\':
        if constexpr (Canonical) *out++ = '\\';
        *out++ = kind;
        return {in + 2, out};
      case '/': *out++ = '/'; return {in + 2, out};
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        if constexpr (Canonical) {
          *out++ = '\\';
          *out++ = kind;
        } else {
          *out++ = kind == 'b' ? '\b' : kind == 'f' ? '\f' : kind == 'n' ? '\n' : kind == 'r' ? '\r' : '\t';
        }
        return {in + 2, out};
      case 'u': break;
      default: return fail(in, "a string has a bad escape");
    }
    const int unit = end_ - in >= 6 ? hex4(in + 2) : -1;
    if (unit < 0) return fail(in, "a string has a bad escape (\\u needs four hex digits)");
    auto code_point = static_cast<std::uint32_t>(unit);
    if (unit >= 0xD800 && unit <= 0xDFFF) {
      const int low = unit <= 0xDBFF && end_ - in >= 12 && in[6] == '\\' && in[7] == 'u' ? hex4(in + 8) : -1;
      if (low < 0xDC00 || low > 0xDFFF) return fail_surrogate(in, unit);
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (static_cast<std::uint32_t>(low) - 0xDC00);
      in += 12;
    } else {
      in += 6;
    }
    if (code_point < 0x80) {
      if constexpr (Canonical) {
        out = write_canonical_ascii(out, static_cast<unsigned char>(code_point));
      } else {
        *out++ = static_cast<char>(code_point);
      }
    } else if (code_point < 0x800) {
      *out++ = static_cast<char>(0xC0 | (code_point >> 6));
      *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
    } else if (code_point < 0x10000) {
      *out++ = static_cast<char>(0xE0 | (code_point >> 12));
      *out++ = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
    } else {
      *out++ = static_cast<char>(0xF0 | (code_point >> 18));
      *out++ = static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
      *out++ = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (code_point & 0x3F));
    }
    return {in, out};
  }

  // ---- numbers

  [[gnu::noinline]] cursor number(cursor c) {
    const char* const start = c.in;
    const char* const end = end_;
    const char* p = start;
    const bool negative = *p == '-';
    if (negative) ++p;
    const char* const integer = p;
    if (p == end || !is_digit(*p)) return fail(start, "a number is malformed");
    p = *p == '0' ? p + 1 : digits_end(p);
    const auto integer_digits = static_cast<std::size_t>(p - integer);
    const char* fraction = p;
    std::size_t fraction_digits = 0;
    std::int64_t exponent = 0;
    bool plain_integer = true;
    if (p != end && *p == '.') {
      ++p;
      fraction = p;
      p = digits_end(p);
      fraction_digits = static_cast<std::size_t>(p - fraction);
      if (fraction_digits == 0) return fail(start, "a number is malformed (no digit after the point)");
      plain_integer = false;
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
      ++p;
      const bool negative_exponent = p != end && *p == '-';
      if (p != end && (*p == '+' || *p == '-')) ++p;
      if (p == end || !is_digit(*p)) return fail(start, "a number is malformed (no digit in the exponent)");
      // Saturated far above any count of digits a text can hold, so that
      // exponent + digits below never changes sign by the cap.
      for (; p != end && is_digit(*p); ++p) exponent = std::min<std::int64_t>(exponent * 10 + (*p - '0'), std::int64_t{1} << 50);
      if (negative_exponent) exponent = -exponent;
      plain_integer = false;
    }
    if (p != end && *p != ',' && *p != ']' && *p != '}' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
      return fail(start, "a number is malformed (a leading zero, or a character that cannot follow it)");
    }

    if (static_cast<std::size_t>(limit_ - c.out) < static_cast<std::size_t>(end - p) + slack + max_es_number_length) {
      c.out = grow(c.out, static_cast<std::size_t>(end - p) + slack + max_es_number_length);
    }
    if (plain_integer && integer_digits <= 15) {  // below 2^53: the digits are the canonical form
      if (integer_digits == 1 && *integer == '0') {
        *c.out++ = '0';  // "-0" too
      } else if (end - start >= 16) {
        store_block(c.out, load_block(start));  // at most 16 characters; the output has slack
        c.out += p - start;
      } else {
        std::memcpy(c.out, start, static_cast<std::size_t>(p - start));
        c.out += p - start;
      }
      return {p, c.out};
    }
    // A number of at most 15 significant digits in the normal range: no
    // other decimal of 15 digits or fewer reads as the same double (15 is
    // DBL_DIG), so its own significant digits are the shortest round-trip
    // digits Number::toString writes, and no conversion is needed.
    if (integer_digits + fraction_digits <= 32) {
      char mantissa[32];
      std::memcpy(mantissa, integer, integer_digits);
      std::memcpy(mantissa + integer_digits, fraction, fraction_digits);
      const auto total = static_cast<int>(integer_digits + fraction_digits);
      int lead = 0;
      while (lead < total && mantissa[lead] == '0') ++lead;
      if (lead == total) {  // zero, in any spelling
        *c.out++ = '0';
        return {p, c.out};
      }
      int last = total;
      while (mantissa[last - 1] == '0') --last;
      const std::int64_t n = static_cast<std::int64_t>(integer_digits) - lead + exponent;  // value = 0.digits * 10^n
      if (last - lead <= 15 && n > -300 && n < 300) {
        c.out = write_es_digits(c.out, negative, mantissa + lead, last - lead, static_cast<int>(n));
        return {p, c.out};
      }
    }
    double number = 0;
    const auto parsed = std::from_chars(start, p, number, std::chars_format::general);
    if (parsed.ec == std::errc::result_out_of_range) {
      // Too large, or too small (zero, as JSON.parse reads it): the decimal
      // exponent of the first significant digit tells which.
      std::int64_t magnitude = exponent;
      if (*integer != '0') {
        magnitude += static_cast<std::int64_t>(integer_digits);
      } else {
        std::size_t zeros = 0;
        while (zeros < fraction_digits && fraction[zeros] == '0') ++zeros;
        magnitude -= static_cast<std::int64_t>(zeros);
      }
      if (magnitude > 0) return fail(start, "a number is beyond the range of a double");
      number = 0;
    } else if (parsed.ec != std::errc() || parsed.ptr != p) {
      return fail(start, "a number is malformed");
    }
    c.out = write_es_number(c.out, number);
    return {p, c.out};
  }

  // Grows the output so that `room` bytes fit after `out`; returns where out
  // is now.
  [[gnu::noinline]] char* grow(char* out, std::size_t room) {
    const auto used = static_cast<std::size_t>(out - base_);
    storage_->resize(std::max(storage_->size() * 2, used + room));
    base_ = storage_->data();
    limit_ = base_ + storage_->size();
    return base_ + used;
  }

  const char* begin_ = nullptr;
  const char* end_ = nullptr;
  canonical_form form_ = canonical_form::relay;
  std::string* storage_ = nullptr;
  char* base_ = nullptr;
  char* limit_ = nullptr;
  bool escaped_ = false;
  std::vector<slot> members_;  // the members of the objects being written, innermost last
  std::size_t member_count_ = 0;
  std::size_t member_capacity_ = 0;  // members_.size()
  std::vector<std::uint64_t> keys_;  // an object's members being sorted
  std::string scratch_;              // an object's text being put in order
  std::string names_;                // decoded member names that had escapes
  std::size_t names_used_ = 0;
  bool names_ready_ = false;
  error failure_;
};

}  // namespace agentctx::json::detail
