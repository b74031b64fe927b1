// agentctx/memory/markdown_sections.hpp: the markdown of agent memory
// (seed 004) as sections: the schema (_schema.md), session logs
// (logs/YYYY-MM-DD.md) and the summary (_summary.md) are all a title line
// "# ..." followed by sections "## <Name>", each with a body of lines.
//
// A section heading is a line that is exactly "## " followed by the name
// (no other level, no indentation, no trailing text: "## Context Extra" is
// not the heading of "Context"). Text appended by agents can never contain a
// line that markdown would read as a heading, an unclosed code fence or an
// unclosed HTML comment (check_entry_content), so appended content cannot
// create, end or hide a section.
//
// The default schema v1 is the seed's, verbatim.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/lines.hpp"
#include "agentctx/core/markdown_lines.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/utf8.hpp"

namespace agentctx::memory {

/// The seed's default _schema.md (version 1), byte for byte.
inline constexpr std::string_view default_schema_v1 =
    "# Agent Memory Schema v1\n"
    "\n"
    "## Header\n"
    "- Agent Name\n"
    "- Date (YYYY-MM-DD)\n"
    "- Session ID\n"
    "\n"
    "## Context\n"
    "- Project\n"
    "- Focus Area\n"
    "- Stage\n"
    "\n"
    "## Discussion Summary\n"
    "- Key topics discussed\n"
    "\n"
    "## Decisions\n"
    "- Explicit decisions made\n"
    "\n"
    "## Open Questions\n"
    "- Unresolved issues or risks\n"
    "\n"
    "## Next Actions\n"
    "- Follow-up actions\n";

/// The schema version this library writes and fully understands.
inline constexpr unsigned supported_schema_version = 1;

/// One "## Name" section: its name and the lines of its body (without
/// their newlines), up to the next heading.
struct section {
  std::string name;
  std::vector<std::string> body;
};

/// A document of sections: the title line ("# ...") and the sections in
/// file order. Lines before the first "## " other than the title and blank
/// lines are refused by parse_sections.
struct section_document {
  std::string title;
  std::vector<section> sections;

  section* find(std::string_view name) {
    for (section& s : sections) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  const section* find(std::string_view name) const { return const_cast<section_document*>(this)->find(name); }

  /// The text again: title, a blank line, then each section's heading and
  /// body, sections separated by one blank line (trailing blank lines of a
  /// body are not repeated).
  std::string text() const {
    std::string out = title;
    out += '\n';
    for (const section& s : sections) {
      out += "\n## ";
      out += s.name;
      out += '\n';
      std::size_t end = s.body.size();
      while (end > 0 && s.body[end - 1].empty()) --end;
      std::size_t begin = 0;
      while (begin < end && s.body[begin].empty()) ++begin;
      for (std::size_t i = begin; i < end; ++i) {
        out += s.body[i];
        out += '\n';
      }
    }
    return out;
  }
};

namespace detail {

/// The name of a "## Name" heading line, or nullopt.
inline std::optional<std::string_view> section_heading(std::string_view line) {
  if (!line.starts_with("## ")) return std::nullopt;
  std::string_view name = line.substr(3);
  if (name.empty() || name.front() == ' ' || name.back() == ' ' || name.back() == '#') return std::nullopt;
  return name;
}

using agentctx::is_atx_heading;

/// True for a line that, under a paragraph line, makes it a setext heading
/// (or is a thematic break): up to three spaces, then only '=' or only '-'
/// (and spaces between '-'), at least one.
inline bool is_setext_underline(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i == line.size() || (line[i] != '=' && line[i] != '-')) return false;
  const char mark = line[i];
  for (; i < line.size(); ++i) {
    if (line[i] != mark && line[i] != ' ' && line[i] != '\t') return false;
  }
  return true;
}

using agentctx::code_fence;

}  // namespace detail

/// Parses a document of sections; carriage returns at the ends of lines are
/// dropped (files edited on Windows). Errors: corrupt ("line N: ...") when the
/// first non-blank line is not a "# " title, text stands between the title
/// and the first section, or a section name appears twice.
inline result<section_document> parse_sections(std::string_view text) {
  section_document doc;
  bool titled = false;
  std::size_t number = 0;
  for (std::string_view line : split_lines(text)) {
    ++number;
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF (or worse) line ends
    if (!titled) {
      if (line.empty()) continue;
      if (!line.starts_with("# ")) {
        return fail(errc::corrupt, "line " + std::to_string(number) + ": expected a title line \"# ...\"");
      }
      doc.title = std::string(line);
      titled = true;
      continue;
    }
    if (const auto name = detail::section_heading(line)) {
      if (doc.find(*name) != nullptr) {
        return fail(errc::corrupt, "line " + std::to_string(number) + ": section \"" + std::string(*name) +
                                       "\" appears twice");
      }
      doc.sections.push_back({std::string(*name), {}});
      continue;
    }
    if (doc.sections.empty()) {
      if (line.empty()) continue;
      return fail(errc::corrupt, "line " + std::to_string(number) + ": text before the first \"## \" section");
    }
    doc.sections.back().body.emplace_back(line);
  }
  if (!titled) return fail(errc::corrupt, "the document is empty (expected a title line \"# ...\")");
  return doc;
}

/// A schema: its version (from the title "# Agent Memory Schema vN") and
/// its sections with their items (the "- " lines).
struct schema {
  unsigned version = 0;
  section_document document;

