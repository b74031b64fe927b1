// agent_memory on the real disk: the table of bad inputs (each
// refused with its code, nothing written anywhere), symlinks of every kind
// below the repository, and several processes appending to one log at once.
//
// Every case runs in a scratch folder holding the repository "repo", a
// sibling "repo_evil" sharing its prefix, and a canary folder "outside";
// after each case the canaries are exactly as they were.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/memory/agent_memory.hpp"
#include "io/io_test_support.hpp"
#include "support/disk_files.hpp"
#include "support/result_checks.hpp"

namespace memory_agent_memory_paths_test {

namespace memory = agentctx::memory;
namespace fs = std::filesystem;
using memory::error_code;

namespace {

using test_support::read_file;
using test_support::write_file;

struct sandbox : test_support::canary_sandbox {
  sandbox() {
    write_file(outside / "secret.md", "canary\n");
    write_file(outside / "agent-memory" / "aristotle" / "logs" / "2025-01-20.md", "# canary\n\n## Decisions\n");
    std::filesystem::create_directories(evil / ".github");
    write_file(evil / "README.md", "evil canary\n");
    write_file(repo / "src" / "main.cpp", "int main() {}\n");
  }

  std::unique_ptr<agentctx::io::confined_file_system> open_repo() const {
    auto opened = memory::open_repository(repo.string());
    REQUIRE_MESSAGE(opened.has_value(), (opened ? std::string() : opened.error().json()));
    return std::move(*opened);
  }
};

template <class T>
void expect_error(const memory::outcome<T>& r, error_code code, const std::string& what) {
  INFO(what);
  REQUIRE_FALSE(r.has_value());
  CHECK_MESSAGE(r.error().code == code, "expected " << memory::code_name(code) << ", got " << r.error().json());
}

}  // namespace

TEST_CASE("bad agent names are refused with InvalidAgentName and nothing is written") {
  sandbox box;
  const auto before = box.whole();
  auto repo = box.open_repo();
  const std::vector<std::string> names = {
      "", ".", "..", "../x", "a/b", "a\\b", "/etc", std::string("a\0b", 3), "a\nb", "a\x01", "-rf",
      std::string(65, 'a'), "caf\xC3", "\xE2\x80\xAE" "evil", "\xEF\xBD\x81gent" /* fullwidth a */, "con", "a b"};
  for (const std::string& name : names) {
    auto opened = memory::agent_memory::open(*repo, name);
    expect_error(opened, error_code::invalid_agent_name, "agent name \"" + name + "\"");
  }
  CHECK(memory::agent_memory::open(*repo, "we..ird").has_value());
  CHECK(memory::agent_memory::open(*repo, "Aristotle").has_value());
  CHECK(box.whole() == before);
}

TEST_CASE("bad dates are refused with InvalidDate and nothing is written") {
  sandbox box;
  const auto before = box.whole();
  auto repo = box.open_repo();
  auto mem = memory::agent_memory::open(*repo, "aristotle");
  REQUIRE(mem.has_value());
  for (const std::string date : {"2025-13-45", "2025-02-30", "2023-02-29", "2025-1-5", "20250105", "2025-01-05\n",
                                 "2025-01-05 ", " 2025-01-05", "\xD9\xA2" "025-01-05", "", "2025-01-05T00:00:00Z"}) {
    expect_error(mem->start_session(date), error_code::invalid_date, "date \"" + date + "\"");
    expect_error(mem->append_entry("Decisions", "x", date), error_code::invalid_date, "append, date \"" + date + "\"");
  }
  CHECK(box.whole() == before);
  auto leap = mem->start_session("2024-02-29");
  REQUIRE(leap.has_value());
  CHECK(leap->session_file == ".github/agent-memory/aristotle/logs/2024-02-29.md");
}

TEST_CASE("bad repository roots are refused with InvalidRepoRoot") {
  sandbox box;
  fs::create_symlink(box.repo, box.top / "repo_link");
  write_file(box.top / "plain_file", "x");
  const auto before = box.whole();
  const std::vector<std::string> roots = {
      "", "repo", "./repo", "/", "//", (box.top / "repo_link").string(), (box.top / "repo" / ".." / "repo").string(),
      (box.top / "missing").string(), (box.top / "plain_file").string(), box.top.string() + "//repo"};
  for (const std::string& root : roots) expect_error(memory::open_repository(root), error_code::invalid_repo_root, root);
  // With a list of allowed roots, a sibling sharing the prefix is not the repository.
  const std::vector<std::string> allowed = {box.repo.string()};
  expect_error(memory::open_repository(box.evil.string(), allowed), error_code::invalid_repo_root, "sibling");
  CHECK(memory::open_repository(box.repo.string(), allowed).has_value());
  CHECK(memory::open_repository(box.repo.string() + "/", allowed).has_value());
  CHECK(box.whole() == before);
}

TEST_CASE("symlinks below the repository are never followed: PathOutsideRepository, canaries untouched") {
  struct link_case {
    std::string name;
    std::function<void(const sandbox&)> plant;
  };
  const std::vector<link_case> cases = {
      {".github/agent-memory links outside",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github");
         fs::create_directory_symlink(b.outside / "agent-memory", b.repo / ".github" / "agent-memory");
       }},
      {".github links to the sibling sharing the prefix",
       [](const sandbox& b) { fs::create_directory_symlink(b.top / "repo_evil" / ".github", b.repo / ".github"); }},
      {"the log links to a file outside",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github" / "agent-memory" / "aristotle" / "logs");
         fs::create_symlink(b.outside / "agent-memory" / "aristotle" / "logs" / "2025-01-20.md",
                            b.repo / ".github" / "agent-memory" / "aristotle" / "logs" / "2025-01-20.md");
       }},
      {"the summary links outside",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github" / "agent-memory" / "aristotle");
         fs::create_symlink(b.outside / "secret.md", b.repo / ".github" / "agent-memory" / "aristotle" / "_summary.md");
       }},
      {"the schema is a dangling symlink",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github" / "agent-memory" / "aristotle");
         fs::create_symlink(b.outside / "no-such-file", b.repo / ".github" / "agent-memory" / "aristotle" / "_schema.md");
       }},
      {"the agent folder is a symlink loop",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github" / "agent-memory");
         fs::create_symlink("aristotle", b.repo / ".github" / "agent-memory" / "aristotle");
       }},
      {"logs/ links inside the repository",
       [](const sandbox& b) {
         fs::create_directories(b.repo / ".github" / "agent-memory" / "aristotle");
         fs::create_directory_symlink(b.repo / "src", b.repo / ".github" / "agent-memory" / "aristotle" / "logs");
       }},
  };
  for (const link_case& c : cases) {
    CAPTURE(c.name);
    sandbox box;
    c.plant(box);
    const auto before = box.whole();
    auto repo = box.open_repo();
    auto mem = memory::agent_memory::open(*repo, "aristotle");
    REQUIRE(mem.has_value());
    const auto session = mem->start_session("2025-01-20");
    const auto append = mem->append_entry("Decisions", "- x", "2025-01-20");
    const auto summary = mem->read_summary();
    const auto update = mem->update_summary("Decisions", "- x", memory::summary_mode::append);
    const auto list = mem->list_sessions();
    bool refused = false;
    for (const memory::memory_error* e :
         {session ? nullptr : &session.error(), append ? nullptr : &append.error(),
          summary ? nullptr : &summary.error(), update ? nullptr : &update.error(), list ? nullptr : &list.error()}) {
      if (e == nullptr) continue;
      CHECK_MESSAGE(e->code == error_code::path_outside_repository, e->json());
      refused = true;
    }
    CHECK(refused);
    // Nothing outside the repository changed, and no link was replaced.
    const auto after = box.whole();
    for (const auto& entry : before) {
      const std::string& path = entry.first;  // not a structured binding: clang 14 cannot capture those
      const std::string& contents = entry.second;
      if (path.starts_with("repo/")) {
        if (contents.starts_with("-> ")) CHECK_MESSAGE(after.at(path) == contents, path);
        continue;
      }
      CHECK_MESSAGE(after.count(path) == 1, path);
      if (after.count(path) == 1) CHECK_MESSAGE(after.at(path) == contents, path);
    }
    for (const auto& entry : after) {
      CHECK_MESSAGE((entry.first.starts_with("repo/") || before.count(entry.first) == 1), entry.first);
    }
  }
}

