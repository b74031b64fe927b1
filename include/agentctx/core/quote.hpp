// agentctx/core/quote.hpp: a piece of untrusted text, quoted for an error
// message or a log line.
//
//   fail(errc::invalid_argument, "agent name " + quote_for_message(name) + " is too long");
//   // agent name "aaaaaaaaaa...aaa..." is too long
//
// The result is always one line of valid UTF-8, whatever the input: the text
// in double quotes, '"' and '\' escaped with a backslash, \n \r \t as
// themselves, other control characters, DEL and bytes that are not UTF-8 as
// \xNN, and the characters that reorder or hide text on a terminal (bidi
// controls U+202A..U+202E and U+2066..U+2069, zero-width and joiner
// characters U+200B..U+200F and U+2060..U+2064, U+FEFF, C1 controls) as
// \uNNNN. With quote_style::ascii every byte outside printable ASCII is \xNN
// (for names, where a look-alike letter must show). At most `max_bytes` of
// the input are shown, cut at a character boundary, and "..." marks a cut.
// escape_for_message() is the same without the quotes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agentctx/core/error.hpp"
#include "agentctx/core/utf8.hpp"

namespace agentctx {

enum class quote_style : std::uint8_t {
  text,   ///< printable UTF-8 shown as it is
  ascii,  ///< every byte outside printable ASCII as \xNN
};

namespace detail {

/// True for the code points quote_for_message escapes in quote_style::text.
constexpr bool hides_or_reorders(std::uint32_t cp) noexcept {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

inline void append_hex_escape(std::string& out, char kind, std::uint32_t value, int digits) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '\\';
  out += kind;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += hex[(value >> shift) & 0xF];
}

}  // namespace detail

namespace detail {

// escape_for_message(), printable_line() and printable_text(): with
// `escape_quotes` false, '"' and '\\' stay as they are; with `keep_lines`,
// so do '\n', '\t' and a '\r' before '\n'.
inline std::string escape_text(std::string_view text, std::size_t max_bytes, quote_style style, bool escape_quotes,
                               bool keep_lines = false) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    std::uint32_t cp = byte;
    if (byte >= 0x80) {
      cp = decode_utf8_at(text, i, length);
      if (cp == 0xFFFFFFFF || find_invalid_utf8(text.substr(i, length)) != length) length = 1;
    }
    if (i + length > max_bytes) break;
    if (byte < 0x80) {
      switch (byte) {
        case '"': out += escape_quotes ? "\\\"" : "\""; break;
        case '\\': out += escape_quotes ? "\\\\" : "\\"; break;
        case '\n': out += keep_lines ? "\n" : "\\n"; break;
        case '\r': {
          // Kept before a line feed that is shown too (not cut off).
          const bool crlf = keep_lines && i + 1 < text.size() && text[i + 1] == '\n' && i + 2 <= max_bytes;
          out += crlf ? "\r" : "\\r";
          break;
        }
        case '\t': out += keep_lines ? "\t" : "\\t"; break;
        default:
          if (byte < 0x20 || byte == 0x7F) {
            detail::append_hex_escape(out, 'x', byte, 2);
          } else {
            out += static_cast<char>(byte);
          }
      }
    } else if (length == 1 || style == quote_style::ascii) {
      for (std::size_t k = 0; k < length; ++k) detail::append_hex_escape(out, 'x', static_cast<unsigned char>(text[i + k]), 2);
    } else if (detail::hides_or_reorders(cp)) {
      detail::append_hex_escape(out, 'u', cp, 4);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  if (i < text.size()) out += "...";
  return out;
}

}  // namespace detail

/// `text` escaped for a message, without the quotes (see the file comment):
/// for messages that quote in their own way, like the seed's
/// "Section 'Thoughts' is not defined in schema".
inline std::string escape_for_message(std::string_view text, std::size_t max_bytes = 60,
                                      quote_style style = quote_style::text) {
  return detail::escape_text(text, max_bytes, style, true);
}

/// A whole message made safe to print as one line on a terminal: what
/// escape_for_message() escapes, but for '"' and '\\', which stay as they
/// are, so that text already quoted reads the same. For the last step before
/// a message is printed, whatever made it.
inline std::string printable_line(std::string_view message) {
  return detail::escape_text(message, SIZE_MAX, quote_style::text, false);
}

/// Text of several lines (a chunk's content, a report) made safe to print on
/// a terminal: what printable_line() escapes, but for line feeds, tabs and
/// a '\r' just before a line feed (a CRLF line end), which stay as they are;
/// any other '\r' is escaped, since it could overwrite a line.
inline std::string printable_text(std::string_view text) {
  return detail::escape_text(text, SIZE_MAX, quote_style::text, false, true);
}

/// error::describe() ("PATH: at byte N: MESSAGE") with the path escaped as
/// escape_for_message() escapes it: a name holding the text of an escape, or
/// '"' and '\\', cannot pass for another name.
inline std::string describe_for_message(const error& e) {
  if (e.path.empty()) return e.describe();
  error shown = e;
  shown.path = escape_for_message(e.path, SIZE_MAX);
  return shown.describe();
}

/// `text` in double quotes for a message (see the file comment).
inline std::string quote_for_message(std::string_view text, std::size_t max_bytes = 60,
                                     quote_style style = quote_style::text) {
  return '"' + escape_for_message(text, max_bytes, style) + '"';
}

}  // namespace agentctx
