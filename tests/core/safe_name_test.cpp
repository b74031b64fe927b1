// Safe names (core/safe_name.hpp): the agent names of agent memory and the
// item ids of the context loader. The table is the list of names
// that must never become a path component, and names that must.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/core/safe_name.hpp"

namespace core_safe_name_test {

TEST_CASE("safe names: one plain path component, or refused with the reason") {
  const std::vector<std::string> good = {
      "aristotle", "Aristotle", "a", "agent-7", "agent_7", "we..ird", "v1.2", "0day", std::string(64, 'x'),
      "console", "nullable", "com10", "lpt0", "auxiliary"};
  for (const std::string& name : good) {
    CAPTURE(name);
    CHECK(agentctx::safe_name_problem(name).empty());
    CHECK(agentctx::check_safe_name(name, "agent name").has_value());
  }
  struct bad_case {
    std::string name;
    std::string problem;
  };
  const std::vector<bad_case> bad = {
      {"", "is empty"},
      {".", "must start with an ASCII letter or digit"},
      {"..", "must start with an ASCII letter or digit"},
      {"../x", "must start with an ASCII letter or digit"},
      {"a/b", "contains a path separator"},
      {"a\\b", "contains a path separator"},
      {"/etc", "must start with an ASCII letter or digit"},
      {std::string("a\0b", 3), "contains a control character"},
      {"a\nb", "contains a control character"},
      {"a\tb", "contains a control character"},
      {"a\x7f" "b", "contains a control character"},
      {"-rf", "must start with an ASCII letter or digit"},
      {".hidden", "must start with an ASCII letter or digit"},
      {std::string(65, 'x'), "is longer than 64 bytes"},
      {"caf\xc3\xa9", "contains a non-ASCII character"},
      {"\xef\xbd\x81gent", "must start with an ASCII letter or digit"},  // fullwidth a
      {"agent\xe2\x80\xae" "txt", "contains a non-ASCII character"},    // U+202E right-to-left override
      {"ab\xff", "contains a non-ASCII character"},                     // invalid UTF-8
      {"a b", "contains a character other than A-Z a-z 0-9 - _ ."},
      {"a:b", "contains a character other than A-Z a-z 0-9 - _ ."},
      {"con", "is a Windows device name"},
      {"CON", "is a Windows device name"},
      {"Nul.md", "is a Windows device name"},
      {"com1", "is a Windows device name"},
      {"LPT9.txt", "is a Windows device name"},
      {"aux", "is a Windows device name"},
      {"prn", "is a Windows device name"},
  };
  for (const bad_case& c : bad) {
    CAPTURE(c.name);
    CHECK(agentctx::safe_name_problem(c.name) == c.problem);
    auto checked = agentctx::check_safe_name(c.name, "agent name");
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == agentctx::errc::invalid_argument);
    CHECK(checked.error().message.starts_with("agent name \""));
    CHECK(checked.error().message.ends_with(c.problem));
    // The message is one printable ASCII line whatever the name holds.
    for (char ch : checked.error().message) {
      CHECK(static_cast<unsigned char>(ch) >= 0x20);
      CHECK(static_cast<unsigned char>(ch) < 0x7F);
    }
  }
}

}  // namespace core_safe_name_test
