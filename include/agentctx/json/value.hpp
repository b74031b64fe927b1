// agentctx/json/value.hpp: an owned JSON value (a tree) that keeps members
// in their order, for documents a program builds or edits: a Relay package
// whose status changes, a fact written by assert_fact.
//
//   json::value package = json::value::object_type{};
//   package.set("title", "Shipped archive");
//   package.set("significance", 7);
//   package.find("title")->as_string();   // "Shipped archive"
//
// Numbers are IEEE doubles, the number model of I-JSON (RFC 7493) that RFC
// 8785 canonicalizes: 5 and 5.0 are the same number. Object members keep
// their insertion order; set() replaces a member's value in place. The tree
// does not check its own contents: duplicate names, NaN or invalid UTF-8 are
// refused when it is serialized canonically (json/canonical.hpp), and
// json::parse() never produces them.
//
// Reading untrusted text: json::parse() (canonical.hpp) builds a value with
// the same checks as the canonicalizer (duplicate names, lone surrogates,
// numbers out of double range are errors).
#pragma once

#include <simdjson.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "agentctx/json/writer.hpp"

namespace agentctx::json {

class value {
 public:
  enum class kind : std::uint8_t { null, boolean, number, string, array, object };
  using array_type = std::vector<value>;
  using member = std::pair<std::string, value>;
  using object_type = std::vector<member>;

  value() noexcept = default;
  value(std::nullptr_t) noexcept {}  // NOLINT: implicit by design, like a JSON literal
  value(bool flag) noexcept : data_(flag) {}  // NOLINT
  template <class T>
    requires std::integral<T> && (!std::same_as<T, bool>) && (!std::same_as<T, char>)
  value(T number) noexcept : data_(static_cast<double>(number)) {}  // NOLINT
  value(double number) noexcept : data_(number) {}                  // NOLINT
  value(std::string text) noexcept : data_(std::move(text)) {}      // NOLINT
  value(std::string_view text) : data_(std::string(text)) {}        // NOLINT
  value(const char* text) : data_(std::string(text)) {}             // NOLINT
  value(array_type items) noexcept : data_(std::move(items)) {}     // NOLINT
  value(object_type members) noexcept : data_(std::move(members)) {}  // NOLINT

  kind type() const noexcept { return static_cast<kind>(data_.index()); }
  bool is_null() const noexcept { return type() == kind::null; }
  bool is_bool() const noexcept { return type() == kind::boolean; }
  bool is_number() const noexcept { return type() == kind::number; }
  bool is_string() const noexcept { return type() == kind::string; }
  bool is_array() const noexcept { return type() == kind::array; }
  bool is_object() const noexcept { return type() == kind::object; }

  // Accessors: the value must be of that kind (std::get throws otherwise).
  bool as_bool() const { return std::get<bool>(data_); }
  double as_number() const { return std::get<double>(data_); }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  std::string& as_string() { return std::get<std::string>(data_); }
  const array_type& as_array() const { return std::get<array_type>(data_); }
  array_type& as_array() { return std::get<array_type>(data_); }
  const object_type& as_object() const { return std::get<object_type>(data_); }
  object_type& as_object() { return std::get<object_type>(data_); }

  /// The member named `name` of an object; null when absent or not an object.
  const value* find(std::string_view name) const noexcept {
    if (!is_object()) return nullptr;
    for (const member& m : std::get<object_type>(data_)) {
      if (m.first == name) return &m.second;
    }
    return nullptr;
  }
  value* find(std::string_view name) noexcept { return const_cast<value*>(std::as_const(*this).find(name)); }

  /// Sets member `name` of an object (which this must be): replaces the
  /// value in place when present, appends otherwise. Returns the new value.
  value& set(std::string_view name, value v) {
    if (value* existing = find(name)) return *existing = std::move(v);
    return as_object().emplace_back(std::string(name), std::move(v)).second;
  }

  /// Removes member `name`; true when it was there.
  bool erase(std::string_view name) {
    if (!is_object()) return false;
    auto& members = std::get<object_type>(data_);
    for (auto it = members.begin(); it != members.end(); ++it) {
      if (it->first == name) {
        members.erase(it);
        return true;
      }
    }
    return false;
  }

  /// Structural equality: same kinds, equal numbers, strings and elements,
  /// and objects with the same members regardless of their order.
  friend bool operator==(const value& a, const value& b) {
    if (a.type() != b.type()) return false;
    if (!a.is_object()) return a.data_ == b.data_;
    const auto& x = a.as_object();
    const auto& y = b.as_object();
    if (x.size() != y.size()) return false;
    for (const member& m : x) {
      const value* other = b.find(m.first);
      if (other == nullptr || !(*other == m.second)) return false;
    }
    return true;
  }

 private:
  std::variant<std::nullptr_t, bool, double, std::string, array_type, object_type> data_{nullptr};
};

/// Writes `v` with `w`, members in their order (for output people read; use
/// json::serialize() in canonical.hpp for bytes that are hashed or compared).
inline void write_value(writer& w, const value& v) {
  switch (v.type()) {
    case value::kind::null: w.value(nullptr); break;
    case value::kind::boolean: w.value(v.as_bool()); break;
    case value::kind::number: w.value(v.as_number()); break;
    case value::kind::string: w.value(std::string_view(v.as_string())); break;
    case value::kind::array:
      w.begin_array();
      for (const value& item : v.as_array()) write_value(w, item);
      w.end_array();
      break;
    case value::kind::object:
      w.begin_object();
      for (const value::member& m : v.as_object()) {
        w.key(m.first);
        write_value(w, m.second);
      }
      w.end_object();
      break;
  }
}

/// `v` as JSON text, members in their order.
inline std::string to_text(const value& v, layout style = layout::compact) {
  std::string out;
  writer w(out, style);
  write_value(w, v);
  return out;
}

/// Where the first string of `v` that is not valid UTF-8 is, as the member
/// names and [indexes] that lead to it ("fact.tags[2]"; "fact (a member's
/// name)" when a name is the string): for an error that names the field.
/// Nothing when every string and name is valid.
inline std::optional<std::string> invalid_utf8_path(const value& v) {
  switch (v.type()) {
    case value::kind::string:
      if (!is_valid_utf8(v.as_string())) return std::string();
      return std::nullopt;
    case value::kind::array:
      for (std::size_t i = 0; i < v.as_array().size(); ++i) {
        if (auto inner = invalid_utf8_path(v.as_array()[i])) return "[" + std::to_string(i) + "]" + *inner;
      }
      return std::nullopt;
    case value::kind::object:
      for (const value::member& m : v.as_object()) {
        if (!is_valid_utf8(m.first)) return std::string(" (a member's name)");
        if (auto inner = invalid_utf8_path(m.second)) {
          return m.first + (inner->empty() || inner->front() == '[' || inner->front() == ' ' ? "" : ".") + *inner;
        }
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace agentctx::json
