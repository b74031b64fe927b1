// Driver of the differential tests of canonical JSON against node
// (tests/json/node/canonical_diff.mjs compares; run_canonical_diff.sh runs
// both and is what ctest calls):
//
//   canonical_node_driver documents [COUNT [SEED]]
//       generates COUNT valid JSON documents (default 100000) and writes each
//       with our RFC 8785 form and our Appendix A (relay) form; node checks
//       them against `canonicalize` and an Appendix A reference;
//   canonical_node_driver numbers [COUNT [SEED]]
//       generates COUNT doubles (default 10000000) plus a fixed list of edge
//       cases and writes json::append_es_number of each; node checks them
//       against String(x).
//
// Everything is generated from SEED by our own generator (xoshiro256**, not
// the standard distributions), so a run is the same on every machine with
// the same C library, and a failure is reproducible from the seed the
// summary prints.
//
// The documents are valid for RFC 8785 by construction: member names are
// unique after unescaping, strings hold no lone surrogates, every number is
// finite (checked with strtod); every nesting level stays under our limit.
// They vary what canonicalization must undo: escapes of every kind (short,
// \u in either case, surrogate pairs, \/), raw UTF-8, number spellings (1.0,
// 1E5, 1e-7, -0, 0.000001, 0.1e1, 100e-2, trailing zeros, exponent leading
// zeros, integers past 2^53 and past 64 bits, decimals of 17 to 110 digits
// including exact midpoints between two doubles), whitespace, deep nesting,
// member names that order differently by UTF-8 bytes and by UTF-16 code
// units (U+E000..U+FFFF next to supplementary characters), null members.
//
// For every eighth document the driver also checks, itself, that the tree
// path (parse + serialize) gives the same bytes as the text path, and that
// canonicalizing a canonical text changes nothing (they cost more than the
// canonicalization itself: one document in eight keeps the ASan run short).
//
// Output (stdout, binary, integers little-endian):
//   "ACJ1" mode        mode 'D' (documents) or 'N' (numbers)
//   'D' u32 count, then per document:
//       u32 length, text; u8 status; u32 length, RFC 8785 form;
//       u32 length, relay form
//     status 0: both forms follow; otherwise the first field holds our error
//     message (1: canonicalization failed, 2: an internal check failed)
//     and the second is empty
//   'N' u32 count, count doubles (8 bytes each, host order), u32 length,
//       our texts joined by '\n'
//   'S' u32 length, a JSON object: the seed and what was generated
//   'E' end of stream
#include "agentctx/json/canonical.hpp"
#include "agentctx/json/writer.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace json = agentctx::json;
using json::canonical_form;

namespace {

constexpr std::uint64_t default_seed = 0x8785'2020'ca70'0001;

// xoshiro256** seeded through splitmix64: one stream on every platform,
// unlike the standard distributions, whose algorithms are unspecified.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) {
    for (std::uint64_t& word : state_) {
      seed += 0x9e3779b97f4a7c15;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }

  /// Uniform enough in [0, n) for test data (n > 0).
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  /// Uniform in [low, high].
  std::int64_t between(std::int64_t low, std::int64_t high) {
    return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low) + 1));
  }
  bool percent(unsigned p) { return below(100) < p; }
  /// Index chosen with the given weights.
  template <std::size_t N>
  std::size_t weighted(const std::array<unsigned, N>& weights) {
    unsigned total = 0;
    for (unsigned w : weights) total += w;
    auto r = static_cast<unsigned>(below(total));
    for (std::size_t i = 0; i < N; ++i) {
      if (r < weights[i]) return i;
      r -= weights[i];
    }
    return N - 1;
  }
  template <class T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }

 private:
  std::uint64_t state_[4];
};

// --- output framing ---------------------------------------------------------

class output {
 public:
  ~output() { flush(); }
  void byte(char c) { buffer_.push_back(c); }
  void u32(std::size_t value) {
    const auto v = static_cast<std::uint32_t>(value);
    const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                           static_cast<char>(v >> 24)};
    buffer_.append(bytes, 4);
  }
  void bytes(std::string_view text) { buffer_.append(text); }
  void field(std::string_view text) {
    u32(text.size());
    bytes(text);
  }
  std::size_t size() const { return buffer_.size(); }
  void flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
      std::fprintf(stderr, "canonical_node_driver: writing to stdout failed: %s\n", std::strerror(errno));
      std::exit(1);
    }
    buffer_.clear();
  }
  /// Ends the stream: the summary record ('S', the JSON text) and the end
  /// mark 'E', flushed.
  void finish(std::string_view summary) {
    byte('S');
    field(summary);
    byte('E');
    flush();
  }

 private:
  std::string buffer_;
};

// --- text helpers -----------------------------------------------------------

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}


void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The shortest round-trip digits of a finite nonzero double as value =
// 0.digits * 10^point (digits without leading or trailing zeros).
struct decimal {
  bool negative = false;
  std::string digits;
  int point = 0;
};

decimal shortest_decimal(double number) {
  char text[40];
  const char* end = std::to_chars(text, text + sizeof text, number, std::chars_format::scientific).ptr;
  decimal d;
  const char* p = text;
  if (*p == '-') {
    d.negative = true;
    ++p;
  }
  for (; *p != 'e'; ++p) {
    if (*p != '.') d.digits.push_back(*p);
  }
  d.point = std::atoi(std::string(p + 1, end).c_str()) + 1;
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  return d;
}

