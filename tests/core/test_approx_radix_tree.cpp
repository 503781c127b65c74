// The run-compressed ApproxRadixTree (what sglang-cache-aware routes with) against the per-element
// tree it replaced (tests/support/PerElementRadixTree.h): random inserts, matches, policy-like
// decisions (a match, then an insert of the same prompt at the same `now`), more operations at one
// `now` along one path, and evictions with small sizes, by 2-8 tenants, over paths that fork from
// known paths at random depths, so runs get split inside by paths, matches and evictions alike.
// `now` grows with every operation but those along one path: the one case (ties of access times)
// where the two may evict in another order never comes up. After every operation both must report
// the same sizes, smallest tenant and a probe match.
#include <QtTest>

#include <random>

#include "core/router/ApproxRadixTree.h"
#include "tests/support/PerElementRadixTree.h"

using namespace kvscope;
using kvscope::test::PerElementRadixTree;

namespace {

// Known paths: a new one forks from a known one at a random depth (or starts afresh).
struct Paths {
  std::vector<std::vector<BlockHash>> all;
  BlockHash next = 1;
  std::mt19937_64& rng;

  explicit Paths(std::mt19937_64& r) : rng(r) {}
  const std::vector<BlockHash>& fork(std::size_t max_grow) {
    std::vector<BlockHash> p;
    if (!all.empty() && rng() % 5 != 0) {
      const auto& base = all[rng() % all.size()];
      p.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(rng() % (base.size() + 1)));
    }
    const std::size_t grow = 1 + rng() % max_grow;
    for (std::size_t i = 0; i < grow; ++i) p.push_back(next++);
    all.push_back(std::move(p));
    return all.back();
  }
  const std::vector<BlockHash>& any() { return all.empty() ? fork(16) : all[rng() % all.size()]; }
  // A prompt: a known path, often cut at a random depth, sometimes followed by a block nobody has.
  std::vector<BlockHash> prompt() {
    std::vector<BlockHash> p = any();
    if (rng() % 2 == 0) p.resize(rng() % (p.size() + 1));
    if (rng() % 3 == 0) p.push_back(next++);
    return p;
  }
};

// Both trees, driven alike; every answer compared.
struct Both {
  ApproxRadixTree tree;
  PerElementRadixTree ref;
  int tenants;

  explicit Both(int n) : tree(n), ref(n), tenants(n) {}
  void insert(std::span<const BlockHash> seq, WorkerId t, std::uint64_t now) {
    tree.insert(seq, t, now);
    ref.insert(seq, t, now);
  }
  void evict(std::int64_t max_size) {
    tree.evictTenantBySize(max_size);
    ref.evictTenantBySize(max_size);
  }
  // Fails the test (QVERIFY2, so the caller must check QTest::currentTestFailed) on a mismatch.
  void match(std::span<const BlockHash> seq, std::uint64_t now, const char* what, int step, ApproxRadixTree::Match& a) {
    a = tree.prefixMatch(seq, now);
    const auto b = ref.prefixMatch(seq, now);
    const bool same = a.matched == b.matched && a.tenant == b.tenant && a.per_tenant == b.per_tenant;
    QString per_a, per_b;
    for (std::size_t t = 0; t < a.per_tenant.size(); ++t) per_a += QString(" %1").arg(a.per_tenant[t]);
    for (std::size_t t = 0; t < b.per_tenant.size(); ++t) per_b += QString(" %1").arg(b.per_tenant[t]);
    QVERIFY2(same, qPrintable(QString("step %1 (%2), prompt of %3: matched %4/%5, tenant %6/%7, per tenant%8 /%9 "
                                      "(runs/per element)")
                                  .arg(step)
                                  .arg(what)
                                  .arg(seq.size())
                                  .arg(a.matched)
                                  .arg(b.matched)
                                  .arg(a.tenant)
                                  .arg(b.tenant)
                                  .arg(per_a, per_b)));
  }
  ApproxRadixTree::Match match(std::span<const BlockHash> seq, std::uint64_t now, const char* what, int step) {
    ApproxRadixTree::Match a;
    match(seq, now, what, step, a);
    return a;
  }
  void compareSizes(int step) {
    for (WorkerId t = 0; t < tenants; ++t)
      QVERIFY2(tree.size(t) == ref.size(t), qPrintable(QString("step %1, tenant %2: size %3/%4 (runs/per element)")
                                                           .arg(step)
                                                           .arg(t)
                                                           .arg(tree.size(t))
                                                           .arg(ref.size(t))));
    QCOMPARE(tree.smallestTenant(), ref.smallestTenant());
  }
  std::int64_t total() const {
    std::int64_t s = 0;
    for (WorkerId t = 0; t < tenants; ++t) s += tree.size(t);
    return s;
  }
};

