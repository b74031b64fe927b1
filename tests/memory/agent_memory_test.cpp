// agent_memory: the seed 004 operations on an in-memory repository (the
// real disk, path safety and concurrency are agent_memory_paths_test.cpp).
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/memory/agent_memory.hpp"
#include "io/io_test_support.hpp"
#include "support/crash_images.hpp"

namespace memory_agent_memory_test {

namespace io = agentctx::io;
namespace memory = agentctx::memory;
using memory::error_code;

namespace {

constexpr std::string_view log_path = ".github/agent-memory/aristotle/logs/2025-01-20.md";
constexpr std::string_view summary_path = ".github/agent-memory/aristotle/_summary.md";
constexpr std::string_view schema_path = ".github/agent-memory/aristotle/_schema.md";

std::string read(io::file_system& fs, std::string_view path) { return io_test::read_text(fs, std::string(path)); }
void write(io::file_system& fs, std::string_view path, std::string_view text) {
  io_test::write_text(fs, std::string(path), text);
}

template <class T>
T require_value(memory::outcome<T> r) {
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().json()));
  return std::move(*r);
}

template <class T>
memory::memory_error require_error(memory::outcome<T> r, error_code code) {
  REQUIRE_MESSAGE(!r.has_value(), "expected " << memory::code_name(code) << ", got a value");
  CHECK_MESSAGE(r.error().code == code, "expected " << memory::code_name(code) << ", got " << r.error().json());
  return std::move(r).error();
}

memory::agent_memory open_memory(io::file_system& fs, memory::memory_options options = {}) {
  options.clock = [] { return std::uint64_t{1'737'331'200'000}; };  // 2025-01-20T00:00:00Z
  return require_value(memory::agent_memory::open(fs, "aristotle", std::move(options)));
}

constexpr std::string_view new_log_text =
    "# Agent Memory Session Log: 2025-01-20\n"
    "\n"
    "## Header\n"
    "- Agent Name: aristotle\n"
    "- Date: 2025-01-20\n"
    "- Session ID: aristotle-2025-01-20\n"
    "\n"
    "## Context\n"
    "\n"
    "## Discussion Summary\n"
    "\n"
    "## Decisions\n"
    "\n"
    "## Open Questions\n"
    "\n"
    "## Next Actions\n";

}  // namespace

TEST_CASE("start_session creates the schema and a log with the schema's sections, and never overwrites") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  const auto first = require_value(mem.start_session());  // the clock's day
  CHECK(first.session_file == log_path);
  CHECK(first.created);
  CHECK(first.warnings.empty());
  CHECK(read(fs, log_path) == new_log_text);
  CHECK(read(fs, schema_path) == memory::default_schema_v1);

  write(fs, log_path, std::string(new_log_text) + "human note\n");
  const auto second = require_value(mem.start_session("2025-01-20"));
  CHECK_FALSE(second.created);
  CHECK(read(fs, log_path) == std::string(new_log_text) + "human note\n");

  // A custom schema is never overwritten, and its sections shape new logs.
  write(fs, schema_path,
        "# Agent Memory Schema v1\n\n## Header\n- Agent Name\n- Model\n\n## Findings\n- What was found\n");
  const auto custom = require_value(mem.start_session("2025-01-21"));
  CHECK(read(fs, custom.session_file) ==
        "# Agent Memory Session Log: 2025-01-21\n\n## Header\n- Agent Name: aristotle\n- Model:\n\n## Findings\n");
  CHECK(read(fs, schema_path).find("## Findings") != std::string::npos);
}

TEST_CASE("append_entry adds entries in chronological order under the exact heading") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  const auto first = require_value(mem.append_entry("Decisions", "- Ship the parser first", "2025-01-20"));
  CHECK(first.created);  // the log was started for it
  CHECK(first.session_file == log_path);
  require_value(mem.append_entry("Decisions", "- Then the writer\n", "2025-01-20"));
  require_value(mem.append_entry("Context", "Project: agentctx\nStage: build", "2025-01-20"));
  const auto third = require_value(mem.append_entry("Decisions", "\n\n- And tests last  \n\n", "2025-01-20"));
  CHECK_FALSE(third.created);
  const std::string text = read(fs, log_path);
  CHECK(text ==
        "# Agent Memory Session Log: 2025-01-20\n\n## Header\n- Agent Name: aristotle\n- Date: 2025-01-20\n"
        "- Session ID: aristotle-2025-01-20\n\n## Context\n\nProject: agentctx\nStage: build\n\n"
        "## Discussion Summary\n\n## Decisions\n\n- Ship the parser first\n\n- Then the writer\n\n"
        "- And tests last\n\n## Open Questions\n\n## Next Actions\n");
  // "## Context Extra" is not the heading of Context, and the last section takes entries too.
  require_value(mem.append_entry("Next Actions", "- Review", "2025-01-20"));
  CHECK(read(fs, log_path).ends_with("## Next Actions\n\n- Review\n"));
}

