#include "backend/recording/RecordingPlayer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <stdexcept>

#include "backend/convert/EventConvert.h"
#include "backend/recording/KvrecReader.h"
#include "core/model/Error.h"
#include "kvscope/v1/events.pb.h"
#include "kvscope/v1/recording.pb.h"

namespace kvscope {

RecordingPlayer::RecordingPlayer(const std::string& path) : path_(path), scratch_(std::make_unique<v1::Event>()) {
  std::string error;
  reader_ = KvrecReader::open(path, &error);
  if (!reader_) throw InputError(error);
  v1::RecordingHeader header;
  if (!header.ParseFromString(reader_->metadata()))
    throw InputError(formatInputError(path, 0, "header", "the recording's metadata does not decode"));
  std::string why;
  if (header.has_run() && !fromProto(header.run(), &run_, &why))
    throw InputError(formatInputError(path, 0, "header.run", why));
}

RecordingPlayer::~RecordingPlayer() = default;

std::uint64_t RecordingPlayer::play(EventSink& sink) {
  Event event;
  std::uint64_t n = 0;
  while (next(event)) {
    sink.onEvent(event);
    ++n;
  }
  return n;
}

namespace {
// The field number of an encoded v1::Event's payload: the first top-level field after seq and
// time_us (0 when there is none, or the bytes are not protobuf, which the full decode reports).
int payloadField(std::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (const std::uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field != v1::Event::kSeqFieldNumber && field != v1::Event::kTimeUsFieldNumber) return field;
    if (!WireFormatLite::SkipField(&in, tag)) return 0;
  }
  return 0;
}
}  // namespace

void RecordingPlayer::onlyKinds(const std::vector<std::string>& kinds) {
  only_fields_.clear();
  for (const std::string& kind : kinds) {
    const auto* field = v1::Event::descriptor()->FindFieldByName(kind);
    if (!field || !field->containing_oneof()) throw std::invalid_argument("no event kind '" + kind + "'");
    only_fields_.push_back(field->number());
  }
}

bool RecordingPlayer::next(Event& out) {
  KvrecFrame frame;
  v1::Event& proto = *scratch_;
  std::string why;
  while (reader_->next(frame)) {
    if (!only_fields_.empty()) {
      // Undecodable bytes (field 0) go on to the full decode, which reports them.
      const int field = payloadField(frame.payload);
      if (field != 0 && std::find(only_fields_.begin(), only_fields_.end(), field) == only_fields_.end()) continue;
    }
    if (proto.ParseFromArray(frame.payload.data(), static_cast<int>(frame.payload.size())) &&
        fromProto(proto, &out, &why))
      return true;
    decode_problems_.push_back(path_ + ": frame at byte " + std::to_string(frame.offset) + " (seq " +
                               std::to_string(frame.seq) + ") does not decode as an event" +
                               (why.empty() ? "" : ": " + why) + "; skipped");
  }
  return false;
}

void RecordingPlayer::seek(SimTime time) { reader_->seek(time); }
SimTime RecordingPlayer::firstTime() const { return reader_->firstTime(); }
SimTime RecordingPlayer::lastTime() const { return reader_->lastTime(); }

RecordingDamage RecordingPlayer::damage() const {
  RecordingDamage d;
  for (const auto& p : reader_->problems()) d.problems.push_back(p.message);
  d.problems.insert(d.problems.end(), decode_problems_.begin(), decode_problems_.end());
  const auto stats = reader_->stats();
  d.frames = stats.frames;
  d.skipped_bytes = stats.skipped_bytes;
  d.truncated = stats.truncated;
  d.index_rebuilt = stats.index_rebuilt;
  return d;
}

}  // namespace kvscope