void randomWorkload(int tenants, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Paths paths(rng);
  Both both(tenants);
  std::uint64_t now = 0;
  const auto anyTenant = [&] { return static_cast<WorkerId>(rng() % static_cast<std::uint64_t>(tenants)); };
  for (int step = 0; step < steps; ++step) {
    const int op = static_cast<int>(rng() % 100);
    const char* what = "";
    if (op < 30) {
      what = "insert";
      std::vector<BlockHash> seq = op < 12 ? paths.fork(16) : paths.prompt();
      both.insert(seq, anyTenant(), ++now);
    } else if (op < 55) {
      // The policy: match, then insert the prompt under the worker chosen (mostly the match's).
      what = "decision";
      const std::vector<BlockHash> seq = op < 42 ? paths.fork(16) : paths.prompt();
      const auto m = both.match(seq, ++now, what, step);
      if (QTest::currentTestFailed()) return;
      both.insert(seq, m.tenant == kNoWorker || rng() % 3 == 0 ? anyTenant() : m.tenant, now);
    } else if (op < 65) {
      // More at the same time, along the path just inserted (so no two leaves of a tenant tie): runs
      // the tenant already holds at `now` need no split where an insert or a match ends inside them.
      what = "same time";
      std::vector<BlockHash> seq = paths.prompt();
      const WorkerId t = anyTenant();
      both.insert(seq, t, ++now);
      seq.resize(rng() % (seq.size() + 1));
      both.insert(seq, t, now);
      seq.resize(rng() % (seq.size() + 1));
      both.match(seq, now, what, step);
    } else if (op < 90) {
      what = "match";
      both.match(paths.prompt(), ++now, what, step);
    } else {
      what = "evict";
      both.evict(static_cast<std::int64_t>(rng() % (rng() % 4 == 0 ? 200 : 40)));
    }
    if (QTest::currentTestFailed()) return;
    both.compareSizes(step);
    both.match(paths.prompt(), ++now, "probe", step);
    if (QTest::currentTestFailed()) return;
    // Every run has an element and every element a tenant.
    QVERIFY(static_cast<std::int64_t>(both.tree.nodeCount()) <= both.total());
  }
  // Evicted down to nothing, no run is left behind.
  both.evict(0);
  both.compareSizes(steps);
  QCOMPARE(both.tree.nodeCount(), std::size_t{0});
}

std::vector<BlockHash> range(BlockHash from, BlockHash to) {
  std::vector<BlockHash> v;
  for (BlockHash h = from; h <= to; ++h) v.push_back(h);
  return v;
}

}  // namespace