TEST_CASE("append_entry keeps every byte it does not add: human edits, CRLF, no final newline") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  require_value(mem.start_session("2025-01-20"));
  write(fs, log_path,
        "# Log\r\n\r\n## Header\r\n- Agent Name: aristotle\r\n\r\n## Context Extra\r\nnot ours\r\n\r\n"
        "## Decisions\r\n- typed by a human\r\n  continued\r\n\r\n\r\n## Next Actions\r\n## Context\r\nlast line");
  require_value(mem.append_entry("Decisions", "- agent entry", "2025-01-20"));
  require_value(mem.append_entry("Next Actions", "- act", "2025-01-20"));
  require_value(mem.append_entry("Context", "- ctx", "2025-01-20"));
  CHECK(read(fs, log_path) ==
        "# Log\r\n\r\n## Header\r\n- Agent Name: aristotle\r\n\r\n## Context Extra\r\nnot ours\r\n\r\n"
        "## Decisions\r\n- typed by a human\r\n  continued\r\n\n- agent entry\n\r\n\r\n## Next Actions\r\n\n- act\n\n"
        "## Context\r\nlast line\n\n- ctx\n");
}

TEST_CASE("append_entry refuses unknown sections, Header, bad content and bad logs, writing nothing") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  const auto thoughts = require_error(mem.append_entry("Thoughts", "x", "2025-01-20"), error_code::invalid_section);
  CHECK(thoughts.message.starts_with("Section 'Thoughts' is not defined in schema"));
  CHECK(thoughts.json().starts_with(R"({"error":"InvalidSection","message":"Section 'Thoughts' is not defined)"));
  require_error(mem.append_entry("Header", "- Agent Name: mallory", "2025-01-20"), error_code::invalid_section);
  require_error(mem.append_entry("decisions", "x", "2025-01-20"), error_code::invalid_section);  // case kept
  require_error(mem.append_entry("Decisions", "x", "2025-02-30"), error_code::invalid_date);
  require_error(mem.append_entry("Decisions", "a\n## Decisions\nb", "2025-01-20"), error_code::invalid_content);
  require_error(mem.append_entry("Decisions", "a\r\nb", "2025-01-20"), error_code::invalid_content);
  require_error(mem.append_entry("Decisions", "", "2025-01-20"), error_code::invalid_content);
  require_error(mem.append_entry("Decisions", std::string(70'000, 'a'), "2025-01-20"),
                error_code::content_too_large);
  // Nothing of the above created a file or a folder.
  CHECK_FALSE(fs.exists(".github").value());

  require_value(mem.start_session("2025-01-20"));
  write(fs, log_path, "# Log\n\n## Decisions\n- a\n\n## Decisions\n- b\n");
  const auto twice = require_error(mem.append_entry("Decisions", "x", "2025-01-20"), error_code::malformed_log);
  CHECK(twice.message.find("appears twice") != std::string::npos);
  write(fs, log_path, "# Log\n\n## Context\n");
  require_error(mem.append_entry("Decisions", "x", "2025-01-20"), error_code::malformed_log);
  write(fs, log_path, "no title\n## Decisions\n");
  require_error(mem.append_entry("Decisions", "x", "2025-01-20"), error_code::malformed_log);
  require_error(mem.start_session("2025-01-20"), error_code::malformed_log);
  CHECK(read(fs, log_path) == "no title\n## Decisions\n");
}

TEST_CASE("the schema: invalid schemas are refused, other versions warn") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  require_value(mem.start_session("2025-01-20"));
  write(fs, schema_path, "# Not a schema\n\n## Header\n");
  require_error(mem.append_entry("Decisions", "x", "2025-01-20"), error_code::invalid_schema);
  require_error(mem.start_session("2025-01-21"), error_code::invalid_schema);
  CHECK_FALSE(fs.exists(".github/agent-memory/aristotle/logs/2025-01-21.md").value());
  require_error(mem.update_summary("Decisions", "x", memory::summary_mode::append), error_code::invalid_schema);

  write(fs, schema_path, std::string(memory::default_schema_v1).replace(23, 1, "2"));
  const auto session = require_value(mem.start_session("2025-01-22"));
  REQUIRE(session.warnings.size() == 1);
  CHECK(session.warnings[0].code == error_code::schema_version_mismatch);
  CHECK(session.warnings[0].message.find("version 2") != std::string::npos);
}

TEST_CASE("read_summary initialises the summary from the template once") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  const auto first = require_value(mem.read_summary());
  CHECK(first.initialized);
  CHECK(first.summary_file == summary_path);
  CHECK(first.summary ==
        "# Agent Memory Summary: aristotle\n\n## Context\n\n## Discussion Summary\n\n## Decisions\n\n"
        "## Open Questions\n\n## Next Actions\n");
  CHECK(first.hash == agentctx::sha256_text(first.summary));
  CHECK(read(fs, summary_path) == first.summary);
  CHECK(read(fs, schema_path) == memory::default_schema_v1);
  const auto second = require_value(mem.read_summary());
  CHECK_FALSE(second.initialized);
  CHECK(second.hash == first.hash);

  write(fs, summary_path, "free text\n");
  const auto odd = require_value(mem.read_summary());
  CHECK(odd.summary == "free text\n");
  REQUIRE(odd.warnings.size() == 1);
  CHECK(odd.warnings[0].code == error_code::malformed_summary);
}

