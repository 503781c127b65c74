// Block hashes expanded from real traces in a block size other than the trace's: prefix sharing must
// survive splitting (512 -> 24) and merging (64 -> 128), boilerplate is shared across sessions and
// nothing else is, and the same input always gives the same hashes.
#include <QtTest>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core/trace/BlockChain.h"
#include "core/trace/TraceLoader.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;
using kvscope::test::testDataPath;

namespace {

// The real samples in tests/data/traces (tests/data/README.md).
std::string tracePath(const QString& rel) { return testDataPath("traces/" + rel.toStdString()); }

std::vector<BlockHash> expand(const PromptLayout& p, int block_size) {
  std::vector<BlockHash> out;
  expandBlockHashes(p, block_size, out);
  return out;
}

int commonPrefix(const std::vector<BlockHash>& a, const std::vector<BlockHash>& b) {
  return static_cast<int>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

// What two prompts of one hash scope should share in `block_size` blocks, from the trace's own ids:
// block j is shared while it lies in the common boilerplate or the trace block holding its last
// token is one of the common leading ids.
int expectedShared(const PromptLayout& a, const PromptLayout& b, int block_size) {
  const std::int64_t common_ids = commonPrefix(a.source_hashes, b.source_hashes);
  const int shared = std::min(a.shared_prefix_tokens, b.shared_prefix_tokens);
  const int blocks = std::min(fullBlocks(a.input_tokens, block_size), fullBlocks(b.input_tokens, block_size));
  int j = 0;
  for (; j < blocks; ++j) {
    const std::int64_t end = static_cast<std::int64_t>(j + 1) * block_size;
    if (end > shared && (end - 1) / a.source_block_size >= common_ids) break;
  }
  return j;
}

const Workload& conversation() {
  static const Workload w = loadTrace(tracePath("conversation_trace_600.jsonl"), {});
  return w;
}

Workload agentic(const QString& file) { return loadTrace(tracePath("kv-cache-tester/" + file), {}); }

}  // namespace

class TestBlockChain : public QObject {
  Q_OBJECT
 private slots:
  void mooncakeSplit_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("shared");
    // The first two requests share hash_id 0 only: blocks whose last token is < 512.
    QTest::newRow("24") << 24 << 21;
    QTest::newRow("16") << 16 << 32;
    QTest::newRow("100") << 100 << 5;
    QTest::newRow("512") << 512 << 1;
    QTest::newRow("1") << 1 << 512;
    QTest::newRow("1000") << 1000 << 0;  // block 0 already ends inside the second trace block
  }

  void mooncakeSplit() {
    QFETCH(int, blockSize);
    QFETCH(int, shared);
    const PromptLayout& a = conversation().sessions[0].turns[0].prompt;
    const PromptLayout& b = conversation().sessions[1].turns[0].prompt;
    QCOMPARE(a.source_hashes[0], b.source_hashes[0]);
    QVERIFY(a.source_hashes[1] != b.source_hashes[1]);
    const auto ha = expand(a, blockSize);
    const auto hb = expand(b, blockSize);
    QCOMPARE(int(ha.size()), a.input_tokens / blockSize);
    QCOMPARE(int(hb.size()), b.input_tokens / blockSize);
    QCOMPARE(commonPrefix(ha, hb), shared);
    // Not only the first difference: no later block of one prompt appears anywhere in the other.
    const std::set<BlockHash> sa(ha.begin() + shared, ha.end());
    for (std::size_t j = shared; j < hb.size(); ++j) QVERIFY(!sa.count(hb[j]));
  }