TEST_CASE("a _summary.md that is a directory, and bad content, are refused and nothing is written") {
  sandbox box;
  auto repo = box.open_repo();
  auto mem = memory::agent_memory::open(*repo, "aristotle");
  REQUIRE(mem.has_value());
  REQUIRE(mem->start_session("2025-01-20").has_value());
  fs::create_directories(box.repo / ".github" / "agent-memory" / "aristotle" / "_summary.md");
  const auto before = box.whole();
  expect_error(mem->read_summary(), error_code::malformed_summary, "read");
  expect_error(mem->update_summary("Decisions", "x", memory::summary_mode::append), error_code::malformed_summary,
               "update");
  const std::vector<std::pair<std::string, error_code>> contents = {
      {"intro\n## Decisions\nfake", error_code::invalid_content},
      {"a\r\nb", error_code::invalid_content},
      {"\xEF\xBB\xBF" "bom", error_code::invalid_content},
      {std::string("nul\0byte", 8), error_code::invalid_content},
      {"bad \xC3\x28 utf8", error_code::invalid_content},
      {"title\n=====", error_code::invalid_content},
      {"```\nunclosed fence", error_code::invalid_content},
      {std::string(10 * 1024 * 1024, 'x'), error_code::content_too_large},
  };
  for (const auto& [content, code] : contents) {
    expect_error(mem->append_entry("Decisions", content, "2025-01-20"), code, content.substr(0, 30));
  }
  CHECK(box.whole() == before);
}

