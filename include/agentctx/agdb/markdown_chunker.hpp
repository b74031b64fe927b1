// agentctx/agdb/markdown_chunker.hpp: splits markdown into bounded chunks.
//
// `chunk_markdown` cuts a markdown document into the pieces that become the
// chunks of a compiled layer (seed 000 section 15.1, "chunk and normalize").
// The rules, in the order they apply:
//
//   Input. A leading UTF-8 byte order mark (EF BB BF) is dropped. Lines end at
//   LF; a CR directly before an LF belongs to the line ending. Line 1 is the
//   first line after the BOM. A CR anywhere else is an ordinary byte.
//
//   Content. A chunk's content is its lines joined by a single LF, without a
//   trailing LF, and with leading and trailing blank lines (spaces, tabs, CR,
//   VT and FF only) removed. CRLF therefore becomes LF: a file checked out
//   with either line ending gives the same chunks. Other bytes are kept as
//   they are (no trailing-space trimming, no tab expansion). `first_line` is
//   the 1-based line number of the chunk's first (non-blank) line in the
//   original text, saturated at 2^32 - 1.
//
//   Sections. A chunk never spans two sections. A section starts at the top
//   of the document and at every heading outside a fenced code block:
//     - an ATX heading: up to 3 spaces, 1 to 6 '#', then a space, a tab or
//       the end of the line ("#tag" is not a heading);
//     - a setext heading: a paragraph followed by an underline of '=' or '-'
//       (up to 3 spaces, then one character repeated, then only spaces or
//       tabs). The section starts at the paragraph's first line. A '-'
//       underline after a blank line, a list item or a block quote is a
//       thematic break instead, as in CommonMark;
//     - a YAML front matter block ("---" on line 1 up to the next "---" or
//       "...") belongs to the first section and holds no headings.
//   Small sections are not merged: every heading starts a new chunk.
//
//   Fences. A fenced code block opens with a line of up to 3 spaces and at
//   least three '`' or '~' (a '`' fence's info string holds no '`'), and
//   closes at a line of up to 3 spaces and at least as many of the same
//   character followed only by spaces or tabs; an unclosed fence runs to the
//   end of the document. Lines inside a fence are never headings, and a chunk
//   boundary never falls inside a fence, unless the fence alone is larger
//   than max_chunk_bytes: then that fence is cut between lines (each piece
//   taken as a chunk of its own; the fence markers stay in the first and last
//   piece only). Fences nested in list items or block quotes (indented more
//   than 3 spaces or prefixed with '>') are not recognised as fences, and
//   HTML blocks are not parsed: a "# x" line inside "<!-- -->" is a heading.
//
//   Size. No chunk is longer than max_chunk_bytes. A section that fits is one
//   chunk. A larger section is packed greedily, in order, from its
//   paragraphs (split at blank lines outside fences, and before and after
//   each fence); a paragraph larger than the limit is packed from its lines
//   (never inside a fence), a fence larger than the limit from its lines, and
//   a single line larger than the limit is cut at UTF-8 code point
//   boundaries (at a byte boundary only where the text is not valid UTF-8).
//   Pieces of one cut line are not trimmed and all carry that line's number.
//
//   Chunks whose content is empty or only whitespace are dropped, so an empty
//   or blank document gives no chunk.
//
// The output depends on nothing but the input bytes and the options. Time
// and memory are linear in the input (a few dozen bytes of bookkeeping per
// line). The input need not be valid UTF-8; nothing here fails.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace agentctx::agdb {

/// One chunk of a document: its normalised content and where it starts.
struct text_chunk {
  std::string content;
  std::uint32_t first_line = 0;  ///< 1-based line of the content's first line
  friend bool operator==(const text_chunk&, const text_chunk&) = default;
};

struct chunking_options {
  /// The smallest limit honoured: one UTF-8 code point must fit in a chunk.
  static constexpr std::size_t minimum_max_chunk_bytes = 4;

  /// Upper bound on a chunk's content in bytes; values below
  /// minimum_max_chunk_bytes count as that minimum. 2 KiB is about 500 tokens
  /// of English: within the 512-token input window of the common small
  /// embedding models (BERT family), so no part of a chunk is silently
  /// truncated by them, while typical AGENTS.md sections stay whole.
  std::size_t max_chunk_bytes = 2048;
};