class TestApproxRadixTree : public QObject {
  Q_OBJECT
 private slots:
  void agreesWithThePerElementTree_data() {
    QTest::addColumn<int>("tenants");
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 8; ++seed) {
      const int tenants = 2 + (seed - 1) % 7;
      QTest::addRow("%d tenants, seed %d", tenants, seed) << tenants << seed;
    }
    QTest::addRow("8 tenants, seed 9") << 8 << 9;
  }
  void agreesWithThePerElementTree() {
    QFETCH(int, tenants);
    QFETCH(int, seed);
    randomWorkload(tenants, 4000, static_cast<std::uint64_t>(seed));
  }

  // A run two tenants reach differently splits where they diverge, and joins again when alike.
  void aSharedRunSplits() {
    Both b(2);
    const auto a = range(1, 10);
    b.insert(a, 0, 1);
    QCOMPARE(b.tree.nodeCount(), std::size_t{1});
    b.insert(range(1, 4), 1, 2);  // [1..4] {0, 1} -> [5..10] {0}
    QCOMPARE(b.tree.nodeCount(), std::size_t{2});
    auto m = b.match(a, 3, "whole", 0);
    QCOMPARE(m.matched, std::int64_t{10});
    QCOMPARE(m.tenant, 0);
    QCOMPARE(m.per_tenant, (std::vector<std::int64_t>{10, 4}));
    // Ends inside [1..4]: its first tenant, 0, reached it first; refreshed only up to 2, so it splits.
    m = b.match(std::vector<BlockHash>{1, 2, 99}, 4, "inside", 1);
    QCOMPARE(m.matched, std::int64_t{2});
    QCOMPARE(m.tenant, 0);
    QCOMPARE(m.per_tenant, (std::vector<std::int64_t>{2, 2}));
    QCOMPARE(b.tree.nodeCount(), std::size_t{3});
    // Tenant 0 refreshes [1..4] whole: [1,2] and [3,4] are alike again and join.
    b.insert(range(1, 4), 0, 5);
    QCOMPARE(b.tree.nodeCount(), std::size_t{2});
    // Tenant 0 is 2 over: the tail of its own leaf run goes, the run stays.
    b.evict(8);
    b.compareSizes(2);
    QCOMPARE(b.tree.size(0), std::int64_t{8});
    QCOMPARE(b.tree.nodeCount(), std::size_t{2});
    // Down to 2 each: tenant 1's oldest leaf [1..4] (access 2) loses its tail [3,4] (a split);
    // tenant 0 loses [5..8], then [3,4], which nobody holds any more.
    b.evict(2);
    b.compareSizes(3);
    QCOMPARE(b.tree.nodeCount(), std::size_t{1});
    m = b.match(a, 6, "after eviction", 4);
    QCOMPARE(m.matched, std::int64_t{2});
    QCOMPARE(m.per_tenant, (std::vector<std::int64_t>{2, 2}));
  }

  // An eviction that takes a tenant off a whole run can leave it alike its only child: they join.
  void anEvictionJoinsRunsAgain() {
    Both b(2);
    b.insert(range(1, 8), 0, 1);
    b.insert(range(1, 4), 1, 2);  // [1..4] {0, 1} -> [5..8] {0}
    b.insert(range(20, 30), 1, 3);
    QCOMPARE(b.tree.nodeCount(), std::size_t{3});
    b.evict(8);  // tenant 1 is 7 over: its oldest leaf [1..4] goes whole, then 3 of [20..30]
    b.compareSizes(0);
    QCOMPARE(b.tree.size(1), std::int64_t{8});
    QCOMPARE(b.tree.nodeCount(), std::size_t{2});
    const auto m = b.match(range(1, 8), 4, "joined", 0);
    QCOMPARE(m.matched, std::int64_t{8});
    QCOMPARE(m.per_tenant, (std::vector<std::int64_t>{8, 0}));
  }

  // Three long multi-turn sessions on three tenants behind one system prompt, routed as the policy
  // does (a match, then an insert at the same time): one run for the prompt and one per session.
  void aLongSessionStaysAFewRuns() {
    Both b(3);
    const auto system = range(1, 32);
    std::vector<std::vector<BlockHash>> sessions(3, system);
    BlockHash next = 1000;
    std::uint64_t now = 0;
    for (int turn = 0; turn < 40; ++turn) {
      for (WorkerId s = 0; s < 3; ++s) {
        for (int i = 0; i < 24; ++i) sessions[static_cast<std::size_t>(s)].push_back(next++);
        b.match(sessions[static_cast<std::size_t>(s)], ++now, "turn", turn);
        if (QTest::currentTestFailed()) return;
        b.insert(sessions[static_cast<std::size_t>(s)], s, now);
      }
    }
    b.compareSizes(0);
    const std::int64_t elements = 32 + 3 * 40 * 24;
    QCOMPARE(b.tree.size(0), std::int64_t{32 + 40 * 24});
    QCOMPARE(b.tree.nodeCount(), std::size_t{4});
    qInfo("%lld elements in %zu runs", static_cast<long long>(elements), b.tree.nodeCount());
    // Trimmed to 500 each: every session run loses its tail, and stays one run.
    b.evict(500);
    b.compareSizes(1);
    QCOMPARE(b.tree.nodeCount(), std::size_t{4});
    const auto m = b.match(sessions[1], ++now, "trimmed", 0);
    QCOMPARE(m.matched, std::int64_t{500});
    QCOMPARE(m.tenant, 1);
  }
};

QTEST_APPLESS_MAIN(TestApproxRadixTree)
#include "test_approx_radix_tree.moc"
