// agentctx/mcp/stdio_transport.hpp: MCP's stdio transport over two file
// descriptors.
//
//   auto served = mcp::serve_stdio(server, STDIN_FILENO, STDOUT_FILENO);
//
// Reads newline-delimited messages from `input` with a line_reader bounded
// by server.limits().max_line_bytes, hands each line to the server and
// writes every answer followed by '\n' to `output`, in order, one message
// per line (the JSON writer escapes newlines inside strings, so an answer
// is always one line). A line over the limit is skipped without being
// held and answered with the server's error. Returns at end of input.
//
// Nothing but answers is written to `output`. Writing to a closed pipe
// never raises SIGPIPE in this process (it is blocked in the calling thread
// while writing): it ends serving with an io_error.
// Errors: io_error for a failed read or write (sys_errno set).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "agentctx/core/result.hpp"
#include "agentctx/io/subprocess.hpp"
#include "agentctx/mcp/line_reader.hpp"
#include "agentctx/mcp/server.hpp"

namespace agentctx::mcp {

namespace detail {

inline error stdio_error(std::string_view what, int errno_value) {
  error e = make_error(errc::io_error, std::string(what) + ": " + std::strerror(errno_value));
  e.sys_errno = errno_value;
  return e;
}

// Writes all of `bytes` to `fd`.
inline result<void> write_all(int fd, std::string_view bytes) {
  const io::detail::sigpipe_blocker no_sigpipe;
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return unexpected(stdio_error("writing an answer failed", errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return {};
}

}  // namespace detail

/// Serves `server` over `input` and `output` until end of input; see the
/// file comment.
inline result<void> serve_stdio(server& server, int input, int output) {
  line_reader lines(server.limits().max_line_bytes);
  result<void> write_failure;
  std::string framed;
  const auto on_line = [&](const line_reader::line& line) {
    const std::optional<std::string> answer =
        line.oversized ? server.handle_oversized_line(line.size) : server.handle_line(line.text);
    if (!answer) return true;
    framed.assign(*answer);
    framed.push_back('\n');
    write_failure = detail::write_all(output, framed);
    return write_failure.has_value();
  };
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(input, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return unexpected(detail::stdio_error("reading a message failed", errno));
    }
    if (got == 0) break;
    if (!lines.feed(std::string_view(buffer, static_cast<std::size_t>(got)), on_line)) return write_failure;
  }
  if (!lines.finish(on_line)) return write_failure;
  return {};
}

}  // namespace agentctx::mcp
