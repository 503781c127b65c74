// `kvscope`: the console. With no argument it opens on the embedded simulation of e3-load-floor at
// 10x real time; --scenario, --connect, --replay (or a recording named alone) and --live choose another
// source; --at opens a recording paused at a time; --screenshot renders the window after --run-for
// simulated seconds and exits (for reports and tests).
#include <QApplication>
#include <QCommandLineParser>
#include <QScreen>
#include <QSize>
#include <QTimer>

#include <cmath>
#include <cstdio>

#include "app/BuildInfo.h"
#include "app/gui/CompareActions.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ScreenshotRunner.h"
#include "app/gui/SourceFactory.h"
#include "app/gui/WindowSize.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/knobs/KnobRegistry.h"
#include "core/run/HugePageHeap.h"

using namespace kvscope;

namespace {
[[noreturn]] void usageError(const QString& message) {
  std::fprintf(stderr, "kvscope: %s\n(see kvscope --help)\n", message.toLocal8Bit().constData());
  std::exit(2);
}

// `kvscope run.kvrec` is `kvscope --replay run.kvrec`: the one positional argument is a recording;
// with --compare there are two, A (replayed) and B (drawn beside it).
QString positionalRecording(const QCommandLineParser& args) {
  const QStringList rest = args.positionalArguments();
  if (args.isSet("compare")) {
    if (rest.size() != 2)
      usageError("--compare: name two recordings, kvscope --compare A.kvrec B.kvrec (got " +
                 QString::number(rest.size()) + ")");
    return rest.front();
  }
  if (rest.size() > 1) usageError("one recording at a time, got " + QString::number(rest.size()) + " arguments");
  return rest.isEmpty() ? QString() : rest.front();
}

// --compare-offset, checked before any window opens.
double compareOffsetFrom(const QCommandLineParser& args) {
  if (!args.isSet("compare-offset")) return 0;
  bool ok = false;
  const double offset = args.value("compare-offset").toDouble(&ok);
  if (!ok || !std::isfinite(offset))
    usageError("--compare-offset: expected seconds, got '" + args.value("compare-offset") + "'");
  return offset;
}

// --compare A B: B read whole and drawn beside A, `offset` seconds later. False (said on stderr) when
// B cannot be read.
bool compareAtStart(MainWindow& window, const QCommandLineParser& args, double offset) {
  if (!args.isSet("compare")) return true;
  QString error;
  if (!window.compare().compareNow(args.positionalArguments().at(1).toStdString(), &error)) {
    std::fprintf(stderr, "kvscope: --compare: %s\n", error.toLocal8Bit().constData());
    return false;
  }
  window.compare().setOffsetSeconds(offset);
  return true;
}

SourceSpec specFrom(const QCommandLineParser& args, bool screenshot) {
  const QString recording = args.isSet("replay") ? args.value("replay") : positionalRecording(args);
  if (args.isSet("replay") && !positionalRecording(args).isEmpty())
    usageError("a recording is named once: --replay FILE or FILE alone");
  const int chosen =
      int(args.isSet("scenario")) + int(args.isSet("connect")) + int(!recording.isEmpty()) + int(args.isSet("live"));
  if (chosen > 1) usageError("choose one of --scenario, --connect, a recording and --live");
  SourceSpec spec;
  if (args.isSet("connect")) {
    spec.kind = SourceSpec::Remote;
    spec.target = args.value("connect").toStdString();
    spec.token_file = args.value("token-file").toStdString();
    spec.tls = args.isSet("tls") || args.isSet("tls-ca");
    spec.tls_ca = args.value("tls-ca").toStdString();
  } else if (!recording.isEmpty()) {
    spec.kind = SourceSpec::Recording;
    spec.target = recording.toStdString();
  } else if (args.isSet("live")) {
    spec.kind = SourceSpec::Live;
    spec.target = args.value("live").toStdString();
  } else if (args.isSet("scenario")) {
    spec.target = args.value("scenario").toStdString();
  }
  if (args.isSet("token-file") && spec.kind != SourceSpec::Remote) usageError("--token-file goes with --connect");
  if ((args.isSet("tls") || args.isSet("tls-ca")) && spec.kind != SourceSpec::Remote)
    usageError("--tls and --tls-ca go with --connect");
  if ((args.isSet("seed") || args.isSet("set")) && spec.kind != SourceSpec::Simulation)
    usageError("--seed and --set go with a simulation (knobs of a served run: the Knobs panel)");
  // A real cluster runs in real time: nothing here can speed it up.
  if (args.isSet("speed") && spec.kind == SourceSpec::Live) usageError("--speed does not go with --live");
  if (args.isSet("at") && spec.kind != SourceSpec::Recording) usageError("--at goes with a recording");
  if (args.isSet("compare-offset") && !args.isSet("compare")) usageError("--compare-offset goes with --compare");
  if (args.isSet("compare") && args.isSet("replay")) usageError("--compare names both recordings: --compare A B");
  bool ok = true;
  if (args.isSet("speed")) {
    spec.speed = args.value("speed").toDouble(&ok);
    if (!ok || spec.speed < 0) usageError("--speed: expected a number >= 0, got '" + args.value("speed") + "'");
  }
  if (args.isSet("seed")) {
    spec.seed = args.value("seed").toULongLong(&ok);
    if (!ok) usageError("--seed: expected a whole number, got '" + args.value("seed") + "'");
  }
  for (const QString& assignment : args.values("set")) {
    if (auto error = KnobRegistry::parseAssignment(assignment.toStdString(), spec.knobs))
      usageError("--set: " + QString::fromStdString(*error));
  }
  if (screenshot) {
    const double run_for = args.value("run-for").toDouble(&ok);
    if (!ok || run_for <= 0)
      usageError("--run-for: expected simulated seconds > 0, got '" + args.value("run-for") + "'");
    if (spec.kind == SourceSpec::Simulation) {
      spec.duration_s = run_for;  // the run ends exactly there, as fast as the CPU allows
      spec.speed = 0;
    } else if (!args.isSet("speed")) {
      spec.speed = 0;
    }
  }
  return spec;
}

void describe(QCommandLineParser& args) {
  args.setApplicationDescription(
      "KVScope: a console for KV-cache-aware routing on P/D-disaggregated LLM clusters.\n"
      "Without a source option it simulates the bundled e3-load-floor scenario at 10x real time.");
  args.addHelpOption();
  args.addVersionOption();
  args.addPositionalArgument("recording", "A recording to replay (as --replay).", "[FILE.kvrec]");
  args.addOptions({
      {"scenario", "Simulate a bundled scenario NAME or a scenario FILE.", "NAME|FILE"},
      {"connect", "Watch and steer a `kvscope-cli serve` backend.", "HOST:PORT"},
      {"token-file",
       "Bearer token sent with every call to the server: the telemetry stream and Control (with --connect).", "FILE"},
      {"tls", "With --connect: call the server over TLS (serve --tls-cert), trusting the system's roots."},
      {"tls-ca", "With --connect: over TLS, trust this PEM root certificate (e.g. a self-signed server's own).",
       "FILE"},
      {"replay", "Replay a recording (the same as naming it alone: kvscope FILE.kvrec).", "FILE.kvrec"},
      {"compare",
       "Compare two recordings, named after the options: kvscope --compare A.kvrec B.kvrec replays A and draws B "
       "beside it (A solid, B dashed) with both runs' numbers in the Compare runs panel."},
      {"compare-offset", "With --compare: draw B this many seconds later (negative: earlier).", "SECONDS"},
      {"at", "With a recording: open it paused at this recorded second (with --screenshot: play on from there).",
       "SECONDS"},
      {"live", "Watch a live SGLang or vLLM cluster (and its Mooncake links) described by a cluster file.",
       "CLUSTER.yaml"},
      {"speed", "Simulated (or recorded) seconds per wall second; 0 = as fast as possible. Default 10.", "X"},
      {"seed", "Simulation seed (default: the scenario's).", "N"},
      {"set", "Knob override for the simulation, repeatable (e.g. --set K=200).", "NAME=VALUE"},
      {"screenshot", "Render the window to FILE.png after --run-for simulated seconds, then exit.", "FILE.png"},
      {"run-for", "Simulated seconds before --screenshot is taken.", "SECONDS"},
      {"summary", "With --screenshot: also write what the window shows as JSON (findings, workers' states).",
       "FILE.json"},
      {"size", "With --screenshot: the window's size (default: the screen's available size).", "WxH"},
  });
}

// --help and --version need no display: answered before a QApplication would open one.
bool wantsTextOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const QByteArray a(argv[i]);
    if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") return true;
  }
  return false;
}

