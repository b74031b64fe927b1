// agentctx/core/zstd_codec.hpp: zstd compression with reused contexts.
//
// Creating a zstd context costs about as much as compressing a 10 KB payload,
// so a codec keeps one compression and one decompression context for its
// life. A codec is not thread-safe; `zstd_codec_pool` hands out codecs to
// concurrent callers (each borrows one for one call and gives it back).
//
//   zstd_codec codec(1);
//   std::vector<std::byte> packed;
//   auto n = codec.compress(raw, packed);          // packed.size() == *n
//   std::vector<std::byte> back(raw.size());
//   AGENTCTX_TRY(codec.decompress(packed, back));  // exactly raw.size() bytes
#pragma once

#include <zstd.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"

namespace agentctx {

class zstd_codec {
 public:
  explicit zstd_codec(int level = 1) : level_(level) {}

  /// Compresses `input` into `out` (resized to the compressed size).
  /// Errors: io_error when zstd fails (out of memory).
  result<std::size_t> compress(std::span<const std::byte> input, std::vector<std::byte>& out) {
    if (!compressor_) compressor_.reset(ZSTD_createCCtx());
    if (!compressor_) return fail(errc::io_error, "zstd: cannot allocate a compression context");
    out.resize(ZSTD_compressBound(input.size()));
    std::size_t n = ZSTD_compressCCtx(compressor_.get(), out.data(), out.size(), input.data(), input.size(), level_);
    if (ZSTD_isError(n)) return fail(errc::io_error, std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return n;
  }

  /// Decompresses a single zstd frame that must expand to exactly out.size()
  /// bytes. Errors: corrupt (not a valid frame, or another size).
  result<void> decompress(std::span<const std::byte> input, std::span<std::byte> out) {
    if (!decompressor_) decompressor_.reset(ZSTD_createDCtx());
    if (!decompressor_) return fail(errc::io_error, "zstd: cannot allocate a decompression context");
    std::size_t n = ZSTD_decompressDCtx(decompressor_.get(), out.data(), out.size(), input.data(), input.size());
    if (ZSTD_isError(n)) return fail(errc::corrupt, std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != out.size()) return fail(errc::corrupt, "zstd: the frame decodes to fewer bytes than recorded");
    return {};
  }

  int level() const noexcept { return level_; }

  /// The decompressed size a frame declares in its header; nullopt when the
  /// bytes are not a frame header or the size is not recorded. (compress()
  /// always records it.)
  static std::optional<std::uint64_t> frame_content_size(std::span<const std::byte> frame) noexcept {
    unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) return std::nullopt;
    return static_cast<std::uint64_t>(size);
  }

 private:
  struct compressor_deleter {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  struct decompressor_deleter {
    void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
  };
  int level_;
  std::unique_ptr<ZSTD_CCtx, compressor_deleter> compressor_;
  std::unique_ptr<ZSTD_DCtx, decompressor_deleter> decompressor_;
};

/// A thread-safe set of codecs: borrow() returns one for the caller's sole
/// use, given back when the handle is destroyed. Idle codecs are kept.
class zstd_codec_pool {
 public:
  explicit zstd_codec_pool(int level = 1) : level_(level) {}

  class borrowed {
   public:
    borrowed(zstd_codec_pool& pool, std::unique_ptr<zstd_codec> codec) : pool_(&pool), codec_(std::move(codec)) {}
    borrowed(borrowed&&) noexcept = default;
    borrowed& operator=(borrowed&&) noexcept = delete;
    ~borrowed() {
      if (codec_) pool_->give_back(std::move(codec_));
    }
    zstd_codec& operator*() const noexcept { return *codec_; }
    zstd_codec* operator->() const noexcept { return codec_.get(); }

   private:
    zstd_codec_pool* pool_;
    std::unique_ptr<zstd_codec> codec_;
  };

  borrowed borrow() {
    std::unique_ptr<zstd_codec> codec;
    {
      std::lock_guard guard(mutex_);
      if (!idle_.empty()) {
        codec = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!codec) codec = std::make_unique<zstd_codec>(level_);
    return borrowed(*this, std::move(codec));
  }

 private:
  void give_back(std::unique_ptr<zstd_codec> codec) {
    std::lock_guard guard(mutex_);
    idle_.push_back(std::move(codec));
  }

  int level_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<zstd_codec>> idle_;
};

}  // namespace agentctx
