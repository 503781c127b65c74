// libFuzzer target for the recording reader: every input is written to a temp
// .kvrec file (one per process, reused), opened with KvrecReader, read to the end twice, sought to a
// few times, and played through RecordingPlayer into a sink that re-encodes every event.
// A null KvrecReader with a message and InputError from RecordingPlayer are the documented answers
// to bad input and are fine; any other exception, a crash, a hang, a sanitizer report or a broken
// invariant below is a finding.
//
// Frames carry XXH32 checksums, which mutation cannot get past, so each input is also run a second
// time with the header and every frame checksum recomputed ("repaired"): that lets the fuzzer reach
// the protobuf decoding and the proto -> core conversion behind the checksums.
//
// Invariants checked (promises in KvrecReader.h, RecordingPlayer.h and EventConvert.h):
//  - open() fails only with a message; fileSize() is the file's size;
//  - every frame next() returns lies inside the file and behind the header, payload included;
//  - reading again after rewind() returns the same frames and adds no problem ("added once");
//  - keyframeAtOrBefore(t) returns a keyframe at or before t;
//  - fromProto never throws; an event it accepts re-encodes to a message that decodes to the same
//    encoding (core -> proto never fails), and eventKindName(proto) names the converted event.
#include <fcntl.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <cerrno>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "backend/convert/EventConvert.h"
#include "backend/recording/KvrecFormat.h"
#include "backend/recording/KvrecReader.h"
#include "backend/recording/RecordingPlayer.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/events/Event.h"
#include "core/model/Error.h"
#include "core/trace/BlockChain.h"
#include "fuzz/FuzzSupport.h"
#include "kvscope/v1/events.pb.h"

namespace {

using namespace kvscope;
using fuzz::finding;

// The input with the header checksum and the checksum of every frame met walking the frames (sync
// marker, plausible length) recomputed; bytes that are no frame are stepped over one at a time.
std::string repairChecksums(const std::uint8_t* data, std::size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto* p = reinterpret_cast<unsigned char*>(s.data());
  const std::size_t fixed = kKvrecHeaderFixedSize;
  if (size < fixed + kKvrecHeaderChecksumSize || std::memcmp(p, kKvrecMagic.data(), kKvrecMagic.size()) != 0) return s;
  const std::uint32_t meta_len = kvrec::getU32(p + 12);
  if (meta_len > size - fixed - kKvrecHeaderChecksumSize) return s;
  kvrec::putU32(p + fixed + meta_len, kvrec::headerChecksum(p + 8, meta_len));
  std::size_t at = fixed + meta_len + kKvrecHeaderChecksumSize;
  while (size - at >= kKvrecFrameHeaderSize) {
    const std::uint32_t length = kvrec::getU32(p + at + 4);
    if (kvrec::getU32(p + at) == kKvrecFrameSync && length <= size - at - kKvrecFrameHeaderSize) {
      const std::string_view payload(s.data() + at + kKvrecFrameHeaderSize, length);
      kvrec::putU32(p + at + 25, kvrec::frameChecksum(p + at, payload));
      at += kKvrecFrameHeaderSize + length;
    } else {
      ++at;
    }
  }
  return s;
}

struct FrameSeen {
  std::uint64_t offset;
  std::uint64_t seq;
  std::int64_t time_us;
  std::size_t size;
  friend bool operator==(const FrameSeen&, const FrameSeen&) = default;
};

// Checks one frame's bounds against the file; returns the mapping base it implies.
const char* checkFrame(const KvrecReader& r, const KvrecFrame& f) {
  const std::uint64_t size = r.fileSize();
  const std::uint64_t min_data = kKvrecHeaderFixedSize + kKvrecHeaderChecksumSize;
  if (f.offset < min_data || f.offset > size || size - f.offset < kKvrecFrameHeaderSize ||
      f.payload.size() > size - f.offset - kKvrecFrameHeaderSize)
    finding("a frame outside the file", r.path());
  // Touch every payload byte: a payload past the mapping faults here rather than somewhere later.
  volatile unsigned char sink = 0;
  for (char c : f.payload) sink = sink ^ static_cast<unsigned char>(c);
  (void)sink;
  return f.payload.data() - (f.offset + kKvrecFrameHeaderSize);
}

// Every encoding check on one payload, as RecordingPlayer would decode it.
void checkPayload(std::string_view payload, const std::string& path) {
  v1::Event proto;
  if (!proto.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) return;
  Event event;
  std::string why;
  if (!fromProto(proto, &event, &why)) {
    if (why.empty()) finding("fromProto refused an event without saying why", path);
    return;
  }
  if (std::strcmp(eventKindName(proto), eventKindName(event.payload)) != 0)
    finding("eventKindName(proto) differs from the converted event's kind", path);
}

std::vector<FrameSeen> readAll(KvrecReader& r, const char*& base, std::size_t limit) {
  std::vector<FrameSeen> frames;
  KvrecFrame f;
  while (frames.size() < limit && r.next(f)) {
    const char* b = checkFrame(r, f);
    if (base && b != base) finding("frames disagree on where the file is mapped", r.path());
    base = b;
    frames.push_back({f.offset, f.seq, f.time_us, f.payload.size()});
  }
  return frames;
}

void exerciseReader(const std::string& path, std::size_t size) {
  std::string error;
  auto r = KvrecReader::open(path, &error);
  if (!r) {
    if (error.empty()) finding("KvrecReader::open failed without a message", path);
    return;
  }
  if (r->fileSize() != size) finding("fileSize() differs from the file's size", path);

  // A frame is at least 29 bytes, so this bounds any correct reader; more means it loops.
  const std::size_t limit = size / kKvrecFrameHeaderSize + 1;
  const char* base = nullptr;
  const auto first = readAll(*r, base, limit + 1);
  if (first.size() > limit) finding("next() returned more frames than the file can hold", path);
  const std::size_t problems = r->problems().size();
  for (const auto& p : r->problems()) {
    if (p.offset > size) finding("a problem offset past the end of the file", path);
    if (p.message.empty()) finding("a problem without a message", path);
  }
  KvrecFrame f;
  if (r->next(f)) finding("next() returned a frame after returning false", path);

  r->rewind();
  const auto second = readAll(*r, base, limit + 1);
  if (second != first) finding("reading again after rewind() returned different frames", path);
  if (r->problems().size() != problems) finding("reading again added problems (promised once)", path);

  // Seek to the edges, the middle, and a few keyframes; read a few frames on from each (whole
  // passes are done above: reading every seek to the end would only repeat them).
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t lo = r->firstTime();
  const std::int64_t hi = r->lastTime();
  std::vector<std::int64_t> times = {
      kMin, kMax, lo, hi, lo == kMin ? lo : lo - 1, hi == kMax ? hi : hi + 1, std::midpoint(lo, hi)};
  const auto& keys = r->keyframes();
  for (std::size_t i = 0; i < keys.size() && i < 4; ++i) times.push_back(keys[i].time_us);
  if (!keys.empty()) times.push_back(keys.back().time_us);
  for (const std::int64_t t : times) {
    const auto k = r->keyframeAtOrBefore(t);
    if (k && k->time_us > t) finding("keyframeAtOrBefore(t) returned a keyframe after t", path);
    r->seek(t);
    (void)readAll(*r, base, 16);
  }

  r->rewind();
  while (r->next(f)) checkPayload(f.payload, path);
}

// Decodes every event and re-encodes it: core -> proto never fails, and the encoding must survive a
// second decode unchanged.
class ReencodingSink : public EventSink {
 public:
  explicit ReencodingSink(const std::string& path) : path_(path) {}
  void onEvent(const Event& e) override {
    v1::Event a;
    toProto(e, &a);
    Event back;
    std::string why;
    if (!fromProto(a, &back, &why)) finding("an event fromProto accepted does not decode once re-encoded", path_);
    v1::Event b;
    toProto(back, &b);
    if (a.SerializeAsString() != b.SerializeAsString())
      finding("an event's encoding changed across a decode/encode round trip", path_);
    ++events;
  }
  std::uint64_t events = 0;

