// agentctx/mcp/json_schema.hpp: the JSON Schemas of tool arguments and
// results, declared once and used both to describe a tool (tools/list) and
// to check the arguments of a call.
//
//   auto input = json_schema::object()
//       .required_property("query", json_schema::string().min_length(1).description("What to look for"))
//       .property("k", json_schema::integer().minimum(1).maximum(1000).default_json("10"))
//       .property("layers", json_schema::array(json_schema::string().allowed_values({"base", "user"})));
//   input.write(writer);                   // {"type":"object","properties":{...},"required":["query"],...}
//   auto checked = input.validate(arguments);  // invalid_argument: "k must be at least 1, not 0"
//
// The subset of JSON Schema 2020-12 it covers is what tool arguments need:
// "type" (one type or several, "null" included), "properties", "required",
// "additionalProperties" (false unless allowed: unknown members are
// refused; a declared member given twice is refused too, since a reader
// would see only one of the values), "patternProperties" of "^x-" only
// (allow_extensions: extension members, each once), "items", "minItems", "maxItems", "enum" (of strings),
// "minLength" and "maxLength" (in code points, as the standard counts),
// "minimum", "maximum", plus the annotations "description" and "default".
// An "integer" is any JSON number with no fractional part (10 and 10.0).
//
// Error messages name the member by its path from the root ("query",
// "filters.kind[1]") and say what was expected and what was found; they are
// meant to be shown to the model that made the call.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/json/canonical_form.hpp"
#include "agentctx/json/json_type.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/mcp/jsonrpc.hpp"

namespace agentctx::mcp {

/// The JSON types a schema can admit.
enum class json_type : unsigned { object = 1, array = 2, string = 4, integer = 8, number = 16, boolean = 32, null = 64 };

/// The value of a JSON number with no fractional part that fits in int64
/// (7, 7.0, 7e2); nullopt for anything else.
inline std::optional<std::int64_t> integer_value(simdjson::dom::element value) noexcept {
  std::int64_t integer = 0;
  if (value.get_int64().get(integer) == simdjson::SUCCESS) return integer;
  double number = 0;
  if (value.type() == simdjson::dom::element_type::DOUBLE && value.get_double().get(number) == simdjson::SUCCESS &&
      std::trunc(number) == number && number >= -0x1p63 && number < 0x1p63) {
    return static_cast<std::int64_t>(number);
  }
  return std::nullopt;
}

class json_schema {
 public:
  static json_schema object() { return json_schema(bit(json_type::object)); }
  static json_schema array(json_schema items) {
    json_schema out(bit(json_type::array));
    out.items_.push_back(std::move(items));
    return out;
  }
  static json_schema string() { return json_schema(bit(json_type::string)); }
  static json_schema integer() { return json_schema(bit(json_type::integer)); }
  static json_schema number() { return json_schema(bit(json_type::number)); }
  static json_schema boolean() { return json_schema(bit(json_type::boolean)); }
  /// A value of any of `types` ("type": [...]); the constraints of each type apply to values of that type.
  static json_schema any_of_types(std::initializer_list<json_type> types) {
    unsigned mask = 0;
    for (const json_type type : types) mask |= bit(type);
    return json_schema(mask);
  }