namespace detail {

// Classification of the lines of one document (markdown_lines) and the
// splitter that packs them (markdown_splitter).
struct markdown_line {
  std::size_t begin = 0;   // offset of the first byte in the text
  std::size_t length = 0;  // bytes, without the LF or CRLF ending
  bool blank = false;
  bool section_start = false;  // a heading (or setext paragraph) starts here
  bool fence_open = false;     // the opening line of a fence
  bool fence_body = false;     // inside a fence after its opening line
};

inline bool is_blank_byte(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

inline bool is_blank_text(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), is_blank_byte);
}

inline bool is_space_or_tab(char c) noexcept { return c == ' ' || c == '\t'; }

inline bool only_spaces_or_tabs(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), is_space_or_tab);
}

// The indentation of a line in columns (a tab advances to the next multiple
// of 4, as in CommonMark) and the bytes it takes.
struct indentation {
  std::size_t columns = 0;
  std::size_t bytes = 0;
};

inline indentation measure_indentation(std::string_view s) noexcept {
  indentation out;
  while (out.bytes < s.size() && is_space_or_tab(s[out.bytes])) {
    out.columns = s[out.bytes] == '\t' ? (out.columns / 4 + 1) * 4 : out.columns + 1;
    ++out.bytes;
  }
  return out;
}

inline std::size_t count_leading(std::string_view s, char c) noexcept {
  std::size_t n = 0;
  while (n < s.size() && s[n] == c) ++n;
  return n;
}

// `rest` is the line after an indentation of at most 3 columns, in the
// helpers below.
inline bool is_atx_heading(std::string_view rest) noexcept {
  const std::size_t hashes = count_leading(rest, '#');
  return hashes >= 1 && hashes <= 6 && (hashes == rest.size() || is_space_or_tab(rest[hashes]));
}

inline bool is_setext_underline(std::string_view rest) noexcept {
  if (rest.empty() || (rest[0] != '=' && rest[0] != '-')) return false;
  return only_spaces_or_tabs(rest.substr(count_leading(rest, rest[0])));
}

inline bool is_thematic_break(std::string_view rest) noexcept {
  if (rest.empty() || (rest[0] != '-' && rest[0] != '*' && rest[0] != '_')) return false;
  std::size_t marks = 0;
  for (const char c : rest) {
    if (c == rest[0]) {
      ++marks;
    } else if (!is_space_or_tab(c)) {
      return false;
    }
  }
  return marks >= 3;
}

// A list item ("-", "+", "*", "1." or "1)" then a space or the end) or a block
// quote: lines that open a container whose paragraphs cannot take a setext
// underline from outside.
inline bool opens_container(std::string_view rest) noexcept {
  if (rest.empty()) return false;
  if (rest[0] == '>') return true;
  std::size_t marker = 0;
  if (rest[0] == '-' || rest[0] == '+' || rest[0] == '*') {
    marker = 1;
  } else {
    while (marker < rest.size() && marker < 9 && rest[marker] >= '0' && rest[marker] <= '9') ++marker;
    if (marker == 0 || marker == rest.size() || (rest[marker] != '.' && rest[marker] != ')')) return false;
    ++marker;
  }
  return marker == rest.size() || is_space_or_tab(rest[marker]);
}

struct fence_marker {
  char character = 0;  // 0 when the line is no fence
  std::size_t length = 0;
};

inline fence_marker opening_fence(std::string_view rest) noexcept {
  if (rest.empty() || (rest[0] != '`' && rest[0] != '~')) return {};
  const std::size_t length = count_leading(rest, rest[0]);
  if (length < 3) return {};
  if (rest[0] == '`' && rest.substr(length).find('`') != std::string_view::npos) return {};
  return {rest[0], length};
}

inline bool closes_fence(std::string_view line, const fence_marker& fence) noexcept {
  const indentation indent = measure_indentation(line);
  if (indent.columns > 3) return false;
  const std::string_view rest = line.substr(indent.bytes);
  const std::size_t length = count_leading(rest, fence.character);
  return length >= fence.length && only_spaces_or_tabs(rest.substr(length));
}

inline bool is_front_matter_delimiter(std::string_view line, bool closing) noexcept {
  const std::size_t dashes = count_leading(line, '-');
  if (dashes == 3 && only_spaces_or_tabs(line.substr(3))) return true;
  return closing && line.substr(0, 3) == "..." && only_spaces_or_tabs(line.substr(3));
}