// --- documents ----------------------------------------------------------------

// What the generated documents contained, for the summary.
struct document_stats {
  std::uint64_t documents = 0, bytes = 0, deep_documents = 0, deepest = 0, scalar_documents = 0;
  std::uint64_t objects = 0, members = 0, null_members = 0, arrays = 0, elements = 0, null_elements = 0;
  std::uint64_t strings = 0, keys_beyond_bmp = 0, keys_e000_ffff = 0, keys_mixed_orders = 0;
  std::uint64_t raw_non_ascii = 0, short_escapes = 0, u_escapes = 0, surrogate_pair_escapes = 0, escaped_slashes = 0;
  std::map<std::string, std::uint64_t> numbers;  // by kind of spelling
};

class document_generator {
 public:
  document_generator(random_source& random, document_stats& stats) : random_(random), stats_(stats) {}

  // One document, into `out` (cleared first).
  void generate(std::string& out) {
    text_ = &out;
    out.clear();
    space();
    const std::size_t kind = random_.weighted(std::array<unsigned, 4>{85, 4, 5, 6});
    if (kind == 0 && random_.percent(60)) {
      object(0);
    } else if (kind == 0) {
      array(0);
    } else if (kind == 1) {
      deep_chain();
    } else if (kind == 2) {
      ++stats_.scalar_documents;
      value(max_random_depth);
    } else {
      wide_object();
    }
    space();
    ++stats_.documents;
    stats_.bytes += out.size();
  }

 private:
  static constexpr int max_random_depth = 7;

  std::string& text() { return *text_; }

  void space() {
    static const char* const spaces[] = {" ", "\n", "\t", "\r\n", "  ", " \t\n\r ", "\n    ", "\r"};
    if (random_.percent(22)) text() += random_.pick(spaces);
  }

  // --- strings

  // A code point from every range that matters to escaping, UTF-8 length or
  // UTF-16 order.
  char32_t code_point() {
    switch (random_.weighted(std::array<unsigned, 10>{44, 5, 5, 1, 8, 8, 10, 2, 12, 5})) {
      case 0: return static_cast<char32_t>(random_.between(0x20, 0x7E));
      case 1: return static_cast<char32_t>(random_.between(0x00, 0x1F));
      case 2: return random_.pick({U'"', U'\\', U'/'});
      case 3: return 0x7F;
      case 4: return static_cast<char32_t>(random_.between(0x80, 0x7FF));
      case 5: return static_cast<char32_t>(random_.between(0x800, 0xD7FF));
      case 6: return high_bmp();
      case 7: return random_.pick({U'\u2028', U'\u2029', U'\u00A0', U'\u0085'});
      case 8: return astral();
      default: return random_.pick({U'\uFFFF', U'\U00010000', U'\uE000', U'\U0010FFFF', U'\uFFFD', U'\U0001F600'});
    }
  }
  char32_t high_bmp() {  // U+E000..U+FFFF: after the surrogates in UTF-16, before them in UTF-8
    if (random_.percent(40)) {
      return random_.pick({U'\uE000', U'\uF8FF', U'\uFB33', U'\uFEFF', U'\uFFFD', U'\uFFFE', U'\uFFFF'});
    }
    return static_cast<char32_t>(random_.between(0xE000, 0xFFFF));
  }
  char32_t astral() {
    if (random_.percent(40)) {
      return random_.pick({U'\U00010000', U'\U0001D11E', U'\U0001F600', U'\U0010FFFF', U'\U00020000'});
    }
    return static_cast<char32_t>(random_.between(0x10000, 0x10FFFF));
  }

  void u_escape(unsigned unit) {
    static constexpr char lower[] = "0123456789abcdef";
    static constexpr char upper[] = "0123456789ABCDEF";
    text() += "\\u";
    const bool mixed = random_.percent(15);
    const char* digits = random_.percent(50) ? upper : lower;
    for (int shift = 12; shift >= 0; shift -= 4) {
      text().push_back((mixed && random_.percent(50) ? upper : digits)[(unit >> shift) & 0xF]);
    }
  }

  // Writes `cp` inside a string literal, spelled one of the ways JSON allows.
  void spell(char32_t cp) {
    const char* short_form = nullptr;
    switch (cp) {
      case U'"': short_form = "\\\""; break;
      case U'\\': short_form = "\\\\"; break;
      case U'/': short_form = "\\/"; break;
      case U'\b': short_form = "\\b"; break;
      case U'\f': short_form = "\\f"; break;
      case U'\n': short_form = "\\n"; break;
      case U'\r': short_form = "\\r"; break;
      case U'\t': short_form = "\\t"; break;
      default: break;
    }
    const bool must_escape = cp < 0x20 || cp == U'"' || cp == U'\\';
    if (!must_escape && random_.percent(65)) {
      append_utf8(text(), cp);
      if (cp >= 0x80) ++stats_.raw_non_ascii;
    } else if (short_form != nullptr && random_.percent(60)) {
      text() += short_form;
      ++(cp == U'/' ? stats_.escaped_slashes : stats_.short_escapes);
    } else if (cp >= 0x10000) {
      const auto offset = static_cast<unsigned>(cp - 0x10000);
      u_escape(0xD800 + (offset >> 10));
      u_escape(0xDC00 + (offset & 0x3FF));
      ++stats_.surrogate_pair_escapes;
    } else {
      u_escape(static_cast<unsigned>(cp));
      ++stats_.u_escapes;
    }
  }

