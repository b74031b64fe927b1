// agentctx/mcp/jsonrpc.hpp: JSON-RPC 2.0 messages as MCP carries them.
//
// decode_message() sorts one parsed JSON value into what a server does with
// it (JSON-RPC 2.0 sections 4 and 5, with MCP's stricter rules):
//
//   - a request: an object with "jsonrpc": "2.0", a string "method" and an
//     "id" that is a string or an integer of at most 64 bits (MCP forbids
//     null ids; fractions and longer integers, which would be read as
//     doubles, are refused too, so the id echoes back exactly);
//   - a notification: the same without "id"; it is never answered;
//   - a response: an object with "result" or "error" and no "method",
//     whatever its other members (a client answering a server request;
//     servers built on this core send none, so it is ignored, never answered);
//   - invalid: anything else, with the error to answer (-32600 Invalid
//     Request, or -32602 Invalid params for a request with array params:
//     MCP params are objects) and the request's id when it could be read,
//     else null. JSON-RPC answers an invalid message even without an id.
//
// result_response() and error_response() build the answers (one line of
// compact JSON, no trailing newline) with agentctx::json::writer.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/json/canonical_form.hpp"
#include "agentctx/json/json_type.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::mcp {

/// The JSON-RPC 2.0 error codes an MCP server answers with (section 5.1).
enum class rpc_error_code : int {
  parse_error = -32700,       ///< the line is not JSON
  invalid_request = -32600,   ///< JSON, but not a valid request object
  method_not_found = -32601,  ///< no such method
  invalid_params = -32602,    ///< the method exists, its params do not fit (also: an unknown tool)
  internal_error = -32603,    ///< the server failed (a bug or resource exhaustion)
};

/// The id of a request, kept as the JSON text of the client's value ("7",
/// "\"abc\"") so that answers echo it; "null" when there is none to echo.
class request_id {
 public:
  request_id() = default;
  static request_id from_integer(std::int64_t value) { return request_id(json_of(value)); }
  static request_id from_unsigned(std::uint64_t value) { return request_id(json_of(value)); }
  static request_id from_string(std::string_view value) { return request_id(json_of(value)); }

  /// The id as JSON text, ready to splice into an answer.
  const std::string& json() const noexcept { return json_; }
  bool is_null() const noexcept { return json_ == "null"; }
  friend bool operator==(const request_id&, const request_id&) = default;

 private:
  explicit request_id(std::string json) : json_(std::move(json)) {}
  template <class T>
  static std::string json_of(T value) {
    std::string out;
    json::writer(out).value(value);
    return out;
  }
  std::string json_ = "null";
};

enum class message_kind { request, notification, response, invalid };

/// One decoded message. The views (method, params) point into the simdjson
/// document that was decoded: valid until its parser parses again.
struct decoded_message {
  message_kind kind = message_kind::invalid;
  request_id id;                      ///< request: its id; invalid: the id when readable, else null
  std::string_view method;            ///< request and notification
  std::optional<simdjson::dom::object> params;  ///< absent when the message has no "params"
  rpc_error_code error_code = rpc_error_code::invalid_request;  ///< invalid only
  std::string error_message;                                    ///< invalid only
};

namespace detail {

inline decoded_message invalid_message(rpc_error_code code, std::string message, request_id id = {}) {
  decoded_message out;
  out.kind = message_kind::invalid;
  out.error_code = code;
  out.error_message = std::move(message);
  out.id = std::move(id);
  return out;
}

// What an id that is neither a string nor a 64-bit integer is, for the
// message refusing it. simdjson reads a number written with a fraction or an
// exponent (1.0, 1e20) and an integer beyond 64 bits as a double, and the
// double does not say which it was: beyond the range of 64-bit integers it
// is out of range either way; at its ends, -2^63 and 2^64, it may be an
// integer just beyond them, rounded (-9223372036854775809,
// 18446744073709551616), or a number within the range written with a
// fraction (18446744073709551615.0 reads as 2^64); within the range it was
// written with a fraction or an exponent (a plain integer there reads as an
// integer).
inline std::string refused_id_type(simdjson::dom::element id) {
  double number = 0;
  if (id.get_double().get(number) != simdjson::SUCCESS) return std::string(json::describe_type(id));
  if (std::trunc(number) != number) return "a fraction";
  if (number < -0x1p63 || number > 0x1p64) return "a number beyond the range of 64-bit integers";
  if (number == -0x1p63 || number == 0x1p64) {
    return "an integer beyond 64 bits or a number written with a fraction or an exponent: it could not be echoed as "
           "written";
  }
  return "a number written with a fraction or an exponent (1.0, 1e2: it could not be echoed as written)";
}

}  // namespace detail

/// "duplicate member name \"method\"" when a name occurs twice among the
/// members of `object` (simdjson keeps both, and readers differ on which one
/// counts: the first here, the last in JavaScript's JSON.parse), else
/// nothing. The name reported is the one that sorts first among those given
/// twice.
inline std::optional<std::string> duplicate_member(simdjson::dom::object object) {
  std::vector<std::string_view> names;
  names.reserve(object.size());
  for (const simdjson::dom::key_value_pair member : object) names.push_back(member.key);
  std::sort(names.begin(), names.end());
  const auto twice = std::adjacent_find(names.begin(), names.end());
  if (twice == names.end()) return std::nullopt;
  return json::detail::duplicate_name_message(*twice);
}