// Splits `text` into lines and marks blank lines, fences and section starts.
inline std::vector<markdown_line> classify_markdown_lines(std::string_view text) {
  std::vector<markdown_line> lines;
  lines.reserve(text.size() / 40 + 1);
  for (std::size_t begin = 0; begin < text.size();) {
    const void* newline = std::memchr(text.data() + begin, '\n', text.size() - begin);
    const std::size_t end =
        newline == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(newline) - text.data());
    std::size_t length = end - begin;
    if (newline != nullptr && length > 0 && text[end - 1] == '\r') --length;
    markdown_line line;
    line.begin = begin;
    line.length = length;
    line.blank = is_blank_text(text.substr(begin, length));
    lines.push_back(line);
    begin = end + 1;
  }
  auto line_text = [&](std::size_t i) { return text.substr(lines[i].begin, lines[i].length); };

  std::size_t first = 0;
  if (!lines.empty() && is_front_matter_delimiter(line_text(0), false)) {
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (is_front_matter_delimiter(line_text(i), true)) {
        lines[0].fence_open = true;
        for (std::size_t k = 1; k <= i; ++k) lines[k].fence_body = true;
        first = i + 1;
        break;
      }
    }
  }

  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  fence_marker fence;                 // the open fence, if character != 0
  std::size_t paragraph_start = none;  // first line of the open paragraph
  bool in_container = false;           // inside a list item or block quote paragraph
  for (std::size_t i = first; i < lines.size(); ++i) {
    markdown_line& line = lines[i];
    const std::string_view s = line_text(i);
    if (fence.character != 0) {
      line.fence_body = true;
      if (closes_fence(s, fence)) fence = {};
      continue;
    }
    if (line.blank) {
      paragraph_start = none;
      in_container = false;
      continue;
    }
    const indentation indent = measure_indentation(s);
    if (indent.columns <= 3) {
      const std::string_view rest = s.substr(indent.bytes);
      if (const fence_marker opened = opening_fence(rest); opened.character != 0) {
        fence = opened;
        line.fence_open = true;
        paragraph_start = none;
        in_container = false;
        continue;
      }
      if (is_atx_heading(rest)) {
        line.section_start = true;
        paragraph_start = none;
        in_container = false;
        continue;
      }
      if (paragraph_start != none && is_setext_underline(rest)) {
        lines[paragraph_start].section_start = true;
        paragraph_start = none;
        continue;
      }
      if (is_thematic_break(rest)) {
        paragraph_start = none;
        in_container = false;
        continue;
      }
      if (opens_container(rest)) {
        paragraph_start = none;
        in_container = true;
        continue;
      }
    }
    // Indented code (4+ columns) only continues a paragraph, never starts one.
    if (!in_container && paragraph_start == none && indent.columns <= 3) paragraph_start = i;
  }
  return lines;
}

// Packs the classified lines into chunks of at most `max_bytes`.
class markdown_splitter {
 public:
  markdown_splitter(std::string_view text, const std::vector<markdown_line>& lines, std::size_t max_bytes,
                    std::vector<text_chunk>& out)
      : text_(text), lines_(lines), max_bytes_(max_bytes), out_(out) {
    const std::size_t n = lines.size();
    joined_start_.resize(n + 1);
    next_nonblank_.resize(n + 1);
    nonblank_end_.resize(n + 1);
    joined_start_[0] = 0;
    nonblank_end_[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      joined_start_[i + 1] = joined_start_[i] + lines[i].length + 1;
      nonblank_end_[i + 1] = lines[i].blank ? nonblank_end_[i] : i + 1;
    }
    next_nonblank_[n] = n;
    for (std::size_t i = n; i-- > 0;) next_nonblank_[i] = lines[i].blank ? next_nonblank_[i + 1] : i;
  }

  void run() {
    const std::size_t n = lines_.size();
    std::size_t start = 0;
    for (std::size_t i = 1; i <= n; ++i) {
      if (i == n || lines_[i].section_start) {
        split(start, i, level::paragraph);
        start = i;
      }
    }
  }

 private:
  // Where a range may be cut, coarsest first.
  enum class level { paragraph, line_outside_fence, any_line, inside_line };

  struct line_range {
    std::size_t begin;
    std::size_t end;
    bool empty() const noexcept { return begin >= end; }
  };

  // [begin, end) without its leading and trailing blank lines.
  line_range trimmed(std::size_t begin, std::size_t end) const noexcept {
    const std::size_t first = next_nonblank_[begin];
    if (first >= end) return {begin, begin};
    return {first, nonblank_end_[end]};
  }

  // Bytes of the content the lines [begin, end) would make, after trimming.
  std::size_t content_size(std::size_t begin, std::size_t end) const noexcept {
    const line_range r = trimmed(begin, end);
    return r.empty() ? 0 : joined_start_[r.end] - joined_start_[r.begin] - 1;
  }

