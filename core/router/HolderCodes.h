#pragma once
// The workers holding a block (or a run of blocks), packed in 32 bits, as both prefix indexes keep
// them (PrefixIndex per block, ChainIndex per run). A block is almost always held by one or two
// workers (its session's D, and the D it was reseeded to), so a code keeps up to two worker ids
// inline and spills to a shared WorkerSet only when three or more hold it (the boilerplate every D
// caches: few blocks, however many sessions use them).
//
// A code: kSpilled clear: up to two worker ids + 1 (low 16 bits, then 15 bits; 0 = none, the low
// half filled first); kSpilled set: an index into the spilled sets this object owns.
#include <cstdint>
#include <vector>

#include "core/router/WorkerSet.h"

namespace kvscope {

class HolderCodes {
 public:
  static constexpr std::uint32_t kSpilled = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kNone = 0;

  // Both return whether the code changed.
  bool add(std::uint32_t& code, WorkerId w) {
    if (code & kSpilled) {
      WorkerSet& s = sets_[code & ~kSpilled];
      if (s.test(w)) return false;
      s.set(w);
      return true;
    }
    const std::uint32_t me = static_cast<std::uint32_t>(w) + 1;
    const std::uint32_t a = code & 0xFFFF, b = code >> 16;
    if (a == me || b == me) return false;
    if (a == 0) {
      code |= me;
    } else if (b == 0) {
      code |= me << 16;
    } else {
      const std::uint32_t i = spill();
      WorkerSet& s = sets_[i];
      s.set(static_cast<WorkerId>(a - 1));
      s.set(static_cast<WorkerId>(b - 1));
      s.set(w);
      code = kSpilled | i;
    }
    return true;
  }
  bool remove(std::uint32_t& code, WorkerId w) {
    if (code & kSpilled) {
      const std::uint32_t i = code & ~kSpilled;
      WorkerSet& s = sets_[i];
      if (!s.test(w)) return false;
      s.reset(w);
      if (s.count() <= 2) {  // back inline, low half first
        code = 0;
        s.forEach([&](WorkerId x) { code |= (static_cast<std::uint32_t>(x) + 1) << ((code & 0xFFFF) ? 16 : 0); });
        free_.push_back(i);
      }
      return true;
    }
    const std::uint32_t me = static_cast<std::uint32_t>(w) + 1;
    const std::uint32_t a = code & 0xFFFF, b = code >> 16;
    if (a == me) {
      code = b;
    } else if (b == me) {
      code = a;
    } else {
      return false;
    }
    return true;
  }
  bool test(std::uint32_t code, WorkerId w) const {
    if (code & kSpilled) return sets_[code & ~kSpilled].test(w);
    const std::uint32_t me = static_cast<std::uint32_t>(w) + 1;
    return (code & 0xFFFF) == me || (code >> 16) == me;
  }
  WorkerSet set(std::uint32_t code) const {
    if (code & kSpilled) return sets_[code & ~kSpilled];
    WorkerSet s;
    if (code & 0xFFFF) s.set(static_cast<WorkerId>((code & 0xFFFF) - 1));
    if (code >> 16) s.set(static_cast<WorkerId>((code >> 16) - 1));
    return s;
  }
  // A spilled code's set (the walk intersects with it).
  const WorkerSet& spilled(std::uint32_t code) const { return sets_[code & ~kSpilled]; }
  // A second code with the same holders (a run split in two); inline codes are values already.
  std::uint32_t copy(std::uint32_t code) {
    if ((code & kSpilled) == 0) return code;
    const std::uint32_t i = spill();
    sets_[i] = sets_[code & ~kSpilled];
    return kSpilled | i;
  }
  // The code is no longer used (its run was erased or merged).
  void release(std::uint32_t code) {
    if (code & kSpilled) free_.push_back(code & ~kSpilled);
  }
  // Same holders, whatever the encoding.
  bool same(std::uint32_t a, std::uint32_t b) const {
    if (((a | b) & kSpilled) == 0) return a == b || ((a & 0xFFFF) == (b >> 16) && (a >> 16) == (b & 0xFFFF));
    return set(a) == set(b);
  }
  std::size_t memoryBytes() const {
    return sets_.capacity() * sizeof(WorkerSet) + free_.capacity() * sizeof(std::uint32_t);
  }

 private:
  std::uint32_t spill() {
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      sets_[i].clear();
      return i;
    }
    sets_.emplace_back();
    return static_cast<std::uint32_t>(sets_.size() - 1);
  }

  std::vector<WorkerSet> sets_;
  std::vector<std::uint32_t> free_;
};

// The workers still matching a prefix walk, narrowed by each block's (or run's) holders. `count` is
// kept beside the set so that the common step (one or two holders, none of them dropping out)
// costs two bit tests.
class HolderWalk {
 public:
  HolderWalk(const HolderCodes& codes, int words) : codes_(codes), words_(words) {}
  // A walk that starts with workers 0..n-1 all matching (a match from the root).
  static HolderWalk fromAll(const HolderCodes& codes, int n) {
    HolderWalk walk(codes, WorkerSet::wordsFor(n));
    walk.alive = WorkerSet::first(n);
    walk.count = n;
    return walk;
  }

  WorkerSet alive;
  int count = 0;

  // Narrows `alive` to the holders `code` names (none when `present` is false), passing the workers
  // it drops to `settle` before the set changes.
  template <typename Settle>
  void narrow(bool present, std::uint32_t code, Settle&& settle) {
    if (!present) {
      settle(alive);
      alive.clear(words_);
      count = 0;
      return;
    }
    if ((code & HolderCodes::kSpilled) == 0) {
      const int a = static_cast<int>(code & 0xFFFF) - 1;
      const int b = static_cast<int>(code >> 16) - 1;
      const bool keep_a = a >= 0 && alive.test(a);
      const bool keep_b = b >= 0 && alive.test(b);
      const int kept = int{keep_a} + int{keep_b};
      if (kept == count) return;
      if (keep_a) alive.reset(a);
      if (keep_b) alive.reset(b);
      settle(alive);
      alive.clear(words_);
      if (keep_a) alive.set(a);
      if (keep_b) alive.set(b);
      count = kept;
      return;
    }
    WorkerSet next = alive;
    next.intersect(codes_.spilled(code), words_);
    const int kept = next.count(words_);
    if (kept == count) return;
    settle(alive.minus(next, words_));
    alive = next;
    count = kept;
  }

 private:
  const HolderCodes& codes_;
  int words_;
};

}  // namespace kvscope