// --at: the replay is sought there and paused, so the operator starts from that moment (with
// --screenshot it plays on from there to --run-for).
void openAt(Source& source, const QString& text, bool pause) {
  bool ok = false;
  const double at = text.toDouble(&ok);
  if (!ok || at < 0) usageError("--at: expected recorded seconds >= 0, got '" + text + "'");
  if (const SimTime end = source.status().end; end > 0 && secondsToTime(at) > end)
    usageError(QString("--at: %1 s is past the recording's end (%2 s)").arg(at).arg(timeToSeconds(end)));
  RunControl* run = source.control();
  std::string error;
  if (!run || !run->seek(secondsToTime(at), consoleAuthor(), &error))
    usageError("--at: " + QString::fromStdString(error.empty() ? "this source cannot seek" : error));
  if (pause) run->pause(consoleAuthor());
}

QSize parseSize(const QString& text) {
  const std::optional<QSize> size = kvscope::parseWindowSize(text);
  if (!size) usageError("--size: expected WIDTHxHEIGHT, at least 640x400 (e.g. 1600x1000), got '" + text + "'");
  return *size;
}
}  // namespace

int main(int argc, char** argv) {
  kvscope::relaunchWithHugePageHeap(argv);  // the embedded twin's chains on 2 MiB pages (HugePageHeap.h)
  if (wantsTextOnly(argc, argv)) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationVersion(QString::fromStdString(kvscope::versionLine()));
    QCommandLineParser args;
    describe(args);
    args.process(app);  // prints and exits
    return 0;
  }
  QApplication app(argc, argv);
  kvscope::RecordingWorkload::registerTraceFormat();  // a recorded run's traffic as a workload
  QApplication::setOrganizationName("KVScope");
  QApplication::setApplicationName("kvscope");
  QApplication::setApplicationVersion(QString::fromStdString(kvscope::versionLine()));

  QCommandLineParser args;
  describe(args);
  args.process(app);
  const bool screenshot = args.isSet("screenshot");
  if (screenshot != args.isSet("run-for")) usageError("--screenshot and --run-for go together");
  if (!screenshot && (args.isSet("summary") || args.isSet("size")))
    usageError("--summary and --size go with --screenshot");
  const SourceSpec spec = specFrom(args, screenshot);
  const double compare_offset = compareOffsetFrom(args);

  // A screenshot is of the default layout at a stated size, never of a user's saved one.
  MainWindow window(screenshot ? MainWindow::Layout::Default : MainWindow::Layout::Saved);
  if (screenshot)
    window.setScreenshotSize(args.isSet("size") ? parseSize(args.value("size"))
                                                : QGuiApplication::primaryScreen()->availableGeometry().size());
  std::unique_ptr<Source> source;
  try {
    source = makeSource(spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvscope: %s\n", e.what());
    return 1;
  }
  Source* opened = source.get();
  window.showAtStart();
  window.openSource(std::move(source));
  if (!compareAtStart(window, args, compare_offset)) return 1;
  if (args.isSet("at")) openAt(*opened, args.value("at"), !screenshot);
  if (screenshot) {
    auto* runner = new ScreenshotRunner(window, args.value("screenshot"), args.value("run-for").toDouble());
    runner->setSummaryPath(args.value("summary"));
    runner->start();
  }
  return app.exec();
}