  bool may_cut_before(std::size_t i, level at) const noexcept {
    const markdown_line& line = lines_[i];
    switch (at) {
      case level::paragraph: {
        const markdown_line& previous = lines_[i - 1];
        return !line.fence_body && (previous.blank || previous.fence_body || line.fence_open);
      }
      case level::line_outside_fence: return !line.fence_body;
      case level::any_line:
      case level::inside_line: return true;
    }
    return true;
  }

  static level finer(level at) noexcept { return static_cast<level>(static_cast<int>(at) + 1); }

  void split(std::size_t begin, std::size_t end, level at) {
    if (content_size(begin, end) <= max_bytes_) {
      emit(begin, end);
      return;
    }
    if (at == level::inside_line) {
      cut_line(trimmed(begin, end).begin);
      return;
    }
    std::size_t chunk_begin = begin;
    std::size_t chunk_end = begin;
    std::size_t piece_begin = begin;
    for (std::size_t i = begin + 1; i <= end; ++i) {
      if (i < end && !may_cut_before(i, at)) continue;
      if (content_size(chunk_begin, i) <= max_bytes_) {
        chunk_end = i;
      } else {
        emit(chunk_begin, chunk_end);
        if (content_size(piece_begin, i) <= max_bytes_) {
          chunk_begin = piece_begin;
          chunk_end = i;
        } else {
          split(piece_begin, i, finer(at));
          chunk_begin = chunk_end = i;
        }
      }
      piece_begin = i;
    }
    emit(chunk_begin, chunk_end);
  }

  static std::uint32_t line_number(std::size_t index) noexcept {
    constexpr std::size_t largest = std::numeric_limits<std::uint32_t>::max();
    return static_cast<std::uint32_t>(std::min(index + 1, largest));
  }

  void emit(std::size_t begin, std::size_t end) {
    const line_range r = trimmed(begin, end);
    if (r.empty()) return;
    const std::size_t size = joined_start_[r.end] - joined_start_[r.begin] - 1;
    const std::size_t raw_begin = lines_[r.begin].begin;
    const std::size_t raw_end = lines_[r.end - 1].begin + lines_[r.end - 1].length;
    text_chunk chunk;
    chunk.first_line = line_number(r.begin);
    if (raw_end - raw_begin == size) {
      chunk.content.assign(text_.substr(raw_begin, size));  // LF endings only: one copy
    } else {
      chunk.content.reserve(size);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        if (i != r.begin) chunk.content.push_back('\n');
        chunk.content.append(text_.substr(lines_[i].begin, lines_[i].length));
      }
    }
    out_.push_back(std::move(chunk));
  }

  // Cuts one line longer than the limit at code point boundaries.
  void cut_line(std::size_t index) {
    const std::string_view line = text_.substr(lines_[index].begin, lines_[index].length);
    std::size_t at = 0;
    while (at < line.size()) {
      std::size_t end = std::min(line.size(), at + max_bytes_);
      std::size_t boundary = end;
      while (boundary > at && boundary < line.size() && is_continuation(line[boundary])) --boundary;
      // Only invalid UTF-8 (a run of continuation bytes) leaves no boundary.
      if (boundary > at) end = boundary;
      const std::string_view piece = line.substr(at, end - at);
      if (!is_blank_text(piece)) out_.push_back(text_chunk{std::string(piece), line_number(index)});
      at = end;
    }
  }

  static bool is_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

  std::string_view text_;
  const std::vector<markdown_line>& lines_;
  std::size_t max_bytes_;
  std::vector<text_chunk>& out_;
  std::vector<std::size_t> joined_start_;   // offset of line i in the LF-joined text
  std::vector<std::size_t> next_nonblank_;  // first non-blank line >= i, or n
  std::vector<std::size_t> nonblank_end_;   // 1 + last non-blank line < i, or 0
};

}  // namespace detail

/// Splits `text` into chunks by the rules at the top of this header. The
/// chunks come in document order and own their content. Never fails.
inline std::vector<text_chunk> chunk_markdown(std::string_view text, const chunking_options& options = {}) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::size_t max_bytes = std::max(options.max_chunk_bytes, chunking_options::minimum_max_chunk_bytes);
  const std::vector<detail::markdown_line> lines = detail::classify_markdown_lines(text);
  std::vector<text_chunk> chunks;
  detail::markdown_splitter(text, lines, max_bytes, chunks).run();
  return chunks;
}

}  // namespace agentctx::agdb