  void string_literal(const std::u32string& content) {
    text().push_back('"');
    for (char32_t cp : content) spell(cp);
    text().push_back('"');
    ++stats_.strings;
  }

  std::u32string random_content(std::size_t max_length) {
    std::u32string content;
    const auto length = random_.percent(4) ? random_.below(max_length * 6 + 1) : random_.below(max_length + 1);
    for (std::uint64_t i = 0; i < length; ++i) content.push_back(code_point());
    return content;
  }

  // --- member names

  enum class name_style { random, family, special };

  // A member name. In a family, names share a prefix and then differ in one
  // code point from a class chosen per name, so that names beginning with
  // U+E000..U+FFFF and supplementary characters meet in one object.
  std::u32string member_name(name_style style, const std::u32string& prefix) {
    static const std::u32string specials[] = {
        U"", U"a", U"ab", U"b", U"__proto__", U"constructor", U"toString", U"1", U"10", U"2", U"-1",
        U"4294967295", U"4294967296", U"\u00e9", U"e\u0301", U"\uFFFF", U"\uE000", U"\U00010000",
        U"\U0010FFFF", U"\U0001F600", U"\uFB33", U"\u20AC", U"\r", U"\u0080", U"\u00F6", U"a\u001F",
        U"\uFFFF\U00010000", U"\U00010000\uFFFF", U"\uFFFFa", U"\U00010000a"};
    switch (style) {
      case name_style::special: return random_.pick(specials);
      case name_style::random: return random_content(6);
      case name_style::family: {
        std::u32string name = prefix;
        switch (random_.below(6)) {
          case 0: name.push_back(static_cast<char32_t>(random_.between(0x20, 0x7E))); break;
          case 1: name.push_back(static_cast<char32_t>(random_.between(0x80, 0x7FF))); break;
          case 2: name.push_back(static_cast<char32_t>(random_.between(0x800, 0xD7FF))); break;
          case 3:
          case 4: name.push_back(high_bmp()); break;
          default: name.push_back(astral()); break;
        }
        const auto suffix = random_.below(3);
        for (std::uint64_t i = 0; i < suffix; ++i) name.push_back(code_point());
        return name;
      }
    }
    return {};
  }

  // --- values

  void value(int depth) {
    const bool containers = depth < max_random_depth;
    const unsigned container_weight = containers ? static_cast<unsigned>(std::max(0, 24 - 6 * depth)) : 0;
    switch (random_.weighted(std::array<unsigned, 6>{10, 6, 26, 26, container_weight, container_weight})) {
      case 0: text() += "null"; break;
      case 1: text() += random_.percent(50) ? "true" : "false"; break;
      case 2: number(); break;
      case 3: string_literal(random_content(12)); break;
      case 4: array(depth); break;
      default: object(depth); break;
    }
  }

  // A value for an object member: null more often, to exercise Appendix A's rule.
  void member_value(int depth) {
    if (random_.percent(18)) {
      text() += "null";
      ++stats_.null_members;
    } else {
      value(depth);
    }
  }

  void array(int depth) {
    ++stats_.arrays;
    text().push_back('[');
    space();
    const auto count = random_.percent(4) ? random_.between(8, 30) : random_.between(0, 5);
    for (std::int64_t i = 0; i < count; ++i) {
      if (i > 0) {
        text().push_back(',');
        space();
      }
      if (random_.percent(10)) {
        text() += "null";
        ++stats_.null_elements;
      } else {
        value(depth + 1);
      }
      space();
      ++stats_.elements;
    }
    text().push_back(']');
  }