  json_schema& description(std::string text) {
    description_ = std::move(text);
    return *this;
  }
  /// An optional member of an object.
  json_schema& property(std::string name, json_schema schema) {
    properties_.push_back({std::move(name), false});
    property_schemas_.push_back(std::move(schema));
    return *this;
  }
  /// A member the object must have.
  json_schema& required_property(std::string name, json_schema schema) {
    properties_.push_back({std::move(name), true});
    property_schemas_.push_back(std::move(schema));
    return *this;
  }
  /// Objects: accept members that are not declared (default: refuse them).
  json_schema& allow_other_properties() {
    other_properties_ = true;
    return *this;
  }
  /// Objects: accept members whose names start with "x-", of any value
  /// ("patternProperties": {"^x-": {}}), each once; other undeclared
  /// members are refused as before. The extension members of seed 001
  /// section 12.1.
  json_schema& allow_extensions() {
    extensions_ = true;
    return *this;
  }
  json_schema& min_length(std::size_t code_points) {
    min_length_ = code_points;
    return *this;
  }
  json_schema& max_length(std::size_t code_points) {
    max_length_ = code_points;
    return *this;
  }
  /// Strings: the value must be one of these ("enum").
  json_schema& allowed_values(std::vector<std::string> values) {
    allowed_values_ = std::move(values);
    return *this;
  }
  json_schema& minimum(double bound) {
    minimum_ = bound;
    return *this;
  }
  json_schema& maximum(double bound) {
    maximum_ = bound;
    return *this;
  }
  json_schema& min_items(std::size_t count) {
    min_items_ = count;
    return *this;
  }
  json_schema& max_items(std::size_t count) {
    max_items_ = count;
    return *this;
  }
  /// The "default" annotation: `json` is one complete JSON value. It is
  /// documentation only; the tool applies its default itself.
  json_schema& default_json(std::string json) {
    default_json_ = std::move(json);
    return *this;
  }

  /// Writes the schema as a JSON object.
  void write(json::writer& w) const {
    w.begin_object();
    w.key("type");
    const std::vector<std::string_view> types = type_names();
    if (types.size() == 1) {
      w.value(types.front());
    } else {
      w.begin_array();
      for (const std::string_view type : types) w.value(type);
      w.end_array();
    }
    if (!description_.empty()) w.key("description").value(description_);
    if (!allowed_values_.empty()) {
      w.key("enum").begin_array();
      for (const std::string& value : allowed_values_) w.value(value);
      w.end_array();
    }
    if (min_length_) w.key("minLength").value(static_cast<std::uint64_t>(*min_length_));
    if (max_length_) w.key("maxLength").value(static_cast<std::uint64_t>(*max_length_));
    if (minimum_) w.key("minimum").value(*minimum_);
    if (maximum_) w.key("maximum").value(*maximum_);
    if (!items_.empty()) {
      w.key("items");
      items_.front().write(w);
      if (min_items_) w.key("minItems").value(static_cast<std::uint64_t>(*min_items_));
      if (max_items_) w.key("maxItems").value(static_cast<std::uint64_t>(*max_items_));
    }
    if (admits(json_type::object)) {
      w.key("properties").begin_object();
      for (std::size_t i = 0; i < properties_.size(); ++i) {
        w.key(properties_[i].name);
        property_schemas_[i].write(w);
      }
      w.end_object();
      bool any_required = false;
      for (const property_entry& p : properties_) any_required = any_required || p.required;
      if (any_required) {
        w.key("required").begin_array();
        for (const property_entry& p : properties_) {
          if (p.required) w.value(p.name);
        }
        w.end_array();
      }
      if (extensions_ && !other_properties_) w.key("patternProperties").begin_object().key("^x-").begin_object().end_object().end_object();
      w.key("additionalProperties").value(other_properties_);
    }
    if (!default_json_.empty()) w.key("default").raw(default_json_);
    w.end_object();
  }

  /// The schema as compact JSON text.
  std::string to_json() const {
    std::string out;
    json::writer w(out);
    write(w);
    return out;
  }

  /// Checks `value` against the schema. Error: invalid_argument with a
  /// one-line message naming the first offending member (see the file
  /// comment); `what` names the root in messages about the root itself.
  result<void> validate(simdjson::dom::element value, std::string_view what = "the value") const {
    std::string path;
    return check(value, path, what);
  }

  /// True when the schema admits objects and nothing else.
  bool is_object_schema() const noexcept { return types_ == bit(json_type::object); }

  /// The declared member `name` of an object schema, or null.
  const json_schema* find_property(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < properties_.size(); ++i) {
      if (properties_[i].name == name) return &property_schemas_[i];
    }
    return nullptr;
  }

 private:
  struct property_entry {
    std::string name;
    bool required = false;
  };

  explicit json_schema(unsigned types) : types_(types) {}
  static constexpr unsigned bit(json_type type) noexcept { return static_cast<unsigned>(type); }
  bool admits(json_type type) const noexcept { return (types_ & bit(type)) != 0; }

