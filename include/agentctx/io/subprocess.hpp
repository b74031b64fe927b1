// agentctx/io/subprocess.hpp: a child process whose standard input and
// output are connected to us.
//
//   auto child = child_process::spawn({"cat"});
//   if (!child) return unexpected(child.error());
//   std::string answer;
//   AGENTCTX_TRY(child->exchange("hello\n", answer, [](std::string& received) -> result<bool> {
//     return received.find('\n') != std::string::npos;
//   }));
//   auto status = child->wait();  // closes its stdin, reaps it: 0
//
// The child is started with posix_spawnp (PATH is searched when argv[0] has
// no '/'); its stdin and stdout are pipes to us, its stderr is ours, and it
// starts with an empty signal mask and default SIGPIPE handling whatever this
// process uses. No other descriptor of ours leaks into it as long as they are
// opened with O_CLOEXEC, as every agentctx descriptor is.
//
// Robustness, the reasons this is not popen():
//   - writing to a child that has exited never kills this process with
//     SIGPIPE: writes happen with SIGPIPE blocked in the calling thread, a
//     SIGPIPE they raise is consumed before it is unblocked, and EPIPE is
//     reported as an error naming the program;
//   - exchange() writes and reads at the same time (poll on both pipes), so a
//     child that answers before it has read all its input cannot deadlock us;
//   - every wait is bounded by the timeout of spawn_options (an inactivity
//     timeout: no byte accepted or produced by the child for that long).
//
// Errors name the program: error::path is spawn_options::name (argv[0] by
// default), so describe() reads "cat: write to stdin failed: Broken pipe".
//
// Lifetime: the destructor of a child that is still running closes its pipes,
// kills it with SIGKILL and reaps it, so no zombie is ever left behind. Use
// wait() for a graceful end (close stdin, let the child exit on its own).
//
// Thread-safety: one child_process must not be used from two threads at once.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"

extern char** environ;