  void object(int depth, std::int64_t count = -1) {
    ++stats_.objects;
    const auto style = static_cast<name_style>(random_.weighted(std::array<unsigned, 3>{45, 40, 15}));
    std::u32string prefix;
    if (style == name_style::family) {
      const auto length = random_.below(3);
      for (std::uint64_t i = 0; i < length; ++i) prefix.push_back(random_.percent(70) ? U'k' : code_point());
    }
    if (count < 0) count = random_.percent(4) ? random_.between(8, 24) : random_.between(0, 6);
    names_seen_.clear();
    std::vector<std::u32string> names;
    for (std::int64_t i = 0; i < count; ++i) {
      // Unique after unescaping: RFC 8785 refuses duplicate names. A clash
      // is retried a few times, then the member is left out.
      for (int attempt = 0; attempt < 6; ++attempt) {
        std::u32string name = member_name(attempt < 3 ? style : name_style::random, prefix);
        std::string utf8;
        for (char32_t cp : name) append_utf8(utf8, cp);
        if (names_seen_.insert(utf8).second) {
          names.push_back(std::move(name));
          break;
        }
      }
    }
    count_name_kinds(names);
    text().push_back('{');
    space();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) {
        text().push_back(',');
        space();
      }
      string_literal(names[i]);
      space();
      text().push_back(':');
      space();
      member_value(depth + 1);  // recursion reuses names_seen_: the names are copied above
      space();
      ++stats_.members;
    }
    text().push_back('}');
  }

  void count_name_kinds(const std::vector<std::u32string>& names) {
    bool beyond_bmp = false, high = false;
    for (const std::u32string& name : names) {
      for (char32_t cp : name) {
        if (cp >= 0x10000) {
          beyond_bmp = true;
          ++stats_.keys_beyond_bmp;
          break;
        }
      }
      for (char32_t cp : name) {
        if (cp >= 0xE000 && cp <= 0xFFFF) {
          high = true;
          ++stats_.keys_e000_ffff;
          break;
        }
      }
    }
    if (beyond_bmp && high) ++stats_.keys_mixed_orders;
  }

  // An object with many members drawn from the families: the sort itself.
  void wide_object() { object(0, random_.between(20, 60)); }

  // Arrays and objects nested 20 to 1000 levels deep (simdjson's limit, and
  // ours, is a little above 1000), with siblings at some levels. Written as a
  // loop: the generator's own recursion stays shallow.
  void deep_chain() {
    ++stats_.deep_documents;
    // Mostly moderate depths, some near the limit.
    const auto depth = random_.percent(15) ? random_.between(900, 1000) : random_.between(20, 200);
    stats_.deepest = std::max<std::uint64_t>(stats_.deepest, static_cast<std::uint64_t>(depth));
    std::string closers;
    for (std::int64_t level = 0; level < depth; ++level) {
      if (random_.percent(50)) {
        ++stats_.arrays;
        text().push_back('[');
        if (random_.percent(20)) {
          value(max_random_depth);
          text().push_back(',');
        }
        closers.push_back(random_.percent(15) ? '1' : ']');  // '1': a sibling after the child
      } else {
        ++stats_.objects;
        text().push_back('{');
        if (random_.percent(20)) {  // a sibling before the child, named apart from "\uFFFF"
          string_literal(random_.percent(50) ? U"\U0001F600" : U"s");
          text().push_back(':');
          member_value(max_random_depth);
          text().push_back(',');
        }
        string_literal(random_.percent(50) ? U"\uFFFF" : U"k");
        text().push_back(':');
        space();
        closers.push_back(random_.percent(15) ? '2' : '}');  // '2': a null sibling after the child
      }
    }
    value(max_random_depth);
    for (auto it = closers.rbegin(); it != closers.rend(); ++it) {
      if (*it == '1') {
        text() += ",true]";
      } else if (*it == '2') {
        text() += ",\"\\uD800\\uDC00\":null}";
        ++stats_.null_members;
      } else {
        text().push_back(*it);
      }
    }
  }

  // --- numbers

  void count_number(const char* kind) { ++stats_.numbers[kind]; }

  // `decimal` spelled one of the ways JSON allows: plain or with an
  // exponent, the point anywhere, trailing zeros, 'e' or 'E', '+' or not,
  // leading zeros in the exponent.
  void spell(const decimal& d) {
    std::string& out = text();
    if (d.negative) out.push_back('-');
    const auto k = static_cast<int>(d.digits.size());
    const int n = d.point;
    const auto trailing_zeros = [&] {
      if (random_.percent(20)) out.append(static_cast<std::size_t>(random_.between(1, 4)), '0');
    };
    if (-25 < n && n <= 30 && random_.percent(50)) {  // plain
      if (n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += d.digits;
        trailing_zeros();
      } else if (n >= k) {
        out += d.digits;
        out.append(static_cast<std::size_t>(n - k), '0');
        if (random_.percent(20)) {
          out += ".0";
          trailing_zeros();
        }
      } else {
        out.append(d.digits, 0, static_cast<std::size_t>(n));
        out.push_back('.');
        out.append(d.digits, static_cast<std::size_t>(n));
        trailing_zeros();
      }
      return;
    }
    // Mantissa with `split` digits before the point (0: "0.ddd", also
    // with leading zeros after the point), exponent to match.
    int split = static_cast<int>(random_.between(0, k));
    if (random_.percent(30)) split = 1;
    int leading_zeros = split == 0 && random_.percent(30) ? static_cast<int>(random_.between(1, 5)) : 0;
    if (split == 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(leading_zeros), '0');
      out += d.digits;
      trailing_zeros();
    } else {
      out.append(d.digits, 0, static_cast<std::size_t>(split));
      if (split < k) {
        out.push_back('.');
        out.append(d.digits, static_cast<std::size_t>(split));
        trailing_zeros();
      } else if (random_.percent(20)) {
        out += ".0";
      }
    }
    const int exponent = n - split + leading_zeros;
    out.push_back(random_.percent(50) ? 'e' : 'E');
    if (exponent < 0) {
      out.push_back('-');
    } else if (random_.percent(40)) {
      out.push_back('+');
    }
    if (random_.percent(10)) out.append(static_cast<std::size_t>(random_.between(1, 2)), '0');
    out += std::to_string(std::abs(exponent));
  }

  // Random digits, no leading zero, no trailing zero.
  std::string random_digits(int count) {
    std::string digits;
    for (int i = 0; i < count; ++i) digits.push_back(static_cast<char>('0' + random_.below(10)));
    digits[0] = static_cast<char>('1' + random_.below(9));
    if (digits.back() == '0') digits.back() = static_cast<char>('1' + random_.below(9));
    return digits;
  }

  // A finite value: strtod (correctly rounded, as JSON.parse is) confirms it.
  static bool finite(const decimal& d) {
    const std::string text = "0." + d.digits + "e" + std::to_string(d.point);
    return std::isfinite(std::strtod(text.c_str(), nullptr));
  }

  double random_double() {
    for (;;) {
      const double x = std::bit_cast<double>(random_.next());
      if (std::isfinite(x) && x != 0) return x;
    }
  }

  void number() {
    switch (random_.weighted(std::array<unsigned, 12>{12, 12, 6, 6, 6, 6, 12, 8, 10, 4, 4, 14})) {
      case 0: {  // small integers
        count_number("small integer");
        const auto v = random_.between(-1000, 1000);
        text() += (v == 0 && random_.percent(50)) ? "-0" : std::to_string(v);
        return;
      }
      case 1: {  // any double from its bits, re-spelled
        count_number("random double");
        spell(shortest_decimal(random_double()));
        return;
      }
      case 2: {  // integers around 2^53, 2^63, 2^64 and the powers of ten 1e15..1e22
        count_number("integer near 2^53/2^63/2^64/1e21");
        static const char* const bases[] = {"9007199254740992", "18014398509481984", "9223372036854775808",
                                            "18446744073709551616", "1000000000000000", "100000000000000000000",
                                            "1000000000000000000000", "10000000000000000000000"};
        const char* base = random_.pick(bases);
        // base + offset, with offset in [-40, 40], by decimal arithmetic on the text.
        std::string digits = base;
        const auto offset = random_.between(-40, 40);
        long carry = static_cast<long>(offset);
        for (auto it = digits.rbegin(); it != digits.rend() && carry != 0; ++it) {
          long digit = (*it - '0') + carry % 10;
          carry /= 10;
          if (digit < 0) {
            digit += 10;
            carry -= 1;
          } else if (digit > 9) {
            digit -= 10;
            carry += 1;
          }
          *it = static_cast<char>('0' + digit);
        }
        if (digits[0] == '0') digits.erase(0, 1);  // 1000... - 40 lost a digit
        if (random_.percent(40)) text().push_back('-');
        if (random_.percent(70)) {
          text() += digits;
        } else {
          decimal d{false, digits, static_cast<int>(digits.size())};
          while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
          spell(d);
        }
        return;
      }
      case 3: {  // integers of 19 to 40 digits (beyond 64 bits from 20 on)
        count_number("long integer (19-40 digits)");
        if (random_.percent(40)) text().push_back('-');
        text() += random_digits(static_cast<int>(random_.between(19, 40)));
        return;
      }
      case 4: {  // short decimals: 0.1, 2.5e-7, 1E5, 0.000001
        count_number("short decimal");
        decimal d{random_.percent(30), random_digits(static_cast<int>(random_.between(1, 4))),
                  static_cast<int>(random_.between(-12, 25))};
        spell(d);
        return;
      }
      case 5: {  // 17 to 40 significant digits anywhere in range: rounding
        count_number("long decimal (17-40 digits)");
        for (;;) {
          decimal d{random_.percent(50), random_digits(static_cast<int>(random_.between(17, 40))),
                    static_cast<int>(random_.between(-330, 309))};
          if (!finite(d)) continue;
          spell(d);
          return;
        }
      }
      case 6: {  // powers of ten and their neighbours, the edges of the plain form
        count_number("power of ten or neighbour");
        double x = std::pow(10.0, static_cast<double>(random_.between(-20, 25)));
        if (random_.percent(50)) x = std::strtod(("1e" + std::to_string(random_.between(-323, 308))).c_str(), nullptr);
        const auto steps = random_.between(-3, 3);
        for (std::int64_t i = 0; i < std::abs(steps); ++i) {
          x = std::nextafter(x, steps < 0 ? 0.0 : std::numeric_limits<double>::infinity());
        }
        if (x == 0 || !std::isfinite(x)) x = 1e-6;
        decimal d = shortest_decimal(x);
        d.negative = random_.percent(30);
        spell(d);
        return;
      }
      case 7: {  // exact and near midpoints between two doubles (ties to even)
        count_number("midpoint between doubles");
        midpoint();
        return;
      }
      case 8: {  // zeros in every spelling
        count_number("zero");
        static const char* const zeros[] = {"0", "-0", "0.0", "-0.0", "0e0", "0E+5", "-0e-5", "0.000", "0e-400",
                                            "-0.0E+00", "0.0e1000"};
        text() += random_.pick(zeros);
        return;
      }
      case 9: {  // the ends of the range
        count_number("extreme");
        static const char* const extremes[] = {
            "5e-324", "4.9406564584124654e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "1e-400",
            "2.2250738585072014e-308", "2.2250738585072011e-308", "2.225073858507201e-308",
            "1.7976931348623157e308", "1.7976931348623158e+308", "1.7976931348623157081e308", "1e308",
            "0.1e-323", "1e-324", "3e-324", "1E-7", "1e-7", "0.000001", "0.0000001", "1e21", "1E+21", "1e20",
            "999999999999999999999", "999999999999999900000", "0.000000999999999999999999"};
        if (random_.percent(30)) text().push_back('-');
        if (random_.percent(5)) {  // the largest double written out: 309 digits
          text() += "17976931348623157";
          text().append(292, '0');
        } else {
          text() += random_.pick(extremes);
        }
        return;
      }
      case 10: {  // k * 0.1 and the like, computed in double arithmetic
        count_number("0.1*k arithmetic");
        const double x = static_cast<double>(random_.between(1, 100000)) * random_.pick({0.1, 0.01, 0.001, 1e-7, 1e19});
        spell(shortest_decimal(random_.percent(30) ? -x : x));
        return;
      }
      default: {  // plain numbers of moderate size, as most JSON has
        count_number("plain fraction");
        const auto whole = random_.between(0, 100000);
        text() += (random_.percent(30) ? "-" : "") + std::to_string(whole) + "." +
                  std::to_string(random_.between(0, 999999));
        return;
      }
    }
  }

  // The exact decimal value halfway between a double and the next one (or
  // that value cut to 25 digits, a near tie), from an x87 or binary128 long
  // double, which holds the midpoint exactly.
  void midpoint() {
    if constexpr (std::numeric_limits<long double>::digits >= 64) {
      for (;;) {
        const int binary_exponent = static_cast<int>(random_.between(-80, 80));
        const double mantissa = 1.0 + static_cast<double>(random_.next() >> 12) * 0x1p-52;
        const double x = std::ldexp(mantissa, binary_exponent);
        const double next = std::nextafter(x, std::numeric_limits<double>::infinity());
        const long double middle = (static_cast<long double>(x) + static_cast<long double>(next)) / 2;
        char text[256];
        const int precision = random_.percent(70) ? 140 : 25;
        std::snprintf(text, sizeof text, "%.*Le", precision, middle);
        std::string_view s(text);
        const std::size_t e = s.find('e');
        std::string mantissa_text(s.substr(0, e));
        while (mantissa_text.back() == '0') mantissa_text.pop_back();
        if (mantissa_text.back() == '.') mantissa_text.pop_back();
        decimal d;
        d.negative = random_.percent(30);
        for (char c : mantissa_text) {
          if (c != '.') d.digits.push_back(c);
        }
        d.point = std::atoi(std::string(s.substr(e + 1)).c_str()) + 1;
        if (d.digits.size() > 200) continue;
        spell(d);
        return;
      }
    } else {
      spell(shortest_decimal(random_double()));
    }
  }

  random_source& random_;
  document_stats& stats_;
  std::string* text_ = nullptr;
  std::unordered_set<std::string> names_seen_;
};

