// Where the tests find the shared reference fixtures: $AGENTCTX_AGDB_FIXTURES
// when set, else the build's AGENTCTX_SHARED_FIXTURES + "/agdb". Tests skip,
// saying so, when the files are absent.
#pragma once

#include <cstdlib>
#include <string>

namespace test_support {

inline std::string agdb_fixture_dir() {
  if (const char* env = std::getenv("AGENTCTX_AGDB_FIXTURES"); env != nullptr && *env != '\0') return env;
  return AGENTCTX_SHARED_FIXTURES "/agdb";  // one literal: GCC 12 warns falsely on building it at run time
}

}  // namespace test_support