  std::vector<std::string_view> type_names() const {
    static constexpr std::pair<json_type, std::string_view> names[] = {
        {json_type::object, "object"},   {json_type::array, "array"},   {json_type::string, "string"},
        {json_type::integer, "integer"}, {json_type::number, "number"}, {json_type::boolean, "boolean"},
        {json_type::null, "null"}};
    std::vector<std::string_view> out;
    for (const auto& [type, name] : names) {
      if (admits(type)) out.push_back(name);
    }
    return out;
  }

  // "a string or an integer".
  std::string expected_types() const {
    static constexpr std::pair<json_type, std::string_view> articles[] = {
        {json_type::object, "an object"}, {json_type::array, "an array"},   {json_type::string, "a string"},
        {json_type::integer, "an integer"}, {json_type::number, "a number"}, {json_type::boolean, "a boolean"},
        {json_type::null, "null"}};
    std::string out;
    for (const auto& [type, text] : articles) {
      if (!admits(type)) continue;
      if (!out.empty()) out += " or ";
      out += text;
    }
    return out;
  }

  static std::string number_text(double number) {
    std::string out;
    json::writer(out).value(number);
    return out;
  }

  static std::size_t code_points(std::string_view text) noexcept {
    std::size_t count = 0;
    for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return count;
  }

  // The message prefix naming the member at `path` ("k", "filters.kind[1]").
  static std::string subject(const std::string& path, std::string_view what) {
    return path.empty() ? std::string(what) : path;
  }

  result<void> check(simdjson::dom::element value, std::string& path, std::string_view what) const {
    const auto invalid = [&](std::string problem) {
      return fail(errc::invalid_argument, subject(path, what) + " " + std::move(problem));
    };
    switch (value.type()) {
      case simdjson::dom::element_type::OBJECT:
        if (!admits(json_type::object)) break;
        return check_object(value.get_object().value_unsafe(), path, what);
      case simdjson::dom::element_type::ARRAY:
        if (!admits(json_type::array)) break;
        return check_array(value.get_array().value_unsafe(), path, what);
      case simdjson::dom::element_type::STRING: {
        if (!admits(json_type::string)) break;
        const std::string_view text = value.get_string().value_unsafe();
        const std::size_t length = code_points(text);
        if (min_length_ && length < *min_length_) {
          return invalid(*min_length_ == 1 ? "must not be empty"
                                           : "must have at least " + std::to_string(*min_length_) + " characters");
        }
        if (max_length_ && length > *max_length_) {
          return invalid("must have at most " + std::to_string(*max_length_) + " characters, not " +
                         std::to_string(length));
        }
        if (!allowed_values_.empty()) {
          bool allowed = false;
          std::string list;
          for (const std::string& candidate : allowed_values_) {
            allowed = allowed || candidate == text;
            list += (list.empty() ? "" : ", ") + candidate;
          }
          if (!allowed) return invalid("must be one of " + list + ", not " + quoted_excerpt(text));
        }
        return {};
      }
      case simdjson::dom::element_type::INT64:
      case simdjson::dom::element_type::UINT64:
      case simdjson::dom::element_type::DOUBLE: {
        const bool whole = value.type() != simdjson::dom::element_type::DOUBLE ||
                           std::trunc(value.get_double().value_unsafe()) == value.get_double().value_unsafe();
        if (!admits(json_type::number) && !(admits(json_type::integer) && whole)) break;
        double number = 0;
        if (value.get_double().get(number) != simdjson::SUCCESS) break;
        if (minimum_ && number < *minimum_) {
          return invalid("must be at least " + number_text(*minimum_) + ", not " + number_text(number));
        }
        if (maximum_ && number > *maximum_) {
          return invalid("must be at most " + number_text(*maximum_) + ", not " + number_text(number));
        }
        return {};
      }
      case simdjson::dom::element_type::BOOL:
        if (!admits(json_type::boolean)) break;
        return {};
      case simdjson::dom::element_type::NULL_VALUE:
        if (!admits(json_type::null)) break;
        return {};
    }
    std::string found(json::describe_type(value));
    if (value.is_number() && admits(json_type::integer) && !admits(json_type::number)) found = "a fraction";
    return invalid("must be " + expected_types() + ", not " + found);
  }