// Our two forms of `doc`, or why not. With `self_check`, also checks that the
// tree path agrees with the text path and that canonical text is a fixed point.
struct our_forms {
  int status = 0;
  std::string jcs, relay;
};

our_forms canonicalize_both(json::canonicalizer& c, std::string_view doc, bool self_check, std::uint64_t& self_checks) {
  our_forms out;
  const auto fail = [&](int status, std::string message) {
    out.status = status;
    out.jcs = std::move(message);
    out.relay.clear();
    return out;
  };
  auto jcs = c.canonicalize(doc, canonical_form::jcs);
  if (!jcs) return fail(1, "RFC 8785 form: " + jcs.error().describe());
  out.jcs = *jcs;
  auto relay = c.canonicalize(doc, canonical_form::relay);
  if (!relay) return fail(1, "relay form: " + relay.error().describe());
  out.relay = *relay;
  if (!self_check) return out;

  auto tree = c.parse(doc);
  if (!tree) return fail(2, "parse() refused what canonicalize() took: " + tree.error().describe());
  for (canonical_form form : {canonical_form::jcs, canonical_form::relay}) {
    const std::string& expected = form == canonical_form::jcs ? out.jcs : out.relay;
    const char* name = form == canonical_form::jcs ? "RFC 8785" : "relay";
    auto serialized = c.serialize(*tree, form);
    if (!serialized || *serialized != expected) {
      return fail(2, std::string("serialize(parse(doc)) differs from canonicalize(doc) in the ") + name +
                         " form: " + (serialized ? std::string(*serialized) : serialized.error().describe()));
    }
    auto again = c.canonicalize(expected, form);
    if (!again || *again != expected) {
      return fail(2, std::string("canonicalizing the ") + name + " form changed it: " +
                         (again ? std::string(*again) : again.error().describe()));
    }
  }
  // Appendix A of the RFC 8785 form is Appendix A of the document.
  auto relay_of_jcs = c.canonicalize(out.jcs, canonical_form::relay);
  if (!relay_of_jcs || *relay_of_jcs != out.relay) return fail(2, "the relay form of the RFC 8785 form differs");
  self_checks += 6;
  return out;
}