  // Every pair shares exactly what its 512-token ids say it shares, in 24-token blocks. The trace's
  // multi-turn conversations share long prefixes, so this covers far more than block 0.
  void mooncakePairsAgreeWithTheirIds() {
    const auto& sessions = conversation().sessions;
    // Requests of one conversation share their second id too: pair each with the last one before it.
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    std::map<std::uint64_t, std::size_t> last_with;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      const auto& ids = sessions[i].turns[0].prompt.source_hashes;
      if (ids.size() < 2) continue;
      if (auto it = last_with.find(ids[1]); it != last_with.end()) pairs.emplace_back(it->second, i);
      last_with[ids[1]] = i;
    }
    QCOMPARE(pairs.size(), std::size_t(101));  // python3 over the 600 lines, pairing the same way
    std::mt19937 rng(11);
    for (int i = 0; i < 1000; ++i) pairs.emplace_back(rng() % sessions.size(), rng() % sessions.size());
    int longest = 0;
    for (const auto& [x, y] : pairs) {
      const PromptLayout& a = sessions[x].turns[0].prompt;
      const PromptLayout& b = sessions[y].turns[0].prompt;
      const auto ha = expand(a, 24);
      const int expected = x == y ? int(ha.size()) : expectedShared(a, b, 24);
      QCOMPARE(commonPrefix(ha, expand(b, 24)), expected);
      if (x != y) longest = std::max(longest, expected);
    }
    QVERIFY2(longest > 1000, "no pair shared a long prefix: the check proved little");
  }

  void agenticTurnsShareTheirPrefix_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("blockSize");
    QTest::newRow("0277 merge 128") << "trace_0277.json" << 128;
    QTest::newRow("0277 keep 64") << "trace_0277.json" << 64;
    QTest::newRow("0277 split 24") << "trace_0277.json" << 24;
    QTest::newRow("0001 merge 128") << "trace_0001.json" << 128;
    QTest::newRow("0001 merge 256") << "trace_0001.json" << 256;
  }

  // Consecutive turns of one session (sub-agents included) share their common prefix, no more.
  void agenticTurnsShareTheirPrefix() {
    QFETCH(QString, file);
    QFETCH(int, blockSize);
    const Workload w = agentic(file);
    int pairs = 0, beyond_boilerplate = 0;
    for (const auto& s : w.sessions) {
      for (std::size_t t = 1; t < s.turns.size(); ++t) {
        const PromptLayout& a = s.turns[t - 1].prompt;
        const PromptLayout& b = s.turns[t].prompt;
        const auto ha = expand(a, blockSize);
        const auto hb = expand(b, blockSize);
        QCOMPARE(int(ha.size()), a.input_tokens / blockSize);
        const int expected = expectedShared(a, b, blockSize);
        QCOMPARE(commonPrefix(ha, hb), expected);
        ++pairs;
        if (expected > a.shared_prefix_tokens / blockSize) ++beyond_boilerplate;
      }
    }
    QVERIFY(pairs > 8);
    QVERIFY2(beyond_boilerplate * 2 > pairs, "turns rarely grew a shared conversation: proves little");
  }

  void mergeMatchesSourceBlocks() {
    // A 128-token block is the pair of 64-token blocks (2j, 2j+1): shared iff id 2j+1 is shared.
    const Workload w = agentic("trace_0277.json");
    const Session& s = w.sessions.front();
    const PromptLayout& a = s.turns[1].prompt;
    const PromptLayout& b = s.turns[2].prompt;
    const int common_ids = commonPrefix(a.source_hashes, b.source_hashes);
    QVERIFY(common_ids * 64 > a.shared_prefix_tokens + 128);
    QCOMPARE(commonPrefix(expand(a, 128), expand(b, 128)), common_ids / 2);
    QCOMPARE(commonPrefix(expand(a, 64), expand(b, 64)), common_ids);
  }

  void sessionsShareOnlyBoilerplate_data() {
    QTest::addColumn<QString>("fileA");
    QTest::addColumn<QString>("fileB");
    QTest::addColumn<int>("blockSize");
    // 0012 and 0052 have the same system + tool tokens (2767 + 11899); 0277 and 0001 do not.
    QTest::newRow("same boilerplate 64") << "trace_0012.json"
                                         << "trace_0052.json" << 64;
    QTest::newRow("same boilerplate 128") << "trace_0012.json"
                                          << "trace_0052.json" << 128;
    QTest::newRow("same boilerplate 24") << "trace_0012.json"
                                         << "trace_0052.json" << 24;
    QTest::newRow("different boilerplate 64") << "trace_0277.json"
                                              << "trace_0001.json" << 64;
  }

  void sessionsShareOnlyBoilerplate() {
    QFETCH(QString, fileA);
    QFETCH(QString, fileB);
    QFETCH(int, blockSize);
    const Session a = agentic(fileA).sessions.front();
    const Session b = agentic(fileB).sessions.front();
    const int boiler_a = a.turns[0].prompt.shared_prefix_tokens / blockSize;
    const int boiler_b = b.turns[0].prompt.shared_prefix_tokens / blockSize;
    QVERIFY(boiler_a > 0 && boiler_b > 0);
    if (fileA.contains("0012")) QCOMPARE(boiler_a, 14666 / blockSize);
    const int boiler = std::min(boiler_a, boiler_b);
    // Every turn of one session against every turn of the other: exactly the boilerplate.
    std::set<BlockHash> rest_a;
    for (const auto& ta : a.turns) {
      const auto ha = expand(ta.prompt, blockSize);
      rest_a.insert(ha.begin() + boiler_a, ha.end());
      for (const auto& tb : b.turns) QCOMPARE(commonPrefix(ha, expand(tb.prompt, blockSize)), boiler);
    }
    for (const auto& tb : b.turns) {
      const auto hb = expand(tb.prompt, blockSize);
      for (std::size_t j = boiler_b; j < hb.size(); ++j) QVERIFY2(!rest_a.count(hb[j]), "session block leak");
    }
  }

  void azurePromptsShareNothing() {
    const Workload w = loadTrace(tracePath("AzureLLMInferenceTrace_code_600.csv"), {});
    std::set<BlockHash> all;
    std::size_t total = 0;
    for (std::size_t i = 0; i < 300; ++i) {
      const auto h = expand(w.sessions[i].turns[0].prompt, 24);
      total += h.size();
      all.insert(h.begin(), h.end());
    }
    QVERIFY(total > 1000);
    QCOMPARE(all.size(), total);
  }

  void deterministic_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("mooncake") << "synthetic_trace_600.jsonl";
    QTest::newRow("agentic") << "kv-cache-tester/trace_0291.json";
    QTest::newRow("azure") << "AzureLLMInferenceTrace_conv_600.csv";
  }

  // Two independent loads give the same hashes in the same order (no addresses, clocks or rand).
  void deterministic() {
    QFETCH(QString, file);
    const Workload x = loadTrace(tracePath(file), {});
    const Workload y = loadTrace(tracePath(file), {});
    QCOMPARE(x.sessions.size(), y.sessions.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(x.sessions.size(), 200); ++i) {
      QCOMPARE(x.sessions[i].id, y.sessions[i].id);
      for (std::size_t t = 0; t < x.sessions[i].turns.size(); ++t) {
        const auto hx = expand(x.sessions[i].turns[t].prompt, 24);
        QVERIFY(hx == expand(y.sessions[i].turns[t].prompt, 24));
        QVERIFY(hx == expand(x.sessions[i].turns[t].prompt, 24));
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestBlockChain)
#include "test_block_chain.moc"