namespace agentctx::io {

struct spawn_options {
  /// How long exchange() and wait() may wait without the child
  /// accepting or producing a single byte; zero or negative waits forever.
  std::chrono::milliseconds timeout{0};
  /// The name errors give the program (error::path); empty: argv[0].
  std::string name;
};

namespace detail {

// An owned descriptor.
class unique_descriptor {
 public:
  unique_descriptor() noexcept = default;
  explicit unique_descriptor(int fd) noexcept : fd_(fd) {}
  unique_descriptor(unique_descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_descriptor& operator=(unique_descriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  unique_descriptor(const unique_descriptor&) = delete;
  unique_descriptor& operator=(const unique_descriptor&) = delete;
  ~unique_descriptor() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Blocks SIGPIPE in the calling thread while it lives. A SIGPIPE raised by a
// write meanwhile is thread-directed and stays pending; it is consumed before
// the old mask returns, unless one was already pending before (that one is
// somebody else's and must still be delivered).
class sigpipe_blocker {
 public:
  sigpipe_blocker() noexcept {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_mask_);
    sigset_t pending;
    sigemptyset(&pending);
    already_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
  }
  sigpipe_blocker(const sigpipe_blocker&) = delete;
  sigpipe_blocker& operator=(const sigpipe_blocker&) = delete;
  ~sigpipe_blocker() {
    if (!already_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        const timespec no_wait{0, 0};
        while (sigtimedwait(&sigpipe_, nullptr, &no_wait) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }

 private:
  sigset_t sigpipe_{};
  sigset_t previous_mask_{};
  bool already_pending_ = false;
};

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct spawn_attributes {
  posix_spawnattr_t attributes{};
  posix_spawn_file_actions_t actions{};
  bool attributes_ready = false;
  bool actions_ready = false;
  spawn_attributes() = default;
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
  ~spawn_attributes() {
    if (attributes_ready) posix_spawnattr_destroy(&attributes);
    if (actions_ready) posix_spawn_file_actions_destroy(&actions);
  }
};

inline error process_error(std::string_view what, int errno_value, const std::string& name) {
  std::string message(what);
  if (errno_value != 0) {
    message += ": ";
    message += std::generic_category().message(errno_value);
  }
  error e = make_error(errc::io_error, std::move(message), name);
  e.sys_errno = errno_value;
  return e;
}

inline bool set_nonblocking(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Exit code as a shell reports it: the status, or 128 + N for signal N.
inline int shell_exit_code(int status) noexcept {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace detail

/// "exited with status 3" / "was killed by signal 9" for a shell exit code as
/// wait() returns it; 126 and 127 add what a shell means by them.
inline std::string describe_exit_code(int exit_code) {
  if (exit_code > 128) return "was killed by signal " + std::to_string(exit_code - 128);
  std::string out = "exited with status " + std::to_string(exit_code);
  if (exit_code == 126) out += " (command not executable)";
  if (exit_code == 127) out += " (command not found)";
  return out;
}

class child_process {
 public:
  /// Consumes what the child wrote so far (`received` holds every byte not
  /// yet erased by an earlier call; erase what you have used). Returns true
  /// once it has all it waits for, or an error to stop the exchange.
  using output_handler = std::function<result<bool>(std::string& received)>;

  /// Starts argv[0] with arguments argv[1..].
  /// Errors: invalid_argument for an empty argv; io_error naming the program
  /// when it cannot be started (sys_errno ENOENT for a program that does not
  /// exist, EACCES for one that is not executable) or a pipe cannot be made.
  static result<child_process> spawn(std::vector<std::string> argv, spawn_options options = {}) {
    if (argv.empty() || argv[0].empty()) return fail(errc::invalid_argument, "no program to run");
    child_process child;
    child.name_ = options.name.empty() ? argv[0] : std::move(options.name);
    child.timeout_ = options.timeout;

    int stdin_pipe[2];
    int stdout_pipe[2];
    if (::pipe2(stdin_pipe, O_CLOEXEC) != 0) return unexpected(detail::process_error("pipe failed", errno, child.name_));
    detail::unique_descriptor stdin_read(stdin_pipe[0]);
    child.stdin_ = detail::unique_descriptor(stdin_pipe[1]);
    if (::pipe2(stdout_pipe, O_CLOEXEC) != 0) return unexpected(detail::process_error("pipe failed", errno, child.name_));
    child.stdout_ = detail::unique_descriptor(stdout_pipe[0]);
    detail::unique_descriptor stdout_write(stdout_pipe[1]);
    if (!detail::set_nonblocking(child.stdin_.get()) || !detail::set_nonblocking(child.stdout_.get())) {
      return unexpected(detail::process_error("fcntl failed", errno, child.name_));
    }

    detail::spawn_attributes spawn;
    if (posix_spawnattr_init(&spawn.attributes) != 0) {
      return unexpected(detail::process_error("posix_spawnattr_init failed", 0, child.name_));
    }
    spawn.attributes_ready = true;
    if (posix_spawn_file_actions_init(&spawn.actions) != 0) {
      return unexpected(detail::process_error("posix_spawn_file_actions_init failed", 0, child.name_));
    }
    spawn.actions_ready = true;
    sigset_t empty_mask;
    sigemptyset(&empty_mask);
    sigset_t default_signals;
    sigemptyset(&default_signals);
    sigaddset(&default_signals, SIGPIPE);
    // dup2 onto 0 and 1 clears O_CLOEXEC on the copies only.
    if (posix_spawnattr_setsigmask(&spawn.attributes, &empty_mask) != 0 ||
        posix_spawnattr_setsigdefault(&spawn.attributes, &default_signals) != 0 ||
        posix_spawnattr_setflags(&spawn.attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) != 0 ||
        posix_spawn_file_actions_adddup2(&spawn.actions, stdin_read.get(), STDIN_FILENO) != 0 ||
        posix_spawn_file_actions_adddup2(&spawn.actions, stdout_write.get(), STDOUT_FILENO) != 0) {
      return unexpected(detail::process_error("preparing posix_spawn failed", 0, child.name_));
    }

    std::vector<char*> arguments;
    arguments.reserve(argv.size() + 1);
    for (std::string& argument : argv) arguments.push_back(argument.data());
    arguments.push_back(nullptr);
    pid_t pid = -1;
    const int spawn_error = posix_spawnp(&pid, arguments[0], &spawn.actions, &spawn.attributes, arguments.data(), environ);
    if (spawn_error != 0) return unexpected(detail::process_error("cannot start program", spawn_error, child.name_));
    child.pid_ = pid;
    return child;
  }

  child_process(child_process&& other) noexcept { take(other); }
  child_process& operator=(child_process&& other) noexcept {
    if (this != &other) {
      kill();
      take(other);
    }
    return *this;
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process() { kill(); }

  /// The name errors give the program.
  const std::string& name() const noexcept { return name_; }
  /// The process id, or -1 once the child has been reaped.
  pid_t pid() const noexcept { return pid_; }
  /// True until the child has been reaped (by wait() or kill(), or after an
  /// exchange() that found it exited).
  bool running() const noexcept { return pid_ > 0; }

  /// Writes all of `data` to the child's stdin, storing whatever the child
  /// writes meanwhile in `received` (appended) so that it never blocks on a
  /// full stdout pipe.
  /// Errors (io_error naming the program): the child exited before reading
  /// everything ("the program exited with status 3 before reading all its
  /// input"; it is reaped) or closed its stdin ("write to stdin failed:
  /// Broken pipe"), the timeout passed, stdin was closed by close_stdin().
  result<void> write_all(std::string_view data, std::string& received) {
    return exchange(data, received, [](std::string&) -> result<bool> { return true; });
  }

  /// Writes `data` and reads the child's output at the same time, calling
  /// `handler` after every read, until all of `data` is written and the
  /// handler has returned true (it is called once with what is already in
  /// `received` before anything is read). Output the handler does not erase
  /// stays in `received` for the next call.
  /// Errors (io_error naming the program): see write_all(); the child closed
  /// its stdout or exited before the handler was satisfied ("the program
  /// exited with status 3 before answering"); the timeout passed ("no
  /// progress within 200 ms"); and any error the handler returns.
  result<void> exchange(std::string_view data, std::string& received, const output_handler& handler) {
    if (!running()) return unexpected(detail::process_error("the program is not running", 0, name_));
    if (!data.empty() && !stdin_) return unexpected(detail::process_error("its stdin is already closed", 0, name_));
    auto satisfied = handler(received);
    if (!satisfied) return unexpected(std::move(satisfied).error());
    bool done_reading = *satisfied;
    std::size_t written = 0;
    detail::sigpipe_blocker blocker;
    auto last_progress = std::chrono::steady_clock::now();
    char buffer[65536];
    while (written < data.size() || !done_reading) {
      pollfd fds[2];
      nfds_t count = 0;
      int stdin_slot = -1;
      int stdout_slot = -1;
      if (written < data.size()) {
        stdin_slot = static_cast<int>(count);
        fds[count++] = pollfd{stdin_.get(), POLLOUT, 0};
      }
      if (!done_reading || stdout_) {
        if (!stdout_) return unexpected(end_of_output_error());
        stdout_slot = static_cast<int>(count);
        fds[count++] = pollfd{stdout_.get(), POLLIN, 0};
      }
      const int ready = ::poll(fds, count, poll_timeout(last_progress));
      if (ready < 0) {
        if (errno == EINTR) continue;
        return unexpected(detail::process_error("poll failed", errno, name_));
      }
      if (ready == 0) {
        return unexpected(detail::process_error(
            "no progress within " + std::to_string(timeout_.count()) + " ms (timeout)", 0, name_));
      }
      if (stdin_slot >= 0 && fds[stdin_slot].revents != 0) {
        const ssize_t n = ::write(stdin_.get(), data.data() + written, data.size() - written);
        if (n < 0 && errno == EPIPE) return unexpected(end_of_input_error());
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
          return unexpected(detail::process_error("write to stdin failed", errno, name_));
        }
        if (n > 0) {
          written += static_cast<std::size_t>(n);
          last_progress = std::chrono::steady_clock::now();
        }
      }
      if (stdout_slot >= 0 && fds[stdout_slot].revents != 0) {
        const ssize_t n = ::read(stdout_.get(), buffer, sizeof buffer);
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
          return unexpected(detail::process_error("read from stdout failed", errno, name_));
        }
        if (n == 0) {
          stdout_.reset();
          if (!done_reading) return unexpected(end_of_output_error());
        }
        if (n > 0) {
          received.append(buffer, static_cast<std::size_t>(n));
          last_progress = std::chrono::steady_clock::now();
          if (!done_reading) {
            auto handled = handler(received);
            if (!handled) return unexpected(std::move(handled).error());
            done_reading = *handled;
          }
        }
      }
    }
    return {};
  }

  /// Closes the child's stdin (it sees end of file). Idempotent.
  void close_stdin() noexcept { stdin_.reset(); }

  /// Closes stdin, reads and discards the child's output until it exits, and
  /// reaps it. Returns its exit code: the status, or 128 + N when signal N
  /// killed it. When the timeout passes first, the child is killed (SIGKILL),
  /// reaped, and io_error is returned.
  /// Errors: io_error naming the program (timeout, waitpid failure, already
  /// reaped).
  result<int> wait() {
    if (!running()) return unexpected(detail::process_error("the program was already reaped", 0, name_));
    close_stdin();
    auto last_progress = std::chrono::steady_clock::now();
    char buffer[4096];
    while (stdout_) {
      pollfd fd{stdout_.get(), POLLIN, 0};
      const int ready = ::poll(&fd, 1, poll_timeout(last_progress));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        kill();
        return unexpected(detail::process_error(
            "did not exit within " + std::to_string(timeout_.count()) + " ms of its stdin closing; killed", 0, name_));
      }
      const ssize_t n = ::read(stdout_.get(), buffer, sizeof buffer);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) stdout_.reset();
      if (n > 0) last_progress = std::chrono::steady_clock::now();
    }
    return reap_within(last_progress);
  }

  /// Kills the child with SIGKILL and reaps it if it is still running; then
  /// closes the pipes. Idempotent.
  void kill() noexcept {
    stdin_.reset();
    stdout_.reset();
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  child_process() = default;

  void take(child_process& other) noexcept {
    name_ = std::move(other.name_);
    timeout_ = other.timeout_;
    pid_ = std::exchange(other.pid_, -1);
    stdin_ = std::move(other.stdin_);
    stdout_ = std::move(other.stdout_);
  }

  // Milliseconds poll() may wait before the inactivity timeout, or -1.
  int poll_timeout(std::chrono::steady_clock::time_point last_progress) const {
    if (timeout_.count() <= 0) return -1;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - last_progress);
    const auto left = timeout_ - elapsed;
    return left.count() <= 0 ? 0 : static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1 << 30));
  }

  // The child closed its stdout: it has exited or is about to; name its
  // exit code when it has one soon.
  error end_of_output_error() {
    close_stdin();
    const std::optional<int> code = reap_if_exiting();
    if (!code) return detail::process_error("the program closed its output before answering", 0, name_);
    return detail::process_error("the program " + describe_exit_code(*code) + " before answering", 0, name_);
  }

  // The child closed its stdin (EPIPE): usually because it exited.
  error end_of_input_error() {
    close_stdin();
    const std::optional<int> code = reap_if_exiting();
    if (!code) return detail::process_error("write to stdin failed", EPIPE, name_);
    return detail::process_error("the program " + describe_exit_code(*code) + " before reading all its input", 0,
                                 name_);
  }

  // The exit code of a child that exits within a moment (it has just closed
  // a pipe), reaping it; nullopt, leaving it running, when it does not.
  std::optional<int> reap_if_exiting() {
    std::chrono::milliseconds left{1000};
    if (timeout_.count() > 0) left = std::min(left, timeout_);
    std::chrono::milliseconds pause{1};
    for (;;) {
      int status = 0;
      const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
      if (reaped < 0 && errno == EINTR) continue;
      if (reaped == pid_) {
        pid_ = -1;
        stdout_.reset();
        return detail::shell_exit_code(status);
      }
      if (reaped < 0 || left.count() <= 0) return std::nullopt;
      std::this_thread::sleep_for(pause);
      left -= pause;
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }

  // Reaps the child, waiting at most the timeout after `since` (forever
  // without one); kills it when it does not exit in time.
  result<int> reap_within(std::chrono::steady_clock::time_point since) {
    int status = 0;
    std::chrono::milliseconds pause{1};
    for (;;) {
      const pid_t reaped = ::waitpid(pid_, &status, timeout_.count() > 0 ? WNOHANG : 0);
      if (reaped == pid_) {
        pid_ = -1;
        stdout_.reset();
        return detail::shell_exit_code(status);
      }
      if (reaped < 0) {
        if (errno == EINTR) continue;
        const int failure = errno;
        pid_ = -1;
        return unexpected(detail::process_error("waitpid failed", failure, name_));
      }
      if (poll_timeout(since) == 0) {
        kill();
        return unexpected(detail::process_error(
            "did not exit within " + std::to_string(timeout_.count()) + " ms; killed", 0, name_));
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }

  std::string name_;
  std::chrono::milliseconds timeout_{0};
  pid_t pid_ = -1;
  detail::unique_descriptor stdin_;
  detail::unique_descriptor stdout_;
};

}  // namespace agentctx::io