int run_documents(std::uint64_t count, std::uint64_t seed) {
  random_source random(seed);
  document_stats stats;
  document_generator generator(random, stats);
  json::canonicalizer c;
  output out;
  out.bytes("ACJ1D");
  std::string doc;
  std::uint64_t self_checks = 0, failures = 0;
  std::uint64_t done = 0;
  while (done < count) {
    const auto batch = std::min<std::uint64_t>(count - done, 2000);
    out.byte('D');
    out.u32(batch);
    for (std::uint64_t i = 0; i < batch; ++i) {
      generator.generate(doc);
      const our_forms forms = canonicalize_both(c, doc, (done + i) % 8 == 0, self_checks);
      if (forms.status != 0) ++failures;
      out.field(doc);
      out.byte(static_cast<char>(forms.status));
      out.field(forms.jcs);
      out.field(forms.relay);
    }
    done += batch;
    out.flush();
  }

  std::string summary;
  json::writer w(summary);
  w.begin_object();
  w.key("seed").value(hex(seed));
  w.key("documents").value(stats.documents);
  w.key("bytes").value(stats.bytes);
  w.key("self_checks").value(self_checks);
  w.key("our_failures").value(failures);
  w.key("deep_documents").value(stats.deep_documents);
  w.key("deepest").value(stats.deepest);
  w.key("scalar_documents").value(stats.scalar_documents);
  w.key("objects").value(stats.objects);
  w.key("members").value(stats.members);
  w.key("null_members").value(stats.null_members);
  w.key("arrays").value(stats.arrays);
  w.key("null_elements").value(stats.null_elements);
  w.key("strings").value(stats.strings);
  w.key("names_beyond_bmp").value(stats.keys_beyond_bmp);
  w.key("names_e000_ffff").value(stats.keys_e000_ffff);
  w.key("objects_with_both").value(stats.keys_mixed_orders);
  w.key("raw_non_ascii").value(stats.raw_non_ascii);
  w.key("short_escapes").value(stats.short_escapes);
  w.key("escaped_slashes").value(stats.escaped_slashes);
  w.key("u_escapes").value(stats.u_escapes);
  w.key("surrogate_pair_escapes").value(stats.surrogate_pair_escapes);
  w.key("numbers").begin_object();
  for (const auto& [kind, n] : stats.numbers) w.key(kind).value(n);
  w.end_object();
  w.end_object();
  out.finish(summary);
  return 0;
}

