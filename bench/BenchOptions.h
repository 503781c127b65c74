#pragma once
// The console benchmarks' number options (bench_console, bench_knob_drag): a value that is not a
// number of at least `min` ends the program with exit 2, saying which option and what it got.
#include <QCommandLineParser>
#include <QString>

#include <cstdio>
#include <cstdlib>

namespace kvscope::bench {

inline double numberOption(const QCommandLineParser& args, const char* program, const char* name, double min) {
  bool ok = false;
  const double v = args.value(QString::fromLatin1(name)).toDouble(&ok);
  if (!ok || v < min) {
    std::fprintf(stderr, "%s: --%s: expected a number >= %g, got '%s'\n", program, name, min,
                 args.value(QString::fromLatin1(name)).toLocal8Bit().constData());
    std::exit(2);
  }
  return v;
}

}  // namespace kvscope::bench
