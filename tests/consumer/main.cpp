// Builds against the installed agentctx and checks a round trip through the
// public API, so a broken install (missing header, dependency) fails here.
#include <agentctx/agentctx.hpp>

int main() {
  agentctx::result<int> r = 42;
  return (r.has_value() && *r == 42) ? 0 : 1;
}