// --- numbers ------------------------------------------------------------------

class number_source {
 public:
  explicit number_source(random_source& random) : random_(random) {}

  // The fixed edge cases: both zeros, subnormal and normal extremes, the
  // powers of ten and of two with their neighbours, the edges of the plain
  // form (1e21, 1e-6, 1e-7), integers around 2^53.
  std::vector<double> edge_cases() {
    std::vector<double> out;
    const double inf = std::numeric_limits<double>::infinity();
    const auto with_neighbours = [&](double x, int steps) {
      if (!std::isfinite(x)) return;
      out.push_back(x);
      double up = x, down = x;
      for (int i = 0; i < steps; ++i) {
        up = std::nextafter(up, inf);
        down = std::nextafter(down, -inf);
        if (std::isfinite(up)) out.push_back(up);
        if (std::isfinite(down)) out.push_back(down);
      }
    };
    out.push_back(0.0);
    out.push_back(-0.0);
    with_neighbours(std::numeric_limits<double>::denorm_min(), 64);
    with_neighbours(std::numeric_limits<double>::min(), 64);  // smallest normal; below it the largest subnormals
    with_neighbours(std::numeric_limits<double>::max(), 64);
    with_neighbours(-std::numeric_limits<double>::max(), 64);
    for (int e = -325; e <= 309; ++e) {
      with_neighbours(std::strtod(("1e" + std::to_string(e)).c_str(), nullptr), 16);
      for (int digit = 2; digit <= 9; ++digit) {
        with_neighbours(std::strtod((std::to_string(digit) + "e" + std::to_string(e)).c_str(), nullptr), 2);
      }
    }
    for (int e = -1074; e <= 1023; ++e) with_neighbours(std::ldexp(1.0, e), 4);
    for (double x : {1e21, 1e-6, 1e-7, 1e20, 1e22, 1e-5}) with_neighbours(x, 4096);
    for (std::int64_t i = -4096; i <= 4096; ++i) {
      out.push_back(static_cast<double>((std::int64_t{1} << 53) + i));
      out.push_back(-static_cast<double>((std::int64_t{1} << 53) + i));
    }
    const std::size_t n = out.size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(-out[i]);
    return out;
  }

  // Category of the i-th of `count` generated numbers: a fixed share each.
  struct category {
    const char* name;
    unsigned share;  // of 100
  };
  static constexpr category categories[] = {
      {"random bit patterns", 40},
      {"subnormals", 6},
      {"near powers of ten (nextafter)", 8},
      {"near the plain-form edges 1e21, 1e-6, 1e-7", 6},
      {"integers near 2^53, 2^63, 2^64", 6},
      {"random integers", 10},
      {"short decimals (strtod of 1-7 digits)", 12},
      {"0.1*k and k/10^n arithmetic", 8},
      {"random magnitudes, all exponents", 4},
  };

