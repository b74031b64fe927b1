// agentctx/agdb/command_embedder.hpp: an embedder that asks a program.
//
// `command_embedder` runs a user-configured program (argv) and keeps it for
// its own lifetime, so a model is loaded once, not once per text. The program
// is started lazily, by the first embed() call that has texts to embed.
//
// Protocol (docs/embedders.md has the full text and an example program), one
// JSON document per line, UTF-8, '\n' after each:
//   request  {"text":"<the text, JSON-escaped>"}     one per text, in order
//   answer   [0.12,-0.5,...]                          exactly dim finite numbers
//        or  {"embedding":[0.12,-0.5,...]}           the same, in an object
//        or  {"error":"message"}                      the text cannot be embedded
// The program answers requests in the order it receives them; it may answer
// each before reading the next or read ahead. We write requests and read
// answers at the same time (see io::child_process::exchange), so a program
// that answers while we are still writing cannot deadlock either side.
// Text that is not valid UTF-8 reaches the program with each ill-formed
// sequence replaced by U+FFFD (JSON strings are Unicode).
//
// The profile is whatever the user declares (embedding_profile: backend,
// model, revision, dim, output_norm); the library cannot verify it. Vectors
// are stored as the program gives them, rounded to the nearest f32; nothing
// is renormalised.
//
// Errors of embed() are io_error, on one line, naming the program (error::path
// is the command line): it cannot be started; it answered {"error":...} (the
// message is passed on); an answer is not JSON, not an array or object of the
// shapes above, has another length than dim, or holds a value that is not a
// finite number (or does not fit an f32); the program exited (with status N)
// before answering every request; no progress within the timeout. After a
// failed call the program is stopped; the next call starts it anew.
//
// Thread-safety: calls must not overlap. The destructor closes the program's
// stdin and waits up to the timeout for it to exit, then kills it: a program
// should exit when its stdin ends.
#pragma once

#include <simdjson.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/subprocess.hpp"
#include "agentctx/json/f32_array.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

struct command_embedder_options {
  /// The program and its arguments, e.g. {"/bin/sh", "-c", "python3 embed.py"}.
  std::vector<std::string> command;
  /// The declared profile; its dim is the answer length required.
  embedding_profile profile;
  /// embed() fails when the program neither reads nor answers for this long;
  /// zero waits forever.
  std::chrono::milliseconds timeout{60000};
};

namespace detail {

/// The command line as errors show it: arguments joined by spaces.
inline std::string describe_command(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& argument : command) {
    if (!out.empty()) out += ' ';
    out += argument;
  }
  return out;
}

/// Parses one answer line of the protocol above (without its '\n'; a
/// trailing '\r' is the caller's to strip) into `row`, whose size is the
/// declared dim. `index` is the 0-based position of the answer, for the
/// messages. Errors (invalid_value, message only): the line is not JSON, not
/// one of the three shapes, an {"error":...} answer ("embedding text N
/// failed: ..."), the wrong length, or a value json::read_f32_values()
/// rejects. The parser is reused between calls.
inline result<void> parse_embedding_answer(simdjson::dom::parser& parser, std::string_view line, std::size_t index,
                                           std::span<float> row) {
  const std::string which = "answer " + std::to_string(index + 1);
  const auto invalid = [](std::string message) { return fail(errc::invalid_value, std::move(message)); };
  simdjson::dom::element root;
  if (parser.parse(line.data(), line.size()).get(root) != simdjson::SUCCESS) {
    return invalid(which + " is not JSON: " + quote_for_message(line));
  }
  simdjson::dom::array values;
  if (root.is_object()) {
    simdjson::dom::element member;
    if (root.at_key("error").get(member) == simdjson::SUCCESS) {
      std::string_view message;
      if (member.get_string().get(message) != simdjson::SUCCESS) message = "(an error that is not a string)";
      return invalid("embedding text " + std::to_string(index + 1) + " failed: " + std::string(message));
    }
    if (root.at_key("embedding").get_array().get(values) != simdjson::SUCCESS) {
      return invalid(which + " is an object without an \"embedding\" array or an \"error\" string");
    }
  } else if (root.get_array().get(values) != simdjson::SUCCESS) {
    return invalid(which + " is neither an array of numbers nor an object");
  }
  if (values.size() != row.size()) {
    return invalid(which + " has " + std::to_string(values.size()) + " values, expected dim " +
                   std::to_string(row.size()));
  }
  if (auto read = json::read_f32_values(values, row); !read) {
    return invalid(which + " " + std::move(read).error().message);
  }
  return {};
}

}  // namespace detail

class command_embedder final : public embedder {
 public:
  /// Nothing is started yet. An empty command or a dim of 0 is reported by
  /// embed() as invalid_argument.
  explicit command_embedder(command_embedder_options options)
      : options_(std::move(options)), name_(detail::describe_command(options_.command)) {}
  command_embedder(const command_embedder&) = delete;
  command_embedder& operator=(const command_embedder&) = delete;
  ~command_embedder() override {
    if (child_) (void)child_->wait();
  }

  const embedding_profile& profile() const override { return options_.profile; }

  /// See the file comment for the protocol and the errors.
  result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    AGENTCTX_TRY(check_embedding_output_size(texts.size(), options_.profile.dim, out.size()));
    if (texts.empty()) return {};
    if (options_.command.empty()) return fail(errc::invalid_argument, "the embedding command is empty");
    auto done = exchange(texts, out);
    if (!done) child_.reset();  // the stream is out of step: start afresh next time
    return done;
  }

 private:
  result<void> exchange(std::span<const std::string_view> texts, std::span<float> out) {
    if (!child_) {
      auto started = io::child_process::spawn(options_.command, io::spawn_options{options_.timeout, name_});
      if (!started) return unexpected(std::move(started).error());
      child_.emplace(std::move(*started));
    }
    requests_.clear();
    for (const std::string_view text : texts) {
      json::writer(requests_).begin_object().key("text").value(text).end_object();
      requests_ += '\n';
    }
    std::size_t answered = 0;
    received_.clear();
    return child_->exchange(requests_, received_, [&](std::string& received) -> result<bool> {
      std::size_t line_start = 0;
      for (std::size_t newline; answered < texts.size() && (newline = received.find('\n', line_start)) != std::string::npos;) {
        std::string_view line(received.data() + line_start, newline - line_start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (auto read = detail::parse_embedding_answer(parser_, line, answered, out.subspan(answered * options_.profile.dim,
                                                                                    options_.profile.dim));
            !read) {
          return failure(std::move(read).error().message);
        }
        ++answered;
        line_start = newline + 1;
      }
      received.erase(0, line_start);
      if (answered == texts.size() && !received.empty()) {
        return failure("wrote more than one line per request");
      }
      return answered == texts.size();
    });
  }

  unexpected failure(std::string message) const { return fail(errc::io_error, std::move(message), name_); }

  command_embedder_options options_;
  std::string name_;
  std::optional<io::child_process> child_;
  simdjson::dom::parser parser_;
  std::string requests_;
  std::string received_;
};

}  // namespace agentctx::agdb
