// Reading a FILE argument whole, "-" being standard input: the one reader
// every agentctx tool uses for the input files it is given (relay deposit,
// import, hash and canonical; agentsdb import and write --file; read-context
// propose --file; agent-memory --file).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"

namespace agentctx_cli {

/// Reads descriptor `fd` to its end with read(): for what cannot be mapped
/// (standard input, a pipe, a character device). Errors: those of read(),
/// naming `path` (a folder: io_error, EISDIR).
inline agentctx::result<std::string> read_descriptor(int fd, const std::string& path) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return agentctx::io::detail::system_failure("read", errno, path);
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

/// The whole of `path`, or of standard input when it is "-": anything
/// readable, a regular file, a pipe or a character device such as /dev/null
/// (opened once: a FIFO's writer may be gone after a first open). Errors:
/// those of open() and read() (a missing file: not_found with its errno; a
/// folder: io_error, EISDIR), naming the path.
inline agentctx::result<std::string> read_input(const std::string& path) {
  if (path == "-") return read_descriptor(STDIN_FILENO, "standard input");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return agentctx::io::detail::system_failure("open", errno, path);
  auto text = read_descriptor(fd, path);
  ::close(fd);
  return text;
}

/// The name of an input in messages: the path, or "standard input".
inline std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

}  // namespace agentctx_cli