 private:
  const std::string& path_;
};

void exercisePlayer(const std::string& path) {
  try {
    RecordingPlayer player(path);
    {
      v1::RunStarted a;
      toProto(player.run(), &a);
      RunStarted back;
      std::string why;
      if (!fromProto(a, &back, &why)) finding("the run header does not decode once re-encoded", path);
    }
    ReencodingSink sink(path);
    const std::uint64_t n = player.play(sink);
    if (n != sink.events) finding("play() returned a count other than the events it fed", path);
    (void)player.damage();
    const SimTime lo = player.firstTime();
    const SimTime hi = player.lastTime();
    player.seek(hi);
    player.play(sink);
    player.seek(std::midpoint(lo, hi));
    player.play(sink);
    const RecordingDamage d = player.damage();
    for (const auto& p : d.problems)
      if (p.empty()) finding("an empty damage line", path);
  } catch (const InputError& e) {
    if (std::string(e.what()).empty()) finding("InputError without a message", path);
  }
}

// The recording as a workload (RecordingWorkload): InputError or sessions whose turns have a
// positive size and prompts that expand to the input's blocks.
void exerciseWorkload(const std::string& path) {
  try {
    const Workload w = RecordingWorkload::read(path);
    std::vector<BlockHash> hashes;
    for (const auto& s : w.sessions) {
      if (s.turns.empty()) finding("a workload session without a turn", path);
      for (const auto& t : s.turns) {
        if (t.prompt.input_tokens <= 0) finding("a workload turn without input tokens", path);
        if (!(t.think_s >= 0) || !(t.offset_s >= 0)) finding("a negative or NaN think time or offset", path);
        expandBlockHashes(t.prompt, 16, hashes);
        if (hashes.size() != static_cast<std::size_t>(t.prompt.input_tokens / 16))
          finding("a prompt that does not expand to its input's blocks", path);
      }
    }
  } catch (const InputError& e) {
    if (std::string(e.what()).empty()) finding("InputError without a message", path);
  }
}

void runOne(const std::string& path, const void* data, std::size_t size) {
  fuzz::TempDir::write(path, data, size);
  exerciseReader(path, size);
  exercisePlayer(path);
  exerciseWorkload(path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  // Hostile payloads make protobuf log (invalid UTF-8 in string fields) on every run: discard it.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::TempDir dir("kvrec");
  static const std::string raw = dir.file("input.kvrec");
  static const std::string fixed = dir.file("repaired.kvrec");

  runOne(raw, data, size);
  const std::string repaired = repairChecksums(data, size);
  if (size > 0 && std::memcmp(repaired.data(), data, size) != 0) runOne(fixed, repaired.data(), repaired.size());
  return 0;
}
