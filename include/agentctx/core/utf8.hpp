// agentctx/core/utf8.hpp: UTF-8 validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <simdjson.h>

namespace agentctx {

/// The size of the well-formed UTF-8 sequence of two to four bytes that
/// starts at `p` (a lead byte >= 0x80) and ends before `end`, or 0 when there
/// is none: no overlong forms, no surrogates (U+D800..U+DFFF), nothing above
/// U+10FFFF, as RFC 3629 requires.
inline std::size_t utf8_sequence_size(const char* p, const char* end) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  const unsigned char lead = s[0];
  std::size_t size;
  unsigned char low = 0x80, high = 0xBF;  // bounds of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    size = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    size = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    size = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < size) return 0;
  if (s[1] < low || s[1] > high) return 0;
  for (std::size_t k = 2; k < size; ++k) {
    if ((s[k] & 0xC0) != 0x80) return 0;
  }
  return size;
}

/// Returns the byte index of the first invalid UTF-8 sequence in `text`, or
/// text.size() when all of it is valid. Rejects overlong forms, surrogates
/// (U+D800..U+DFFF) and code points above U+10FFFF, as RFC 3629 requires.
inline std::size_t find_invalid_utf8(std::string_view text) noexcept {
  // Valid text is the common case: simdjson's validator (SIMD, runtime
  // dispatch) confirms it at several GB/s; only invalid text takes the scalar
  // walk below, which also finds the position.
  if (text.empty() || simdjson::validate_utf8(text.data(), text.size())) return text.size();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, eight bytes at a time.
    if (i + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence_size(text.data() + i, text.data() + n);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

/// The code point starting at text[i] and, in `length`, its size in bytes;
/// 0xFFFFFFFF and length 1 for a byte that does not start a well-formed
/// sequence (overlong forms and surrogates are decoded as they are: use
/// find_invalid_utf8 to validate).
inline std::uint32_t decode_utf8_at(std::string_view text, std::size_t i, std::size_t& length) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  length = 1;
  if (lead < 0x80) return lead;
  std::size_t count = 0;
  std::uint32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    count = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    count = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    count = 4;
    cp = lead & 0x07;
  } else {
    return 0xFFFFFFFF;
  }
  if (i + count > text.size()) return 0xFFFFFFFF;
  for (std::size_t k = 1; k < count; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0xFFFFFFFF;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  length = count;
  return cp;
}

/// True when `text` is entirely valid UTF-8.
inline bool is_valid_utf8(std::string_view text) noexcept { return find_invalid_utf8(text) == text.size(); }

}  // namespace agentctx
