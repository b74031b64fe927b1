// The stdio transport (agentctx/mcp/stdio_transport.hpp) over real pipes:
// answers in order, one per line, oversized lines skipped, the last line
// without '\n' answered at end of input, and a closed output reported as an
// error instead of killing the process with SIGPIPE.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "agentctx/mcp/stdio_transport.hpp"
#include "mcp/mcp_test_support.hpp"

namespace mcp_stdio_transport_test {

namespace mcp = agentctx::mcp;

namespace {

struct pipe_pair {
  int read_end = -1;
  int write_end = -1;
  pipe_pair() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    read_end = fds[0];
    write_end = fds[1];
  }
  ~pipe_pair() {
    close_read();
    close_write();
  }
  void close_read() {
    if (read_end >= 0) ::close(read_end);
    read_end = -1;
  }
  void close_write() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

mcp::server ping_server(std::size_t max_line_bytes) {
  mcp::server_limits limits;
  limits.max_line_bytes = max_line_bytes;
  return mcp::server({"pipes", "1"}, mcp::tool_registry(), limits);
}

}  // namespace

TEST_CASE("serve_stdio: answers each line in order until end of input") {
  pipe_pair input;
  pipe_pair output;
  mcp::server server = ping_server(1024);
  agentctx::result<void> served;
  std::thread serving([&] { served = mcp::serve_stdio(server, input.read_end, output.write_end); });

  // Written from another thread while the server runs: 8 MiB of one
  // oversized line in pieces, between requests, and a last line without '\n'.
  std::thread writing([&] {
    const std::string before = mcp_test::request(1, "ping") + "\n" +
                               R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n\r\n";
    CHECK(::write(input.write_end, before.data(), before.size()) == static_cast<ssize_t>(before.size()));
    const std::string block(65536, 'x');
    for (int i = 0; i < 128; ++i) {
      CHECK(::write(input.write_end, block.data(), block.size()) == static_cast<ssize_t>(block.size()));
    }
    const std::string after = "\n" + mcp_test::request(2, "ping") + "\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}";
    CHECK(::write(input.write_end, after.data(), after.size()) == static_cast<ssize_t>(after.size()));
    input.close_write();
  });

  // The answers are far smaller than a pipe's buffer: the server never waits on them.
  writing.join();
  serving.join();
  REQUIRE(served.has_value());
  output.close_write();
  std::string received;
  char buffer[4096];
  for (ssize_t got; (got = ::read(output.read_end, buffer, sizeof buffer)) > 0;) {
    received.append(buffer, static_cast<std::size_t>(got));
  }
  CHECK(received == R"({"jsonrpc":"2.0","id":1,"result":{}})"
                    "\n"
                    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the message has 8388608 bytes; )"
                    R"(the limit is 1024 bytes per line"}})"
                    "\n"
                    R"({"jsonrpc":"2.0","id":2,"result":{}})"
                    "\n"
                    R"({"jsonrpc":"2.0","id":3,"result":{}})"
                    "\n");
  CHECK(server.initialized());
}

TEST_CASE("serve_stdio: a closed output ends serving with an error, not SIGPIPE") {
  pipe_pair input;
  pipe_pair output;
  output.close_read();
  const std::string line = mcp_test::request(1, "ping") + "\n";
  REQUIRE(::write(input.write_end, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  input.close_write();
  mcp::server server = ping_server(1024);
  const agentctx::result<void> served = mcp::serve_stdio(server, input.read_end, output.write_end);
  REQUIRE_FALSE(served.has_value());
  CHECK(served.error().code == agentctx::errc::io_error);
  CHECK(served.error().sys_errno == EPIPE);
  CHECK(served.error().message.rfind("writing an answer failed: ", 0) == 0);
}

TEST_CASE("serve_stdio: a failed read is an error") {
  mcp::server server = ping_server(1024);
  const agentctx::result<void> served = mcp::serve_stdio(server, -1, -1);
  REQUIRE_FALSE(served.has_value());
  CHECK(served.error().sys_errno == EBADF);
  CHECK(served.error().message.rfind("reading a message failed: ", 0) == 0);
}

}  // namespace mcp_stdio_transport_test
