#pragma once
// The .kvrec container: an append-only stream of opaque payloads (the recording layer puts serialized
// kvscope.v1 protobuf messages in them), crash-safe and seekable. Format version 1.
//
// All integers little-endian, packed field by field (never a memcpy of a C++ struct). Offsets are
// absolute file offsets. XXH32 seeds are 0 unless stated.
//
//   Header
//     0   8  magic "KVREC\r\n\x1a" (the \r\n and ^Z catch text-mode and FTP-ASCII mangling)
//     8   4  u32 format version (1)
//     12  4  u32 metadata length L (<= kKvrecMaxPayload)
//     16  L  metadata: opaque bytes from the caller (a serialized run-header proto)
//     16+L 4 u32 XXH32 over bytes [8, 16+L): version, length and metadata
//   Frames, one after another, from byte 20+L
//     0   4  u32 sync marker 0x46564BF5 (bytes F5 'K' 'V' 'F'), found again when resynchronising
//     4   4  u32 payload length N (<= kKvrecMaxPayload, so a garbage length is rejected)
//     8   8  u64 seq
//     16  8  i64 time_us (non-decreasing through the file)
//     24  1  u8 flags: bit 0 keyframe, bit 1 index frame, other bits reserved (written 0, ignored)
//     25  4  u32 checksum = XXH32(payload, seed = XXH32(frame bytes [4, 25)))
//     29  N  payload
//   At close: one index frame (flags bit 1; seq and time of the last data frame) whose payload is
//     0   8  u64 data frame count
//     8   8  i64 first data frame time_us
//     16  8  i64 last data frame time_us
//     24  8  u64 keyframe count K
//     32  24*K  per keyframe, in file order: i64 time_us, u64 seq, u64 frame offset
//   then the 16-byte trailer: u64 offset of the index frame, 8-byte end magic "KVRECEND".
//
// A recording cut short (crash, kill -9) simply lacks the index frame and the trailer, possibly with
// a partial last frame; a reader rebuilds the index by scanning the frames.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL  // header-only xxhash: nothing to link, and the hash inlines into the frame loop
#endif
#include <xxhash.h>

namespace kvscope {

// One keyframe of the index.
struct KvrecIndexEntry {
  std::int64_t time_us = 0;
  std::uint64_t seq = 0;
  std::uint64_t offset = 0;  // file offset of the keyframe's frame

  friend bool operator==(const KvrecIndexEntry&, const KvrecIndexEntry&) = default;
};

inline constexpr std::uint32_t kKvrecVersion = 1;
inline constexpr std::string_view kKvrecMagic{"KVREC\r\n\x1a", 8};
inline constexpr std::string_view kKvrecEndMagic{"KVRECEND", 8};
inline constexpr std::uint32_t kKvrecFrameSync = 0x46564BF5u;
inline constexpr std::uint32_t kKvrecMaxPayload = 64u << 20;  // 64 MiB

inline constexpr std::size_t kKvrecHeaderFixedSize = 16;  // magic, version, metadata length
inline constexpr std::size_t kKvrecHeaderChecksumSize = 4;
inline constexpr std::size_t kKvrecFrameHeaderSize = 29;
inline constexpr std::size_t kKvrecTrailerSize = 16;
inline constexpr std::size_t kKvrecIndexFixedSize = 32;
inline constexpr std::size_t kKvrecIndexEntrySize = 24;

inline constexpr std::uint8_t kKvrecFlagKeyframe = 1u << 0;
inline constexpr std::uint8_t kKvrecFlagIndex = 1u << 1;

namespace kvrec {

// Little-endian on every host: a plain load/store where the host is little-endian (the compiler
// does not reliably fuse a shift loop into one load, and the frame loop reads five fields per frame).
template <typename T>
inline T toLittle(T v) {
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(T) == 4)
      return __builtin_bswap32(v);
    else
      return __builtin_bswap64(v);
  }
  return v;
}

inline void putU32(unsigned char* p, std::uint32_t v) {
  v = toLittle(v);
  std::memcpy(p, &v, sizeof v);
}
inline void putU64(unsigned char* p, std::uint64_t v) {
  v = toLittle(v);
  std::memcpy(p, &v, sizeof v);
}
inline void putI64(unsigned char* p, std::int64_t v) { putU64(p, static_cast<std::uint64_t>(v)); }

inline std::uint32_t getU32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return toLittle(v);
}
inline std::uint64_t getU64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return toLittle(v);
}
inline std::int64_t getI64(const unsigned char* p) { return static_cast<std::int64_t>(getU64(p)); }

// Over version, metadata length and metadata: `fixed` points at the header's byte 8.
inline std::uint32_t headerChecksum(const unsigned char* fixed_from_version, std::size_t metadata_length) {
  return static_cast<std::uint32_t>(XXH32(fixed_from_version, 8 + metadata_length, 0));
}

// `frame` points at a frame's sync marker; the payload may live elsewhere (the writer's caller).
inline std::uint32_t frameChecksum(const unsigned char* frame, std::string_view payload) {
  const auto fields = static_cast<XXH32_hash_t>(XXH32(frame + 4, 21, 0));
  return static_cast<std::uint32_t>(XXH32(payload.data(), payload.size(), fields));
}

}  // namespace kvrec
}  // namespace kvscope
