// agentctx/relay/errors.hpp: the Agentic Protocol's error codes (seed 001
// sections 8 and 10.2) for the library's errors.
//
// Store operations fail with agentctx::error values; protocol_error_of()
// names the protocol code and HTTP status a transport would answer with. The
// relay CLI turns them into exit codes, the MCP server into tool errors
// carrying the code (docs/relay/protocol.md has the table).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "agentctx/core/error.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/utf8.hpp"

namespace agentctx::relay {

struct protocol_error {
  std::string_view code;  ///< "invalid_schema", "package_not_found", ...
  int http_status = 500;
};

/// The protocol's code for a store error:
///   invalid_argument    400 invalid_schema
///   invalid_transition  400 invalid_transition
///   archived            403 project_archived
///   not_found           404 package_not_found; project_not_found or
///                           session_not_found when the message is about a
///                           project ("project ... does not exist") or a session
///   already_exists      409 duplicate_package_id
///   unsupported         501 not_implemented
///   locked              503 store_locked
///   anything else       500 internal_error (damaged store, I/O failure)
/// An id or value given to an operation, `name` its field, that is not
/// UTF-8 (400 invalid_schema, "subject is not valid UTF-8"): the store holds
/// none such, so it is refused as a write holding it would be, rather than
/// looked for in vain.
inline error invalid_utf8_input(std::string_view name) {
  return make_error(errc::invalid_argument, std::string(name) + " is not valid UTF-8");
}

/// The error for a project that does not exist (404 project_not_found): the
/// one not_found error whose message starts with "project "; for an id that
/// is not UTF-8, invalid_utf8_input("project_id") (400).
inline error project_not_found(std::string_view project_id) {
  if (!is_valid_utf8(project_id)) return invalid_utf8_input("project_id");
  return make_error(errc::not_found, "project " + quote_for_message(project_id, 200) + " does not exist");
}

/// A write into an archived project (403 project_archived).
inline error project_archived(std::string_view project_id) {
  return make_error(errc::archived, "project " + quote_for_message(project_id) + " is archived (project_archived)");
}

inline protocol_error protocol_error_of(const error& e) noexcept {
  switch (e.code) {
    case errc::invalid_argument: return {"invalid_schema", 400};
    case errc::invalid_transition: return {"invalid_transition", 400};
    case errc::archived: return {"project_archived", 403};
    case errc::not_found: {
      const std::string_view message = e.message;
      if (message.starts_with("project ")) return {"project_not_found", 404};
      if (message.starts_with("session ")) return {"session_not_found", 404};
      return {"package_not_found", 404};
    }
    case errc::already_exists: return {"duplicate_package_id", 409};
    case errc::unsupported: return {"not_implemented", 501};
    case errc::locked: return {"store_locked", 503};
    default: return {"internal_error", 500};
  }
}

}  // namespace agentctx::relay