TEST_CASE("update_summary changes one section only, appends or replaces, and detects conflicts") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  const auto start = require_value(mem.read_summary());
  const auto appended =
      require_value(mem.update_summary("Decisions", "- parser first", memory::summary_mode::append, start.hash));
  CHECK(appended.previous_hash == start.hash);
  CHECK(appended.hash == agentctx::sha256_text(read(fs, summary_path)));
  require_value(mem.update_summary("Decisions", "- writer next", memory::summary_mode::append));
  require_value(mem.update_summary("Context", "Old context", memory::summary_mode::append));
  require_value(mem.update_summary("Context", "New context\nline two", memory::summary_mode::replace));
  require_value(mem.update_summary("Next Actions", "- ship", memory::summary_mode::replace));
  CHECK(read(fs, summary_path) ==
        "# Agent Memory Summary: aristotle\n\n## Context\n\nNew context\nline two\n\n## Discussion Summary\n\n"
        "## Decisions\n\n- parser first\n\n- writer next\n\n## Open Questions\n\n## Next Actions\n\n- ship\n");

  // A stale base hash: Conflict, and the file is untouched.
  const std::string before = read(fs, summary_path);
  const auto stale = require_error(mem.update_summary("Decisions", "- late", memory::summary_mode::append, start.hash),
                                   error_code::conflict);
  CHECK(stale.message.find("changed since") != std::string::npos);
  CHECK(read(fs, summary_path) == before);

  require_error(mem.update_summary("Thoughts", "x", memory::summary_mode::append), error_code::invalid_section);
  require_error(mem.update_summary("Header", "x", memory::summary_mode::replace), error_code::invalid_section);
  require_error(mem.update_summary("Decisions", "x", memory::summary_mode::append, "sha256:abc"),
                error_code::invalid_argument);
  require_error(mem.update_summary("Decisions", "# Title", memory::summary_mode::append), error_code::invalid_content);
  require_error(memory::parse_summary_mode("overwrite"), error_code::invalid_mode);
  CHECK(*memory::parse_summary_mode("replace") == memory::summary_mode::replace);
  CHECK(read(fs, summary_path) == before);

  // A section of the schema the summary lacks is added at the end; human text stays.
  write(fs, summary_path, "# Summary\n\nintro? no: refused\n");
  require_error(mem.update_summary("Decisions", "x", memory::summary_mode::append), error_code::malformed_summary);
  write(fs, summary_path, "# Summary\n\n## Context\nkept\n");
  const auto added = require_value(mem.update_summary("Open Questions", "- why?", memory::summary_mode::replace));
  CHECK(added.section_added);
  CHECK(read(fs, summary_path) == "# Summary\n\n## Context\nkept\n\n## Open Questions\n\n- why?\n");
}

TEST_CASE("list_sessions: newest first, limit and paging, other entries reported") {
  io::memory_file_system fs;
  auto mem = open_memory(fs);
  CHECK(require_value(mem.list_sessions()).sessions.empty());  // nothing yet, nothing created
  CHECK_FALSE(fs.exists(".github").value());
  for (const char* day : {"2025-01-15", "2025-01-20", "2024-12-31", "2025-01-02"}) require_value(mem.start_session(day));
  write(fs, ".github/agent-memory/aristotle/logs/notes.txt", "x");
  write(fs, ".github/agent-memory/aristotle/logs/2025-02-30.md", "x");
  const auto all = require_value(mem.list_sessions());
  CHECK(all.sessions == std::vector<std::string>{"2025-01-20.md", "2025-01-15.md", "2025-01-02.md", "2024-12-31.md"});
  CHECK(all.total == 4);
  CHECK_FALSE(all.next_before.has_value());
  CHECK(all.ignored == std::vector<std::string>{"2025-02-30.md", "notes.txt"});

  const auto page1 = require_value(mem.list_sessions(3));
  CHECK(page1.sessions == std::vector<std::string>{"2025-01-20.md", "2025-01-15.md", "2025-01-02.md"});
  REQUIRE(page1.next_before.has_value());
  CHECK(*page1.next_before == "2025-01-02");
  const auto page2 = require_value(mem.list_sessions(3, *page1.next_before));
  CHECK(page2.sessions == std::vector<std::string>{"2024-12-31.md"});
  CHECK_FALSE(page2.next_before.has_value());
  CHECK(require_value(mem.list_sessions(2, "2025-01-20")).sessions ==
        std::vector<std::string>{"2025-01-15.md", "2025-01-02.md"});
  require_error(mem.list_sessions(2, "2025-1-5"), error_code::invalid_date);
}

