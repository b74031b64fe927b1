// fuzz/memory_markdown_fuzz.cpp: libFuzzer target for the markdown of agent
// memory (memory/markdown_sections.hpp), which reads _schema.md,
// _summary.md and session logs that anyone with write access to the
// repository may have edited, and checks the content agents append.
//
// The first input byte splits the rest into a document and an entry. The
// rules (a broken one traps, so libFuzzer keeps the input):
//   - parse_sections, parse_schema and check_entry_content never crash, hang,
//     leak or trip a sanitizer;
//   - a parsed document prints (text()) to a document that parses to the same
//     title and section names, and printing that again changes nothing;
//   - content that check_entry_content accepts, appended to any section of a
//     parsed document, leaves the section names and their order unchanged;
//   - the same content spliced into the document's bytes (what writers do:
//     with_entry_appended, with_section_replaced, with_section_added) gives a
//     document that parses with the same sections (one more when added),
//     whose target section ends with (or, replaced, is) the entry's lines,
//     and whose bytes before the section are unchanged.
//
// Seeds: fuzz/seeds/memory_markdown_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target memory_markdown_fuzz
//   build-fuzz/fuzz/memory_markdown_fuzz -dict=fuzz/memory_markdown_fuzz.dict corpus/ fuzz/seeds/memory_markdown_fuzz/
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/lines.hpp"
#include "agentctx/memory/markdown_sections.hpp"

namespace {

using namespace agentctx::memory;

std::vector<std::string> names_of(const section_document& doc) {
  std::vector<std::string> names;
  for (const section& s : doc.sections) names.push_back(s.name);
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t split = input.size() * data[0] / 256;
  const std::string_view document = input.substr(0, split);
  const std::string_view content = input.substr(split);

  static_cast<void>(parse_schema(document));
  const content_problem problem = check_entry_content(content, 4096);

  auto parsed = parse_sections(document);
  if (!parsed) return 0;
  const std::string printed = parsed->text();
  auto again = parse_sections(printed);
  if (!again || again->title != parsed->title || names_of(*again) != names_of(*parsed)) __builtin_trap();
  if (again->text() != printed) __builtin_trap();

  if (problem.what != content_problem::kind::none || parsed->sections.empty()) return 0;
  section_document appended = *parsed;
  for (std::string_view line : agentctx::split_lines(content)) {
    appended.sections[content.size() % appended.sections.size()].body.emplace_back(line);
  }
  auto reread = parse_sections(appended.text());
  if (!reread || names_of(*reread) != names_of(*parsed)) __builtin_trap();

  const std::string& target = parsed->sections[content.size() % parsed->sections.size()].name;
  const std::string_view entry = trimmed_entry(content);
  std::vector<std::string> entry_lines;
  for (std::string_view line : agentctx::split_lines(entry)) entry_lines.emplace_back(line);
  const auto where = find_section_extent(document, target);
  if (!where) __builtin_trap();
  const auto body_without_blank_ends = [](std::vector<std::string> body) {
    const auto blank = [](const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; };
    while (!body.empty() && blank(body.back())) body.pop_back();
    while (!body.empty() && blank(body.front())) body.erase(body.begin());
    return body;
  };
  for (int mode = 0; mode < 2; ++mode) {
    const std::string spliced =
        mode == 0 ? with_entry_appended(document, *where, entry) : with_section_replaced(document, *where, entry);
    auto doc = parse_sections(spliced);
    if (!doc || names_of(*doc) != names_of(*parsed)) __builtin_trap();
    if (spliced.compare(0, where->body_begin, document.substr(0, where->body_begin)) != 0) __builtin_trap();
    const std::vector<std::string> body = body_without_blank_ends(doc->find(target)->body);
    if (body.size() < entry_lines.size()) __builtin_trap();
    if (!std::equal(entry_lines.begin(), entry_lines.end(), body.end() - static_cast<std::ptrdiff_t>(entry_lines.size()))) {
      __builtin_trap();
    }
    if (mode == 1 && body != entry_lines) __builtin_trap();
  }
  const std::string added_name = "Fuzz Added " + std::to_string(parsed->sections.size());
  if (parsed->find(added_name) == nullptr) {
    auto doc = parse_sections(with_section_added(document, added_name, entry));
    std::vector<std::string> names = names_of(*parsed);
    names.push_back(added_name);
    if (!doc || names_of(*doc) != names || body_without_blank_ends(doc->find(added_name)->body) != entry_lines) {
      __builtin_trap();
    }
  }
  return 0;
}
