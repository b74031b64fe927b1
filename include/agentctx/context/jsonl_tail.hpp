// agentctx/context/jsonl_tail.hpp: reading an append-only JSONL log from its
// end, newest line first, without loading the file: the context loader's
// recent_log and vocabulary_gaps read only the lines they show.
//
//   auto tail = reverse_line_reader::open(fs, "item/log.jsonl");
//   std::string line;
//   while (tail->previous(line)) { ... }          // newest first
//   tail->partial_last_line();                    // the file did not end with '\n'
//
// A last line without its newline is a write in progress (or torn by a
// crash): it is returned first, and partial_last_line() says so, so that a
// caller can skip it. Lines are read in chunks of 64 KiB from the end; a
// line longer than max_line_bytes is an error (corrupt) rather than a
// reason to read the whole file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::context {

class reverse_line_reader {
 public:
  static constexpr std::size_t chunk_bytes = 64 * 1024;

  /// Opens `path` for reading. Errors: those of file_system::open and size.
  static result<reverse_line_reader> open(io::file_system& fs, const std::string& path,
                                          std::size_t max_line_bytes = 1024 * 1024) {
    auto file = fs.open(path, io::read_only);
    if (!file) return unexpected(std::move(file).error());
    auto size = (*file)->size();
    if (!size) return unexpected(std::move(size).error());
    reverse_line_reader reader(std::move(*file), *size, max_line_bytes);
    if (*size > 0) {
      std::byte last{};
      auto read = reader.file_->read_at(*size - 1, std::span(&last, 1));
      if (!read) return unexpected(std::move(read).error());
      if (static_cast<char>(last) == '\n') {
        reader.end_ = *size - 1;
      } else {
        reader.partial_ = true;
      }
    }
    reader.start_ = reader.end_;  // window_ = [start_, end_) is empty
    reader.done_ = *size == 0;     // an empty file has no line
    return reader;
  }

  /// The line before the ones returned so far (without its '\n'); false at
  /// the start of the file. Errors: those of read_at, corrupt for a line
  /// longer than max_line_bytes.
  result<bool> previous(std::string& line) {
    if (done_) return false;
    while (true) {
      const std::size_t relative_end = static_cast<std::size_t>(end_ - start_);
      const std::size_t newline = relative_end == 0 ? std::string::npos : window_.rfind('\n', relative_end - 1);
      if (newline != std::string::npos) {
        line.assign(window_, newline + 1, relative_end - newline - 1);
        end_ = start_ + newline;
        window_.resize(newline);
        return true;
      }
      if (start_ == 0) {
        line.assign(window_, 0, relative_end);
        done_ = true;
        return true;
      }
      if (relative_end > max_line_bytes_) {
        return fail(errc::corrupt, "a line of more than " + std::to_string(max_line_bytes_) + " bytes ends here",
                    file_->path(), end_);
      }
      const std::uint64_t n = std::min<std::uint64_t>(chunk_bytes, start_);
      std::string chunk(static_cast<std::size_t>(n), '\0');
      auto read = file_->read_at(start_ - n, std::as_writable_bytes(std::span(chunk.data(), chunk.size())));
      if (!read) return unexpected(std::move(read).error());
      if (*read != n) return fail(errc::truncated, "the file shrank while it was read", file_->path(), start_ - n);
      window_.insert(0, chunk);
      start_ -= n;
    }
  }

  /// True when the file did not end with '\n': the first line previous()
  /// returned is incomplete.
  bool partial_last_line() const noexcept { return partial_; }
  std::uint64_t file_size() const noexcept { return size_; }

 private:
  reverse_line_reader(std::unique_ptr<io::file> file, std::uint64_t size, std::size_t max_line_bytes)
      : file_(std::move(file)), size_(size), max_line_bytes_(max_line_bytes), start_(size), end_(size) {}

  std::unique_ptr<io::file> file_;
  std::uint64_t size_ = 0;
  std::size_t max_line_bytes_ = 0;
  std::uint64_t start_ = 0;  ///< file offset of window_'s first byte
  std::uint64_t end_ = 0;    ///< file offset where the next line to return ends (its '\n' or the end)
  std::string window_;       ///< the bytes [start_, end_) not yet returned
  bool partial_ = false;
  bool done_ = false;
};

}  // namespace agentctx::context
