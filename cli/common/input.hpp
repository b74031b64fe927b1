// Reading a FILE argument whole, "-" being standard input: the one reader
// every agentctx tool uses for the input files it is given (relay deposit,
// import, hash and canonical; agentsdb import and write --file; read-context
// propose --file; agent-memory --file; ctxstore append --file and standard
// input).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <limits>
#include <string>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"

namespace agentctx_cli {

/// Reads descriptor `fd` to its end with read(): for what cannot be mapped
/// (standard input, a pipe, a character device). Errors: those of read(),
/// naming `path` (a folder: io_error, EISDIR); invalid_argument when it holds
/// more than `limit` bytes (read stops there: /dev/zero ends too).
inline agentctx::result<std::string> read_descriptor(int fd, const std::string& path,
                                                     std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return agentctx::io::detail::system_failure("read", errno, path);
    if (n == 0) return text;
    if (static_cast<std::size_t>(n) > limit - text.size()) {
      return agentctx::fail(agentctx::errc::invalid_argument,
                            "larger than " + std::to_string(limit) + " bytes, the most it may hold", path);
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

/// The whole of `path`, or of standard input when it is "-": anything
/// readable, a regular file, a pipe or a character device such as /dev/null
/// (opened once: a FIFO's writer may be gone after a first open). Errors:
/// those of open() and read() (a missing file: not_found with its errno; a
/// folder: io_error, EISDIR), naming the path; invalid_argument past `limit`
/// bytes.
inline agentctx::result<std::string> read_input(const std::string& path,
                                                std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  if (path == "-") return read_descriptor(STDIN_FILENO, "standard input", limit);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return agentctx::io::detail::system_failure("open", errno, path);
  auto text = read_descriptor(fd, path, limit);
  ::close(fd);
  return text;
}

/// The name of an input in messages: the path, or "standard input".
inline std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

}  // namespace agentctx_cli
