// Reading a FILE argument, "-" being standard input: the one reader every
// agentctx tool uses for the input files it is given, whole (relay deposit,
// hash and canonical; agentsdb import and write --file; read-context
// propose --file; agent-memory --file; ctxstore append --file and standard
// input) or piece by piece (relay import).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"

namespace agentctx_cli {

/// An input read piece by piece: a file, or standard input for "-";
/// anything readable, a regular file, a pipe or a character device such as
/// /dev/null (opened once: a FIFO's writer may be gone after a first open).
class input_stream {
 public:
  /// Opens `path`. Errors: those of open() (a missing file: not_found with
  /// its errno), naming the path.
  static agentctx::result<input_stream> open(const std::string& path,
                                             std::size_t limit = std::numeric_limits<std::size_t>::max()) {
    if (path == "-") return input_stream(STDIN_FILENO, "standard input", limit, false);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return agentctx::io::detail::system_failure("open", errno, path);
    return input_stream(fd, path, limit, true);
  }

  input_stream(input_stream&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), name_(std::move(other.name_)), limit_(other.limit_), read_(other.read_),
        owned_(other.owned_) {}
  input_stream& operator=(input_stream&&) = delete;
  ~input_stream() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }

  /// Reads up to `buffer.size()` bytes: how many, 0 at the end. Errors:
  /// those of read(), naming the path (a folder: io_error, EISDIR);
  /// invalid_argument once the input holds more than the limit (reading
  /// stops there: /dev/zero ends too).
  agentctx::result<std::size_t> read(std::span<char> buffer) {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return agentctx::io::detail::system_failure("read", errno, name_);
      if (static_cast<std::size_t>(n) > limit_ - read_) {
        return agentctx::fail(agentctx::errc::invalid_argument,
                              "larger than " + std::to_string(limit_) + " bytes, the most it may hold", name_);
      }
      read_ += static_cast<std::size_t>(n);
      return static_cast<std::size_t>(n);
    }
  }

 private:
  input_stream(int fd, std::string name, std::size_t limit, bool owned)
      : fd_(fd), name_(std::move(name)), limit_(limit), owned_(owned) {}

  int fd_;
  std::string name_;
  std::size_t limit_;
  std::size_t read_ = 0;
  bool owned_;
};

/// The whole of `path`, or of standard input when it is "-" (input_stream
/// says what may be read). Errors: those of input_stream.
inline agentctx::result<std::string> read_input(const std::string& path,
                                                std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  auto in = input_stream::open(path, limit);
  if (!in) return agentctx::unexpected(std::move(in).error());
  std::string text;
  char buffer[65536];
  for (;;) {
    auto n = in->read(std::span<char>(buffer, sizeof buffer));
    if (!n) return agentctx::unexpected(std::move(n).error());
    if (*n == 0) return text;
    text.append(buffer, *n);
  }
}

/// The name of an input in messages: the path, or "standard input".
inline std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

}  // namespace agentctx_cli