  /// The sections an entry may be appended to: all but "Header".
  std::vector<std::string> entry_sections() const {
    std::vector<std::string> names;
    for (const section& s : document.sections) {
      if (s.name != "Header") names.push_back(s.name);
    }
    return names;
  }
};

/// Parses _schema.md. Errors: corrupt when it is not a document of sections,
/// its title is not "# Agent Memory Schema v<N>", or it has no "Header"
/// section or no other section.
inline result<schema> parse_schema(std::string_view text) {
  auto doc = parse_sections(text);
  if (!doc) return unexpected(std::move(doc).error());
  constexpr std::string_view prefix = "# Agent Memory Schema v";
  if (!doc->title.starts_with(prefix)) {
    return fail(errc::corrupt, "the title is not \"# Agent Memory Schema v<N>\": \"" + doc->title.substr(0, 80) + "\"");
  }
  const std::string_view digits = std::string_view(doc->title).substr(prefix.size());
  unsigned version = 0;
  if (digits.empty() || digits.size() > 6) return fail(errc::corrupt, "the schema version is not a number");
  for (char c : digits) {
    if (c < '0' || c > '9') return fail(errc::corrupt, "the schema version is not a number");
    version = version * 10 + static_cast<unsigned>(c - '0');
  }
  schema out{version, std::move(*doc)};
  if (out.document.find("Header") == nullptr) return fail(errc::corrupt, "the schema has no \"Header\" section");
  if (out.entry_sections().empty()) return fail(errc::corrupt, "the schema has no section besides \"Header\"");
  return out;
}

/// Why `content` cannot be appended to a section as it is, or an empty
/// string: it must be non-empty, at most `max_bytes`, valid UTF-8 without a
/// byte order mark, NUL, CR or other control characters than tab and
/// newline, and contain no line that markdown would read as a heading
/// (ATX "# ..." or a setext underline "===" / "---"), no unclosed code fence
/// and no unclosed HTML comment.
struct content_problem {
  enum class kind { none, too_large, invalid } what = kind::none;
  std::string message;
};

inline content_problem check_entry_content(std::string_view content, std::size_t max_bytes) {
  const auto invalid = [](std::string message) { return content_problem{content_problem::kind::invalid, std::move(message)}; };
  if (content.size() > max_bytes) {
    return {content_problem::kind::too_large, "content is " + std::to_string(content.size()) +
                                                  " bytes, more than the limit of " + std::to_string(max_bytes) +
                                                  " (it is refused, never cut)"};
  }
  std::string_view trimmed = content;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ' || trimmed.back() == '\t')) {
    trimmed.remove_suffix(1);
  }
  if (trimmed.empty()) return invalid("content is empty");
  if (const std::size_t bad = find_invalid_utf8(content); bad != content.size()) {
    return invalid("content is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  if (content.find("\xEF\xBB\xBF") != std::string_view::npos) return invalid("content contains a byte order mark");
  for (char c : content) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\r') return invalid("content contains a carriage return (use \\n line ends)");
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7F) return invalid("content contains a control character");
  }
  std::string_view open_fence;
  bool in_comment = false;
  std::size_t number = 0;
  for (std::string_view line : split_lines(trimmed)) {
    ++number;
    const std::string at = "content line " + std::to_string(number);
    // Inside a code fence or a comment too: parse_sections reads lines, not markdown.
    if (detail::is_atx_heading(line)) return invalid(at + " is a markdown heading, which would start a section");
    if (!open_fence.empty()) {
      const std::string_view fence = detail::code_fence(line);
      if (closes_fence(open_fence, fence)) open_fence = {};
      continue;
    }
    if (in_comment) {
      if (line.find("-->") != std::string_view::npos) in_comment = false;
      continue;
    }
    if (number > 1 && detail::is_setext_underline(line)) {
      return invalid(at + " would make the line above it a markdown heading");
    }
    if (const std::string_view fence = detail::code_fence(line); !fence.empty()) {
      open_fence = fence;
      continue;
    }
    if (const std::size_t open = line.rfind("<!--"); open != std::string_view::npos &&
                                                    line.find("-->", open + 4) == std::string_view::npos) {
      in_comment = true;
    }
  }
  if (!open_fence.empty()) return invalid("content opens a code fence it does not close");
  if (in_comment) return invalid("content opens an HTML comment it does not close");
  return {};
}

