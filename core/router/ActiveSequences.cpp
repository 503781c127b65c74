#include "core/router/ActiveSequences.h"

#include <algorithm>

namespace kvscope {

void ActiveSequences::add(RequestId request, WorkerId worker, std::span<const BlockHash> hashes,
                          std::int64_t prefill_tokens, std::int64_t input_tokens) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= workers_.size()) return;
  free(request);
  Worker& w = workers_[static_cast<std::size_t>(worker)];
  w.prefill_tokens += prefill_tokens;
  w.input_tokens += input_tokens;
  ++w.requests;
  auto it =
      requests_.emplace(request, Tracked{worker, {hashes.begin(), hashes.end()}, prefill_tokens, input_tokens}).first;
  it->second.slot = static_cast<std::uint32_t>(w.ids.size());
  w.ids.push_back(request);
  if (counting_) count(it->second, +1);
}

void ActiveSequences::count(const Tracked& t, int sign) {
  Worker& w = workers_[static_cast<std::size_t>(t.worker)];
  for (BlockHash h : t.hashes) {
    if (sign > 0) {
      ++w.blocks[h];
    } else if (auto b = w.blocks.find(h); b != w.blocks.end() && --b->second <= 0) {
      w.blocks.erase(b);
    }
  }
}

void ActiveSequences::setCountingBlocks(bool on) {
  if (on == counting_) return;
  counting_ = on;
  for (Worker& w : workers_) w.blocks = {};
  if (on)
    for (const auto& [id, t] : requests_) count(t, +1);
}

void ActiveSequences::prefillDone(RequestId request) {
  auto it = requests_.find(request);
  if (it == requests_.end()) return;
  if (it->second.prefilled) return;
  Worker& w = workers_[static_cast<std::size_t>(it->second.worker)];
  w.prefill_tokens -= it->second.prefill_tokens;
  w.decode_tokens += it->second.input_tokens;
  it->second.prefill_tokens = 0;
  it->second.prefilled = true;
}

void ActiveSequences::compact() {
  requests_.rehash(0);
  for (Worker& w : workers_) w.blocks.rehash(0);
}

void ActiveSequences::free(RequestId request) {
  auto it = requests_.find(request);
  if (it == requests_.end()) return;
  if (counting_) count(it->second, -1);
  Worker& w = workers_[static_cast<std::size_t>(it->second.worker)];
  w.prefill_tokens -= it->second.prefill_tokens;
  w.input_tokens -= it->second.input_tokens;
  if (it->second.prefilled) w.decode_tokens -= it->second.input_tokens;
  --w.requests;
  const std::uint32_t slot = it->second.slot;
  if (slot + 1 < w.ids.size()) {
    w.ids[slot] = w.ids.back();
    requests_.at(w.ids[slot]).slot = slot;
  }
  w.ids.pop_back();
  requests_.erase(it);
}

void ActiveSequences::clearWorker(WorkerId worker) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= workers_.size()) return;
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (it->second.worker == worker)
      requests_.erase(it++);
    else
      ++it;
  }
  workers_[static_cast<std::size_t>(worker)] = Worker{};
}

std::int64_t ActiveSequences::newBlocks(WorkerId w, std::span<const BlockHash> hashes) const {
  const Worker& worker = at(w);
  // An idle worker holds none of them: no need to look each one up.
  if (worker.blocks.empty()) return static_cast<std::int64_t>(hashes.size());
  std::int64_t n = 0;
  for (BlockHash h : hashes) n += !worker.blocks.contains(h);
  return n;
}

std::int64_t ActiveSequences::prefixBlocks(WorkerId w, std::span<const BlockHash> hashes) const {
  std::size_t best = 0;
  for (RequestId id : at(w).ids) {
    const std::vector<BlockHash>& other = requests_.at(id).hashes;
    const std::size_t n = std::min(other.size(), hashes.size());
    if (n <= best) continue;
    const auto mismatch = std::mismatch(hashes.begin(), hashes.begin() + static_cast<std::ptrdiff_t>(n), other.begin());
    best = std::max(best, static_cast<std::size_t>(mismatch.first - hashes.begin()));
  }
  return static_cast<std::int64_t>(best);
}

}  // namespace kvscope
