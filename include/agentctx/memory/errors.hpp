// agentctx/memory/errors.hpp: the errors of agent memory (seed 004, "Error
// Handling"): a closed set of codes, each with its name in the seed's
// spelling, and the JSON shape the seed shows,
//   {"error": "InvalidSection", "message": "Section 'Thoughts' is not defined in schema"}
//
// Operations return outcome<T>: the value, or a memory_error. Failures of the
// file system (agentctx::error) become memory errors by from_io(): a path
// that leads outside the repository is PathOutsideRepository, a lock held
// elsewhere Locked, a system call that failed IoError.
//
// Warnings (a schema version other than the one implemented, a summary that
// is not a document of sections) use the same codes and travel beside a
// successful result: the seed asks for warnings, not failures, there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "agentctx/core/error.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::memory {

enum class error_code : std::uint8_t {
  invalid_agent_name,       ///< not a safe name (core/safe_name.hpp)
  invalid_repo_root,        ///< repo_root relative, "/", not canonical, missing, not a directory, not allowed
  invalid_date,             ///< not a real YYYY-MM-DD date
  invalid_section,          ///< a section the schema does not define (or Header, which is not appendable)
  invalid_mode,             ///< an update mode other than append and replace
  invalid_argument,         ///< another argument out of its domain (limit, base_hash)
  invalid_content,          ///< content that is empty, not UTF-8, or would create markdown structure
  content_too_large,        ///< content over the limit, or a file that would grow past its limit
  path_outside_repository,  ///< a path that leaves the repository (a symlink, "..")
  invalid_schema,           ///< _schema.md that is not a schema
  malformed_log,            ///< a session log that is not a document of the schema's sections
  malformed_summary,        ///< _summary.md that is not a document of sections
  schema_version_mismatch,  ///< a schema version other than the one implemented (a warning)
  conflict,                 ///< the summary changed since the version an update was based on
  locked,                   ///< another writer holds the agent's lock (and waiting was not asked for)
  io_error,                 ///< a system call failed (permissions, full disk, a directory where a file belongs)
};

/// The seed's spelling of a code: "InvalidSection", "PathOutsideRepository", ...
constexpr std::string_view code_name(error_code code) noexcept {
  switch (code) {
    case error_code::invalid_agent_name: return "InvalidAgentName";
    case error_code::invalid_repo_root: return "InvalidRepoRoot";
    case error_code::invalid_date: return "InvalidDate";
    case error_code::invalid_section: return "InvalidSection";
    case error_code::invalid_mode: return "InvalidMode";
    case error_code::invalid_argument: return "InvalidArgument";
    case error_code::invalid_content: return "InvalidContent";
    case error_code::content_too_large: return "ContentTooLarge";
    case error_code::path_outside_repository: return "PathOutsideRepository";
    case error_code::invalid_schema: return "InvalidSchema";
    case error_code::malformed_log: return "MalformedLog";
    case error_code::malformed_summary: return "MalformedSummary";
    case error_code::schema_version_mismatch: return "SchemaVersionMismatch";
    case error_code::conflict: return "Conflict";
    case error_code::locked: return "Locked";
    case error_code::io_error: return "IoError";
  }
  return "IoError";
}

/// A failed operation: its code and a one-line message.
struct memory_error {
  error_code code = error_code::io_error;
  std::string message;

  /// {"error": "<Code>", "message": "..."}
  std::string json(json::layout style = json::layout::compact) const {
    std::string out;
    json::writer w(out, style);
    w.begin_object().key("error").value(code_name(code)).key("message").value(message).end_object();
    return out;
  }
};

/// Something the caller should know about a successful operation.
struct warning {
  error_code code = error_code::schema_version_mismatch;
  std::string message;
};

/// The result of an operation: a T, or the memory_error it failed with.
template <class T>
class [[nodiscard]] outcome {
 public:
  outcome(T value) : storage_(std::in_place_index<0>, std::move(value)) {}           // NOLINT: implicit by design
  outcome(memory_error e) : storage_(std::in_place_index<1>, std::move(e)) {}         // NOLINT

  bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  T& operator*() & noexcept { return *std::get_if<0>(&storage_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&storage_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&storage_)); }
  T* operator->() noexcept { return std::get_if<0>(&storage_); }
  const T* operator->() const noexcept { return std::get_if<0>(&storage_); }
  /// The error; only meaningful when !has_value().
  const memory_error& error() const& noexcept { return *std::get_if<1>(&storage_); }
  memory_error&& error() && noexcept { return std::move(*std::get_if<1>(&storage_)); }

 private:
  std::variant<T, memory_error> storage_;
};

inline memory_error failure(error_code code, std::string message) { return {code, std::move(message)}; }

/// The memory error for a failure of the file system on a file whose bytes,
/// when they are the problem, are a `data_code` error (MalformedLog for a
/// session log, MalformedSummary for the summary, InvalidSchema for the
/// schema).
inline memory_error from_io(const error& e, error_code data_code) {
  error_code code = error_code::io_error;
  if (e.code == errc::outside_root) code = error_code::path_outside_repository;
  if (e.code == errc::locked) code = error_code::locked;
  if (is_data_error(e.code)) code = data_code;
  return {code, describe_for_message(e)};
}

}  // namespace agentctx::memory