  double generate(std::size_t category_index) {
    const double inf = std::numeric_limits<double>::infinity();
    double x = 0;
    switch (category_index) {
      case 0:
        for (;;) {
          x = std::bit_cast<double>(random_.next());
          if (std::isfinite(x)) return x;
        }
      case 1: return std::bit_cast<double>((random_.next() & 0x800F'FFFF'FFFF'FFFF));
      case 2: {
        x = std::strtod(("1e" + std::to_string(random_.between(-323, 308))).c_str(), nullptr);
        x *= static_cast<double>(random_.between(1, 9));
        const auto steps = random_.between(-50, 50);
        for (std::int64_t i = 0; i < std::abs(steps) && std::isfinite(x); ++i) {
          x = std::nextafter(x, steps < 0 ? 0.0 : inf);
        }
        if (!std::isfinite(x)) x = 1;
        break;
      }
      case 3: {
        static const double edges[] = {1e21, 1e-6, 1e-7};
        const double edge = random_.pick(edges);
        if (random_.percent(50)) {  // anywhere from 0.66 to 1.5 times the edge
          x = edge * (0.66 + 0.84 * static_cast<double>(random_.next() >> 11) * 0x1p-53);
        } else {  // within 64 ulps of it
          x = edge;
          const auto steps = random_.between(-64, 64);
          for (std::int64_t i = 0; i < std::abs(steps); ++i) x = std::nextafter(x, steps < 0 ? 0.0 : inf);
        }
        break;
      }
      case 4: {
        static const double bases[] = {0x1p53, 0x1p63, 0x1p64, 0x1p52, 0x1p54};
        const double base = random_.pick(bases);
        x = base + static_cast<double>(random_.between(-1'000'000, 1'000'000)) * (base > 0x1p54 ? 4096.0 : 1.0);
        break;
      }
      case 5: {
        const auto bits = random_.between(1, 64);
        const std::uint64_t v = bits == 64 ? random_.next() : random_.next() & ((std::uint64_t{1} << bits) - 1);
        x = static_cast<double>(v);
        break;
      }
      case 6: {
        const auto digits = random_.between(1, 7);
        std::string text = std::to_string(random_.below(static_cast<std::uint64_t>(std::pow(10, digits))));
        text += "e" + std::to_string(random_.between(-30, 30));
        x = std::strtod(text.c_str(), nullptr);
        break;
      }
      case 7: {
        const auto k = static_cast<double>(random_.between(1, 1'000'000));
        switch (random_.below(4)) {
          case 0: x = 0.1 * k; break;
          case 1: x = k / 10.0; break;
          case 2: x = k * 0.01; break;
          default: x = k / std::pow(10.0, static_cast<double>(random_.between(1, 20))); break;
        }
        break;
      }
      default: {
        const double mantissa = 1.0 + static_cast<double>(random_.next() >> 12) * 0x1p-52;
        x = std::ldexp(mantissa, static_cast<int>(random_.between(-1074, 1023)));
        if (!std::isfinite(x)) x = 0.5;
        break;
      }
    }
    return category_index == 0 || random_.percent(50) ? x : -x;
  }

 private:
  random_source& random_;
};

int run_numbers(std::uint64_t count, std::uint64_t seed) {
  random_source random(seed);
  number_source source(random);
  output out;
  out.bytes("ACJ1N");
  std::vector<double> batch;
  std::string texts;
  std::uint64_t total = 0;
  const auto send = [&] {
    out.byte('N');
    out.u32(batch.size());
    out.bytes(std::string_view(reinterpret_cast<const char*>(batch.data()), batch.size() * sizeof(double)));
    out.field(texts);
    out.flush();
    total += batch.size();
    batch.clear();
    texts.clear();
  };
  const auto add = [&](double x) {
    if (!batch.empty()) texts.push_back('\n');
    json::append_es_number(texts, x);
    batch.push_back(x);
    if (batch.size() == 65536) send();
  };

  const std::vector<double> edges = source.edge_cases();
  for (double x : edges) add(x);

  std::string summary;
  json::writer w(summary);
  w.begin_object();
  w.key("seed").value(hex(seed));
  w.key("edge cases").value(edges.size());
  // The categories take their shares of `count` in turn, interleaved.
  std::uint64_t per_category[std::size(number_source::categories)] = {};
  std::uint64_t produced = 0;
  std::size_t cursor = 0;
  std::uint64_t slots[100];
  for (std::size_t i = 0, at = 0; i < std::size(number_source::categories); ++i) {
    for (unsigned j = 0; j < number_source::categories[i].share; ++j) slots[at++] = i;
  }
  static_assert([] {
    unsigned total_share = 0;
    for (const auto& c : number_source::categories) total_share += c.share;
    return total_share == 100;
  }());
  for (; produced < count; ++produced) {
    const auto category = static_cast<std::size_t>(slots[cursor]);
    cursor = (cursor + 1) % 100;
    add(source.generate(category));
    ++per_category[category];
  }
  if (!batch.empty()) send();
  for (std::size_t i = 0; i < std::size(number_source::categories); ++i) {
    w.key(number_source::categories[i].name).value(per_category[i]);
  }
  w.key("total").value(total);
  w.end_object();
  out.finish(summary);
  return 0;
}

std::uint64_t parse_count(const char* text) {
  char* end = nullptr;
  errno = 0;
  const auto value = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    std::fprintf(stderr, "canonical_node_driver: not a number: %s\n", text);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (argc > 4 || (mode != "documents" && mode != "numbers")) {
    std::fprintf(stderr, "usage: canonical_node_driver documents|numbers [COUNT [SEED]] | node canonical_diff.mjs\n");
    return 2;
  }
  const bool documents = mode == "documents";
  const std::uint64_t count = argc > 2 ? parse_count(argv[2]) : (documents ? 100'000 : 10'000'000);
  const std::uint64_t seed = argc > 3 ? parse_count(argv[3]) : default_seed;
  return documents ? run_documents(count, seed) : run_numbers(count, seed);
}
