// The knob registry: defaults come from the spec table, apply() is all-or-nothing with one
// KnobChanged per changed value, errors name the field and its range (or list the valid names), and
// parseAssignment() reads exactly NAME=NUMBER.
#include <QtTest>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/knobs/KnobRegistry.h"

using namespace kvscope;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Every value equals its spec's default.
bool allDefaults(const KnobRegistry& r, QString* which) {
  for (const auto& s : KnobRegistry::specs()) {
    if (r.get(s.id) != s.default_value) {
      *which = q(s.name) + " = " + QString::number(r.get(s.id)) + ", default " + QString::number(s.default_value);
      return false;
    }
  }
  return true;
}

// "[min, max]" as the registry prints it.
QString range(const KnobSpec& s) {
  auto fmt = [](double v) {
    std::ostringstream os;
    os << v;
    return QString::fromStdString(os.str());
  };
  return "[" + fmt(s.min) + ", " + fmt(s.max) + "]";
}

}  // namespace

class TestKnobRegistry : public QObject {
  Q_OBJECT
 private slots:
  void specTableIsWellFormed() {
    const auto specs = KnobRegistry::specs();
    QCOMPARE(specs.size(), static_cast<std::size_t>(KnobId::Count));
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const KnobSpec& s = specs[i];
      QCOMPARE(static_cast<std::size_t>(s.id), i);
      QVERIFY2(!s.name.empty(), qPrintable(QString::number(i)));
      QVERIFY2(names.insert(s.name).second, qPrintable("duplicate name " + q(s.name)));
      QVERIFY2(s.min <= s.default_value && s.default_value <= s.max, qPrintable(q(s.name)));
      QVERIFY2(!s.description.empty() && !s.unit.empty(), qPrintable(q(s.name)));
      if (s.integer) {
        QVERIFY2(s.default_value == std::floor(s.default_value), qPrintable(q(s.name)));
        QVERIFY2(s.min == std::floor(s.min) && s.max == std::floor(s.max), qPrintable(q(s.name)));
      }
    }
  }

  void defaultsEqualSpecs() {
    const KnobRegistry r;
    for (const auto& s : KnobRegistry::specs()) {
      QCOMPARE(r.get(s.id), s.default_value);
      QCOMPARE(r.getInt(s.id), static_cast<long>(s.default_value));
    }
    QCOMPARE(r.get(KnobId::LoadFloorK), 0.0);  // off by default; E3 sets K=200 in its scenario
  }

  void findAndSpecAgree() {
    for (const auto& s : KnobRegistry::specs()) {
      const auto id = KnobRegistry::find(s.name);
      QVERIFY2(id.has_value(), qPrintable(q(s.name)));
      QCOMPARE(static_cast<int>(*id), static_cast<int>(s.id));
      const KnobSpec& back = KnobRegistry::spec(*id);
      QCOMPARE(q(back.name), q(s.name));
      QCOMPARE(back.min, s.min);
      QCOMPARE(back.max, s.max);
      QCOMPARE(back.default_value, s.default_value);
      QCOMPARE(back.integer, s.integer);
      QVERIFY2(q(KnobRegistry::validNames()).contains(q(s.name)), qPrintable(q(s.name)));
    }
    QVERIFY(!KnobRegistry::find("nosuch"));
    QVERIFY(!KnobRegistry::find(""));
    QVERIFY(!KnobRegistry::find("K "));
  }

  void applyValidMapAppliesAll() {
    KnobRegistry r;
    // K and rho change, sticky_bonus is set to its current value (no event), session_soft_cap is an integer knob.
    const std::map<std::string, double> changes{
        {"K", 200}, {"rho", 0.9}, {"sticky_bonus", 100}, {"session_soft_cap", 5}};
    const auto res = r.apply(changes, "test-user");
    QVERIFY2(res.ok, res.error.c_str());
    QVERIFY(res.error.empty());
    QCOMPARE(r.get(KnobId::LoadFloorK), 200.0);
    QCOMPARE(r.get(KnobId::Rho), 0.9);
    QCOMPARE(r.get(KnobId::StickyBonus), 100.0);
    QCOMPARE(r.get(KnobId::SessionSoftCap), 5.0);
    QCOMPARE(r.getInt(KnobId::SessionSoftCap), 5L);

    QCOMPARE(res.changes.size(), std::size_t(3));
    std::map<std::string, KnobChanged> byName;
    for (const auto& c : res.changes) {
      QVERIFY2(byName.emplace(c.name, c).second, ("two events for " + c.name).c_str());
      QCOMPARE(q(c.who), QStringLiteral("test-user"));
    }
    QVERIFY(!byName.count("sticky_bonus"));
    QCOMPARE(byName.at("K").old_value, 0.0);
    QCOMPARE(byName.at("K").new_value, 200.0);
    QCOMPARE(byName.at("rho").old_value, 0.95);
    QCOMPARE(byName.at("rho").new_value, 0.9);
    QCOMPARE(byName.at("session_soft_cap").old_value, 0.0);
    QCOMPARE(byName.at("session_soft_cap").new_value, 5.0);

    // Untouched knobs keep their defaults.
    for (const auto& s : KnobRegistry::specs())
      if (!changes.count(std::string(s.name))) QCOMPARE(r.get(s.id), s.default_value);

    // The same map again changes nothing; a second change reports the previous value as old.
    const auto again = r.apply(changes, "test-user");
    QVERIFY(again.ok);
    QCOMPARE(again.changes.size(), std::size_t(0));
    const auto back = r.apply({{"K", 50}}, "gui");
    QVERIFY(back.ok);
    QCOMPARE(back.changes.size(), std::size_t(1));
    QCOMPARE(back.changes[0].old_value, 200.0);
    QCOMPARE(back.changes[0].new_value, 50.0);
    QCOMPARE(q(back.changes[0].who), QStringLiteral("gui"));
  }

  // The value in an out-of-range message is the one given, not a six-digit rounding of it.
  void outOfRangeShowsTheExactValue() {
    KnobRegistry r;
    const auto res = r.apply({{"K", 10000.000001}}, "t");
    QVERIFY(!res.ok);
    QVERIFY2(res.error.find("10000.000001 is out of range [0, 10000]") != std::string::npos, res.error.c_str());
  }

  void applyEmptyMap() {
    KnobRegistry r;
    const auto res = r.apply({}, "x");
    QVERIFY(res.ok);
    QVERIFY(res.changes.empty());
  }

  // Every knob accepts its own min and max and rejects just outside them.
  void boundsOfEveryKnob() {
    for (const auto& s : KnobRegistry::specs()) {
      const std::string name(s.name);
      KnobRegistry r;
      QVERIFY2(r.apply({{name, s.min}}, "t").ok, qPrintable(q(name) + " min"));
      QCOMPARE(r.get(s.id), s.min);
      QVERIFY2(r.apply({{name, s.max}}, "t").ok, qPrintable(q(name) + " max"));
      QCOMPARE(r.get(s.id), s.max);
      for (double bad : {s.min - 1, s.max + 1}) {
        const auto res = r.apply({{name, bad}}, "t");
        QVERIFY2(!res.ok, qPrintable(q(name) + " accepted " + QString::number(bad)));
        QVERIFY2(q(res.error).contains(q(name)) && q(res.error).contains(range(s)), res.error.c_str());
        QCOMPARE(r.get(s.id), s.max);
      }
    }
  }

  // One valid and one invalid entry: nothing is applied, no events, and the error names the problem.
  // "K" sorts before and "throughput" after every invalid name, so order of checking cannot hide a partial apply.
  void applyIsAllOrNothing_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("value");
    QTest::addColumn<QStringList>("mentions");
    QStringList all;
    for (const auto& s : KnobRegistry::specs()) all << q(s.name);
    QTest::newRow("unknown name") << "nosuch" << 1.0 << (QStringList{"nosuch"} + all);
    QTest::newRow("unknown name, near miss") << "Rho" << 0.5 << (QStringList{"Rho"} + all);
    QTest::newRow("below range") << "rho" << 0.05 << QStringList{"rho", "[0.1, 1]"};
    QTest::newRow("above range") << "rho" << 1.5 << QStringList{"rho", "[0.1, 1]"};
    QTest::newRow("negative integer knob")
        << "session_soft_cap" << -1.0 << QStringList{"session_soft_cap", "[0, 100000]"};
    QTest::newRow("non-integer for integer knob")
        << "session_soft_cap" << 2.5 << QStringList{"session_soft_cap", "2.5"};
    QTest::newRow("non-integer seed_min_turn_id")
        << "seed_min_turn_id" << 1.5 << QStringList{"seed_min_turn_id", "1.5"};
    QTest::newRow("NaN") << "rho" << kNaN << QStringList{"rho", "[0.1, 1]"};
    QTest::newRow("NaN integer knob") << "pending_seed_budget" << kNaN
                                      << QStringList{"pending_seed_budget", "[0, 10000]"};
    QTest::newRow("+inf") << "request_timeout_s" << kInf << QStringList{"request_timeout_s", "[1, 86400]"};
    QTest::newRow("-inf") << "epsilon" << -kInf << QStringList{"epsilon", "[0, 10000]"};
  }

  void applyIsAllOrNothing() {
    QFETCH(QString, name);
    QFETCH(double, value);
    QFETCH(QStringList, mentions);
    KnobRegistry r;
    const std::map<std::string, double> changes{{"K", 200}, {"throughput", 9000}, {name.toStdString(), value}};
    const auto res = r.apply(changes, "t");
    QVERIFY(!res.ok);
    QVERIFY(res.changes.empty());
    QString which;
    QVERIFY2(allDefaults(r, &which), qPrintable("partially applied: " + which));
    const QString err = q(res.error);
    for (const auto& m : mentions)
      QVERIFY2(err.contains(m), qPrintable(QString("error does not mention '%1': %2").arg(m, err)));

    // After a rejected map the registry still works, and a registry that was not at defaults stays as it was.
    QVERIFY(r.apply({{"K", 10}}, "t").ok);
    QVERIFY(!r.apply(changes, "t").ok);
    QCOMPARE(r.get(KnobId::LoadFloorK), 10.0);
    QCOMPARE(r.get(KnobId::Throughput), 7000.0);
  }

  void parseAssignmentAccepts_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("value");
    QTest::newRow("K=200") << "K=200"
                           << "K" << 200.0;
    QTest::newRow("rho=0.9") << "rho=0.9"
                             << "rho" << 0.9;
    QTest::newRow("exponent") << "throughput=1e4"
                              << "throughput" << 1e4;
    QTest::newRow("negative (range is checked by apply)") << "K=-1"
                                                          << "K" << -1.0;
    QTest::newRow("unknown name (checked by apply)") << "nosuch=3"
                                                     << "nosuch" << 3.0;
  }

  void parseAssignmentAccepts() {
    QFETCH(QString, text);
    QFETCH(QString, name);
    QFETCH(double, value);
    std::map<std::string, double> into{{"sticky_bonus", 5}};
    const auto err = KnobRegistry::parseAssignment(text.toStdString(), into);
    QVERIFY2(!err, err ? err->c_str() : "");
    QCOMPARE(into.size(), std::size_t(2));
    QCOMPARE(into.at(name.toStdString()), value);
    QCOMPARE(into.at("sticky_bonus"), 5.0);
  }

  void parseAssignmentLaterWins() {
    std::map<std::string, double> into;
    QVERIFY(!KnobRegistry::parseAssignment("K=1", into));
    QVERIFY(!KnobRegistry::parseAssignment("K=2", into));
    QCOMPARE(into.size(), std::size_t(1));
    QCOMPARE(into.at("K"), 2.0);
  }

  void parseAssignmentRejects_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("K") << "K";
    QTest::newRow("=5") << "=5";
    QTest::newRow("K=") << "K=";
    QTest::newRow("K=1x") << "K=1x";
    QTest::newRow("K=abc") << "K=abc";
    QTest::newRow("empty") << "";
    QTest::newRow("K=1 2") << "K=1 2";
    QTest::newRow("K==1") << "K==1";
  }

  void parseAssignmentRejects() {
    QFETCH(QString, text);
    std::map<std::string, double> into{{"sticky_bonus", 5}};
    const auto err = KnobRegistry::parseAssignment(text.toStdString(), into);
    QVERIFY2(err.has_value(), qPrintable("accepted '" + text + "'"));
    QVERIFY(!err->empty());
    // Quotes what it could not read: the value when there is a name, else the whole text.
    const QString got = text.indexOf('=') > 0 ? text.section('=', 1) : text;
    QVERIFY2(q(*err).contains("'" + got + "'"), err->c_str());
    QCOMPARE(into.size(), std::size_t(1));  // nothing added
    QCOMPARE(into.at("sticky_bonus"), 5.0);
  }

  // What --set does: parse, then apply. Non-finite numbers that parse must still be rejected by apply.
  void parseThenApplyRejectsNonFinite_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("nan") << "K=nan";
    QTest::newRow("inf") << "K=inf";
    QTest::newRow("-inf") << "rho=-inf";
    QTest::newRow("huge") << "K=1e400";
  }

  void parseThenApplyRejectsNonFinite() {
    QFETCH(QString, text);
    std::map<std::string, double> into;
    if (KnobRegistry::parseAssignment(text.toStdString(), into)) return;  // rejected while parsing: fine
    KnobRegistry r;
    const auto res = r.apply(into, "cli");
    QVERIFY2(!res.ok, qPrintable("accepted " + text));
    QString which;
    QVERIFY2(allDefaults(r, &which), qPrintable(which));
  }
};

QTEST_GUILESS_MAIN(TestKnobRegistry)
#include "test_knob_registry.moc"