// --- Splicing entries into a document's bytes ---------------------------------------
//
// Writers change a document by splicing text into its bytes, never by
// printing a parsed document again: every byte outside the change (human
// edits, CRLF line ends, spacing) stays as it was.

namespace detail {

/// One line of a text: its first byte, `next` the offset after its '\n',
/// and its text without the '\n' and trailing '\r'.
struct text_line {
  std::size_t begin = 0;
  std::size_t next = 0;
  std::string_view text;
};

inline std::vector<text_line> text_lines(std::string_view text) {
  std::vector<text_line> lines;
  for (std::string_view line : split_lines(text)) {
    text_line out;
    out.begin = static_cast<std::size_t>(line.data() - text.data());
    out.next = std::min(out.begin + line.size() + 1, text.size());
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.text = line;
    lines.push_back(out);
  }
  return lines;
}

}  // namespace detail

/// Where a "## Name" section of a text is: its body starts at body_begin
/// and ends at `end` (the next heading, or the end of the text);
/// content_end is the offset after its last non-blank line, or npos when
/// the body is blank.
struct section_extent {
  std::size_t body_begin = 0;
  std::size_t end = 0;
  std::size_t content_end = std::string_view::npos;
};

/// The extent of section `name` in `text` (already parsed by parse_sections,
/// so the heading appears at most once), or nullopt.
inline std::optional<section_extent> find_section_extent(std::string_view text, std::string_view name) {
  const std::vector<detail::text_line> lines = detail::text_lines(text);
  std::optional<section_extent> found;
  for (const detail::text_line& line : lines) {
    const auto heading = detail::section_heading(line.text);
    if (found) {
      if (heading) {
        found->end = line.begin;
        return found;
      }
      bool blank = true;
      for (char c : line.text) blank = blank && (c == ' ' || c == '\t');
      if (!blank) found->content_end = line.next;
    } else if (heading && *heading == name) {
      found = section_extent{line.next, text.size(), std::string_view::npos};
    }
  }
  return found;
}

/// Entry content as written: without leading blank lines or trailing white space.
inline std::string_view trimmed_entry(std::string_view content) {
  while (!content.empty() && (content.back() == '\n' || content.back() == ' ' || content.back() == '\t')) {
    content.remove_suffix(1);
  }
  while (true) {
    const std::size_t newline = content.find('\n');
    if (newline == std::string_view::npos) break;
    const std::string_view first = content.substr(0, newline);
    if (first.find_first_not_of(" \t") != std::string_view::npos) break;
    content.remove_prefix(newline + 1);
  }
  return content;
}

/// `text` with `entry` added after the last line of the section `where`,
/// separated from what precedes and follows it by a blank line.
inline std::string with_entry_appended(std::string_view text, const section_extent& where, std::string_view entry) {
  const std::size_t at = where.content_end != std::string_view::npos ? where.content_end : where.body_begin;
  std::string insert;
  if (at == text.size() && at > 0 && text[at - 1] != '\n') insert += '\n';
  insert += '\n';
  insert += entry;
  insert += '\n';
  if (at < text.size() && text[at] != '\n' && text[at] != '\r') insert += '\n';  // a heading right after
  std::string out;
  out.reserve(text.size() + insert.size());
  out.append(text.substr(0, at)).append(insert).append(text.substr(at));
  return out;
}

/// `text` with the body of the section `where` replaced by `entry`.
inline std::string with_section_replaced(std::string_view text, const section_extent& where, std::string_view entry) {
  std::string out(text.substr(0, where.body_begin));
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += '\n';
  out += entry;
  out += '\n';
  if (where.end < text.size()) out += '\n';
  out.append(text.substr(where.end));
  return out;
}

/// `text` with a new section `name` holding `entry` at its end.
inline std::string with_section_added(std::string_view text, std::string_view name, std::string_view entry) {
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\n## ";
  out += name;
  out += "\n\n";
  out += entry;
  out += '\n';
  return out;
}


}  // namespace agentctx::memory