/// `text` in double quotes for an error message or a log line, escaped as
/// agentctx::quote_for_message escapes (control characters, '"' and '\\'),
/// cut after 60 bytes (at a UTF-8 boundary, with "...") so that a huge
/// value makes a short message.
inline std::string quoted_excerpt(std::string_view text) { return quote_for_message(text, 60); }

/// Sorts `value` into a request, notification, response or invalid message;
/// see the file comment. Never fails: problems are an `invalid` message.
inline decoded_message decode_message(simdjson::dom::element value) {
  using detail::invalid_message;
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return invalid_message(rpc_error_code::invalid_request,
                           "a message must be a JSON object, not " + std::string(json::describe_type(value)));
  }
  decoded_message out;
  if (object.at_key("method").error() == simdjson::NO_SUCH_FIELD &&
      (object.at_key("result").error() == simdjson::SUCCESS || object.at_key("error").error() == simdjson::SUCCESS)) {
    out.kind = message_kind::response;  // ignored, whatever its members
    return out;
  }
  // A member given twice ("method", "id", "params" ...) is refused before
  // any is read: which one a reader takes is not agreed (the id stays null).
  if (auto twice = duplicate_member(object)) return invalid_message(rpc_error_code::invalid_request, *twice);
  simdjson::dom::element id_value;
  const bool has_id = object.at_key("id").get(id_value) == simdjson::SUCCESS;
  if (has_id) {
    std::string_view text;
    std::int64_t signed_id = 0;
    std::uint64_t unsigned_id = 0;
    if (id_value.get_string().get(text) == simdjson::SUCCESS) {
      out.id = request_id::from_string(text);
    } else if (id_value.get_int64().get(signed_id) == simdjson::SUCCESS) {
      out.id = request_id::from_integer(signed_id);
    } else if (id_value.get_uint64().get(unsigned_id) == simdjson::SUCCESS) {
      out.id = request_id::from_unsigned(unsigned_id);
    } else {
      return invalid_message(rpc_error_code::invalid_request,
                             "the id must be a string or an integer, not " + detail::refused_id_type(id_value));
    }
  }
  std::string_view version;
  if (object.at_key("jsonrpc").get_string().get(version) != simdjson::SUCCESS || version != "2.0") {
    return invalid_message(rpc_error_code::invalid_request, "the message must have \"jsonrpc\": \"2.0\"", out.id);
  }
  simdjson::dom::element method_value;
  if (object.at_key("method").get(method_value) != simdjson::SUCCESS) {
    return invalid_message(rpc_error_code::invalid_request, "the message has no \"method\"", out.id);
  }
  if (method_value.get_string().get(out.method) != simdjson::SUCCESS) {
    return invalid_message(rpc_error_code::invalid_request,
                           "the method must be a string, not " + std::string(json::describe_type(method_value)),
                           out.id);
  }
  simdjson::dom::element params_value;
  if (object.at_key("params").get(params_value) == simdjson::SUCCESS) {
    simdjson::dom::object params;
    if (params_value.get_object().get(params) == simdjson::SUCCESS) {
      // A tool's name or arguments given twice: refused as above (a
      // notification's params are only read for what it announces, and a
      // notification is never answered for its params: see below).
      if (auto twice = has_id ? duplicate_member(params) : std::nullopt) {
        return invalid_message(rpc_error_code::invalid_params, "params: " + *twice, out.id);
      }
      out.params = params;
    } else if (params_value.is_array()) {
      // Valid JSON-RPC, but MCP's params are named. A notification is never
      // answered, so its params are only dropped.
      if (has_id) {
        return invalid_message(rpc_error_code::invalid_params, "params must be an object (MCP takes named params)",
                               out.id);
      }
    } else {
      return invalid_message(rpc_error_code::invalid_request,
                             "params must be an object, not " + std::string(json::describe_type(params_value)),
                             out.id);
    }
  }
  out.kind = has_id ? message_kind::request : message_kind::notification;
  return out;
}

/// {"jsonrpc":"2.0","id":ID,"result":RESULT}; `result_json` must be one
/// complete JSON value.
inline std::string result_response(const request_id& id, std::string_view result_json) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  w.key("jsonrpc").value("2.0");
  w.key("id").raw(id.json());
  w.key("result").raw(result_json);
  w.end_object();
  return out;
}

/// {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}.
inline std::string error_response(const request_id& id, rpc_error_code code, std::string_view message) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  w.key("jsonrpc").value("2.0");
  w.key("id").raw(id.json());
  w.key("error").begin_object();
  w.key("code").value(static_cast<int>(code));
  w.key("message").value(message);
  w.end_object();
  w.end_object();
  return out;
}

}  // namespace agentctx::mcp
