// agentctx/core/safe_name.hpp: names that become one path component, such
// as the agent names of agent memory (seed 004) and the item ids of the
// context loader (seed 003).
//
// A safe name is 1 to 64 bytes of ASCII letters, digits, '-', '_' and '.',
// starting with a letter or a digit, and not a Windows device name (CON,
// PRN, AUX, NUL, COM1-9, LPT1-9, in any case, alone or before a '.'), so
// that it names the same single folder on every system a repository is
// checked out on. Case is kept as given: "Aristotle" and "aristotle" are two
// names. Everything else is refused rather than cleaned up: "", ".", "..",
// "../x", "a/b", "a\b", absolute paths, NUL, newlines and other control
// characters, a leading '-' (an option to a shell tool) or '.', non-ASCII
// letters (fullwidth or lookalike), bidi overrides and invalid UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx {

inline constexpr std::size_t max_safe_name_bytes = 64;

/// Why `name` is not a safe name, or an empty view when it is one.
constexpr std::string_view safe_name_problem(std::string_view name) noexcept {
  if (name.empty()) return "is empty";
  if (name.size() > max_safe_name_bytes) return "is longer than 64 bytes";
  const auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!is_alnum(name.front())) return "must start with an ASCII letter or digit";
  for (char c : name) {
    if (c == '/' || c == '\\') return "contains a path separator";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return "contains a control character";
    if (static_cast<unsigned char>(c) >= 0x80) return "contains a non-ASCII character";
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return "contains a character other than A-Z a-z 0-9 - _ .";
  }
  // Windows device names, alone or with an extension ("con", "Nul.md", "COM1").
  const std::string_view stem = name.substr(0, name.find('.'));
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  const auto stem_is = [&](std::string_view device) {
    if (stem.size() != device.size()) return false;
    for (std::size_t i = 0; i < device.size(); ++i) {
      if (lower(stem[i]) != device[i]) return false;
    }
    return true;
  };
  for (std::string_view device : {"con", "prn", "aux", "nul"}) {
    if (stem_is(device)) return "is a Windows device name";
  }
  if (stem.size() == 4 && stem[3] >= '1' && stem[3] <= '9') {
    const bool com = lower(stem[0]) == 'c' && lower(stem[1]) == 'o' && lower(stem[2]) == 'm';
    const bool lpt = lower(stem[0]) == 'l' && lower(stem[1]) == 'p' && lower(stem[2]) == 't';
    if (com || lpt) return "is a Windows device name";
  }
  return {};
}

/// The name when it is safe; otherwise invalid_argument "<what> \"...\"
/// <problem>" (the name shown with control and non-ASCII bytes as \xNN).
inline result<std::string_view> check_safe_name(std::string_view name, std::string_view what) {
  const std::string_view problem = safe_name_problem(name);
  if (problem.empty()) return name;
  return fail(errc::invalid_argument,
              std::string(what) + " " + quote_for_message(name, 80, quote_style::ascii) + " " + std::string(problem));
}

}  // namespace agentctx