TEST_CASE("several processes appending to one log at once lose nothing and keep each writer's order") {
  sandbox box;
  constexpr int writers = 4;
  constexpr int entries = 25;
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 0;
      auto repo = memory::open_repository(box.repo.string());
      if (!repo) ::_exit(10);
      auto mem = memory::agent_memory::open(**repo, "aristotle");
      if (!mem) ::_exit(11);
      for (int i = 0; i < entries && status == 0; ++i) {
        const std::string entry = "- writer " + std::to_string(w) + " entry " + std::to_string(i);
        if (!mem->append_entry(i % 2 ? "Decisions" : "Next Actions", entry, "2025-01-20")) status = 12;
        if (i % 5 == 0 && !mem->update_summary("Decisions", entry, memory::summary_mode::append)) status = 13;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const std::string log = read_file(box.repo / ".github/agent-memory/aristotle/logs/2025-01-20.md");
  auto parsed = memory::parse_sections(log);
  REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
  for (int w = 0; w < writers; ++w) {
    std::size_t decisions = 0, actions = 0;
    for (int i = 0; i < entries; ++i) {
      const std::string entry = "- writer " + std::to_string(w) + " entry " + std::to_string(i);
      std::size_t& at = i % 2 ? decisions : actions;
      const std::size_t found = log.find(entry + "\n", at);
      CHECK_MESSAGE(found != std::string::npos, entry << " lost or out of order");
      if (found != std::string::npos) at = found;
    }
  }
  std::size_t lines = 0;
  for (const auto& s : parsed->sections) {
    for (const std::string& line : s.body) lines += line.starts_with("- writer ");
  }
  CHECK(lines == writers * entries);
  const std::string summary = read_file(box.repo / ".github/agent-memory/aristotle/_summary.md");
  std::size_t summary_entries = 0;
  for (std::size_t at = summary.find("- writer "); at != std::string::npos; at = summary.find("- writer ", at + 1)) {
    ++summary_entries;
  }
  CHECK(summary_entries == writers * (entries / 5));
  // No temporary file is left behind.
  for (const auto& entry : fs::recursive_directory_iterator(box.repo / ".github")) {
    CHECK_MESSAGE(entry.path().filename().string().find(".tmp.") == std::string::npos, entry.path());
  }
}

}  // namespace memory_agent_memory_paths_test