  result<void> check_object(simdjson::dom::object object, std::string& path, std::string_view what) const {
    const std::size_t parent_length = path.size();
    const auto member_path = [&](std::string_view name) {
      path.resize(parent_length);
      if (!path.empty()) path += '.';
      path += name;
    };
    // simdjson keeps every member of a name; a declared one given twice would
    // be checked twice and read once (the first), so it is refused.
    std::vector<bool> seen(properties_.size());
    std::vector<std::string_view> extensions_seen;
    for (const simdjson::dom::key_value_pair member : object) {
      const json_schema* schema = find_property(member.key);
      if (schema == nullptr) {
        if (other_properties_) continue;
        if (extensions_ && member.key.starts_with("x-")) {
          // An extension given twice would be read once, as a declared member would.
          if (std::find(extensions_seen.begin(), extensions_seen.end(), member.key) != extensions_seen.end()) {
            path.resize(parent_length);
            return fail(errc::invalid_argument,
                        (path.empty() ? std::string() : path + ": ") + json::detail::duplicate_name_message(member.key));
          }
          extensions_seen.push_back(member.key);
          continue;
        }
        std::string known;
        for (const property_entry& p : properties_) known += (known.empty() ? "" : ", ") + p.name;
        member_path(member.key);
        const std::string message = "unknown property '" + path + "'" +
                                    (known.empty() ? std::string(" (none are taken)") : " (known: " + known + ")");
        path.resize(parent_length);
        return fail(errc::invalid_argument, message);
      }
      const auto index = static_cast<std::size_t>(schema - property_schemas_.data());
      if (seen[index]) {
        path.resize(parent_length);
        return fail(errc::invalid_argument,
                    (path.empty() ? std::string() : path + ": ") + json::detail::duplicate_name_message(member.key));
      }
      seen[index] = true;
      member_path(member.key);
      AGENTCTX_TRY(schema->check(member.value, path, what));
    }
    for (const property_entry& p : properties_) {
      if (!p.required || object.at_key(p.name).error() == simdjson::SUCCESS) continue;
      member_path(p.name);
      const std::string message = path + " is required";
      path.resize(parent_length);
      return fail(errc::invalid_argument, message);
    }
    path.resize(parent_length);
    return {};
  }

  result<void> check_array(simdjson::dom::array array, std::string& path, std::string_view what) const {
    const std::size_t count = array.size();
    if (min_items_ && count < *min_items_) {
      return fail(errc::invalid_argument, subject(path, what) + " must have at least " + std::to_string(*min_items_) +
                                              " items, not " + std::to_string(count));
    }
    if (max_items_ && count > *max_items_) {
      return fail(errc::invalid_argument, subject(path, what) + " must have at most " + std::to_string(*max_items_) +
                                              " items, not " + std::to_string(count));
    }
    const std::size_t parent_length = path.size();
    std::size_t index = 0;
    for (const simdjson::dom::element item : array) {
      path.resize(parent_length);
      path += (path.empty() ? std::string(what) : std::string()) + "[" + std::to_string(index++) + "]";
      if (!items_.empty()) AGENTCTX_TRY(items_.front().check(item, path, what));
    }
    path.resize(parent_length);
    return {};
  }

  unsigned types_ = 0;
  std::string description_;
  std::vector<property_entry> properties_;
  std::vector<json_schema> property_schemas_;  // one per properties_ entry
  bool other_properties_ = false;
  bool extensions_ = false;
  std::vector<json_schema> items_;  // one element for arrays
  std::vector<std::string> allowed_values_;
  std::optional<std::size_t> min_length_;
  std::optional<std::size_t> max_length_;
  std::optional<double> minimum_;
  std::optional<double> maximum_;
  std::optional<std::size_t> min_items_;
  std::optional<std::size_t> max_items_;
  std::string default_json_;
};

}  // namespace agentctx::mcp
