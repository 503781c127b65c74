#include "core/live/MooncakeLogMapper.h"

namespace kvscope {

std::string MooncakeLogMapper::reason(const MooncakeLogRecord& r) {
  std::string out = "Mooncake ";
  out += r.severity ? r.severity : '?';
  out += ' ' + r.file + ':' + std::to_string(r.line) + ": " + r.message;
  if (out.size() > kMaxReason) out.resize(kMaxReason);
  return out;
}

MooncakeLogMapper::Link MooncakeLogMapper::linkFor(const std::string& peer) const {
  // The peer of a prefill's engine is a decode, and the other way round.
  Link l;
  if (ref_.role == WorkerRole::Prefill) {
    l.prefill = ref_.prefill;
    l.decode = book_ && !peer.empty() ? book_->decode(peer) : kNoWorker;
    if (l.decode == kNoWorker) l.decode = ref_.peer_decode;
  } else {
    l.decode = ref_.worker;
    l.prefill = book_ && !peer.empty() ? book_->prefill(peer) : -1;
    if (l.prefill < 0) l.prefill = ref_.peer_prefill;
  }
  return l;
}

void MooncakeLogMapper::linkState(LogMapping& m, Link link, LinkState state, const std::string& why) {
  if (!link.known()) return;
  auto [it, fresh] = links_.try_emplace({link.prefill, link.decode}, LinkState::Alive);
  // The first word on a link is always said; after that, only changes (a failing link logs a
  // line per slice).
  if (!fresh && it->second == state) return;
  it->second = state;
  LinkHealth h;
  h.prefill = link.prefill;
  h.worker = link.decode;
  h.state = state;
  h.reason = why;
  m.events.push_back(std::move(h));
}

void MooncakeLogMapper::everyLink(LogMapping& m, LinkState state, const std::string& why) {
  if (ref_.role == WorkerRole::Prefill) {
    if (!book_) return;
    for (WorkerId d : book_->decode_workers) linkState(m, {ref_.prefill, d}, state, why);
    return;
  }
  linkState(m, linkFor({}), state, why);
}

LogMapping MooncakeLogMapper::map(const MooncakeLogRecord& r) {
  LogMapping m;
  switch (r.kind) {
    case MooncakeLineKind::TransferFailed:
    case MooncakeLineKind::PeerUnreachable:
    case MooncakeLineKind::Reconnect:
      if (!r.peer.empty())
        linkState(m, linkFor(r.peer), LinkState::Suspect, reason(r));
      else
        everyLink(m, LinkState::Suspect, reason(r));
      break;
    case MooncakeLineKind::PeerMarkedDead:
      if (!r.peer.empty())
        linkState(m, linkFor(r.peer), LinkState::Dead, reason(r));
      else
        everyLink(m, LinkState::Dead, reason(r));
      break;
    case MooncakeLineKind::MetadataError:
      // A segment the engine cannot describe is a link it cannot use; a store outage is every link's.
      if (!r.peer.empty())
        linkState(m, linkFor(r.peer), LinkState::Suspect, reason(r));
      else if (r.severity == 'E' || r.severity == 'F')
        everyLink(m, LinkState::Suspect, reason(r));
      break;
    case MooncakeLineKind::NicInactive:
      everyLink(m, LinkState::Suspect, reason(r));
      break;
    case MooncakeLineKind::NicActive:
    case MooncakeLineKind::Info:
    case MooncakeLineKind::Unknown:
    case MooncakeLineKind::NotGlog:
      break;
  }
  return m;
}

LogMapping MooncakeLogMapper::feed(std::string_view line) {
  const MooncakeLogRecord r = MooncakeLogParser::parse(line);
  count(r);
  return map(r);
}

void MooncakeLogMapper::count(const MooncakeLogRecord& r) {
  ++counts_.lines;
  if (r.kind == MooncakeLineKind::NotGlog)
    ++counts_.not_glog;
  else if (r.kind == MooncakeLineKind::Unknown) {
    ++counts_.unknown;
    shapes_.add(r.message);
  } else
    ++counts_.known;
}

}  // namespace kvscope
