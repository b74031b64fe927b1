// Where the tests find the shared reference fixtures: $AGENTCTX_AGDB_FIXTURES
// when set, else the build's AGENTCTX_SHARED_FIXTURES + "/agdb". Tests skip,
// saying so, when the files are absent.
#pragma once

#include <cstdlib>
#include <string>

namespace test_support {

inline std::string agdb_fixture_dir() {
  if (const char* env = std::getenv("AGENTCTX_AGDB_FIXTURES"); env != nullptr && *env != '\0') return env;
  std::string dir = AGENTCTX_SHARED_FIXTURES;  // appended in place: GCC 12 warns falsely on string + literal
  dir.append("/agdb");
  return dir;
}

}  // namespace test_support