TEST_CASE("a writer that finds the lock taken fails with Locked when told not to wait") {
  io::memory_file_system fs;
  memory::memory_options options;
  options.wait_for_lock = false;
  auto mem = open_memory(fs, options);
  require_value(mem.start_session("2025-01-20"));
  auto held = fs.lock(".github/agent-memory/aristotle/.lock", io::lock_mode::exclusive, false);
  REQUIRE(held.has_value());
  require_error(mem.append_entry("Decisions", "x", "2025-01-20"), error_code::locked);
  require_error(mem.update_summary("Decisions", "x", memory::summary_mode::append), error_code::locked);
  held->reset();
  require_value(mem.append_entry("Decisions", "x", "2025-01-20"));
}

TEST_CASE("agent names are safe names; files over the size limit are refused, never cut") {
  io::memory_file_system fs;
  for (const char* bad : {"", ".", "..", "../x", "a/b", "-a", "con"}) {
    require_error(memory::agent_memory::open(fs, bad), error_code::invalid_agent_name);
  }
  memory::memory_options options;
  options.max_file_bytes = 400;
  auto mem = open_memory(fs, options);
  require_value(mem.start_session("2025-01-20"));
  require_value(mem.append_entry("Decisions", std::string(60, 'a'), "2025-01-20"));
  const std::string before = read(fs, log_path);
  require_error(mem.append_entry("Decisions", std::string(200, 'b'), "2025-01-20"), error_code::content_too_large);
  CHECK(read(fs, log_path) == before);
}

TEST_CASE("crash at every write and sync of append_entry and update_summary: old or new file, never half") {
  io::memory_file_system memory_fs;
  const io::memory_file_system_state initial = memory_fs.snapshot();
  io::fault_injecting_file_system faulty(memory_fs);
  struct acknowledged {
    std::vector<std::string> entries;
    std::vector<std::string> summary_entries;
  };
  const auto workload = [](io::file_system& fs) {
    acknowledged done;
    auto mem = memory::agent_memory::open(fs, "aristotle");
    if (!mem) return done;
    for (int i = 0; i < 3; ++i) {
      const std::string entry = "- entry " + std::to_string(i);
      if (!mem->append_entry("Decisions", entry, "2025-01-20")) return done;
      done.entries.push_back(entry);
      const std::string point = "- point " + std::to_string(i);
      if (!mem->update_summary("Decisions", point, memory::summary_mode::append)) return done;
      done.summary_entries.push_back(point);
    }
    return done;
  };
  const acknowledged full = workload(faulty);
  REQUIRE(full.entries.size() == 3);
  const auto check = [&](io::memory_file_system& fs, const acknowledged& done, const std::string& image) {
    crash_support::image_expectations expect(image);
    auto mem = memory::agent_memory::open(fs, "aristotle");
    if (!expect(mem.has_value(), "open")) return;
    // Every file that exists parses; every acknowledged entry is there, in order.
    const auto expect_in_order = [&](const std::string& path, const std::vector<std::string>& entries) {
      auto there = fs.exists(path);
      if (!there || !*there) return expect(entries.empty(), path + " lost");
      const std::string text = read(fs, path);
      if (!expect(memory::parse_sections(text).has_value(), path + " does not parse")) return false;
      std::size_t at = 0;
      for (const std::string& entry : entries) {
        at = text.find(entry, at);
        if (!expect(at != std::string::npos, path + ": acknowledged \"" + entry + "\" lost or out of order")) return false;
      }
      return true;
    };
    expect_in_order(std::string(log_path), done.entries);
    expect_in_order(std::string(summary_path), done.summary_entries);
    // And writing works again after the crash.
    auto again = mem->append_entry("Decisions", "- after", "2025-01-20");
    expect(again.has_value(), again ? "" : "append after the crash: " + again.error().json());
  };
  const std::uint64_t images =
      crash_support::crash_at_every_operation(memory_fs, initial, faulty, 7, 200, workload, check);
  MESSAGE("crash images checked: " << images);
  CHECK(images >= 100);
}

}  // namespace memory_agent_memory_test
