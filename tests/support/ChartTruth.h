#pragma once
// What a chart must draw, computed the slow and obvious way: per pixel column, the samples in it and
// the value held into it from an earlier sample (a sample holds until the next one, that instant
// included, unless the pause to it exceeds the gap threshold; the newest one up to `hold_until`). checkChart() compares
// a TimeSeriesChart's columns and its rendered pixels with that.
#include <QtTest>

#include <algorithm>
#include <limits>
#include <vector>

#include "core/events/Event.h"
#include "core/telemetry/ColumnGrid.h"
#include "widgets/charts/TimeSeriesChart.h"

namespace kvscope::test {

struct Sample {
  SimTime t;
  float v, peak;
};

// Per column: the samples in it, and the value held into it from an earlier sample (a sample holds
// until the next one unless the pause to it exceeds `gap`; the newest one up to `hold_until`).
inline std::vector<EnvelopeColumn> bruteForce(const std::vector<Sample>& s, const ColumnGrid& g, bool hold, SimTime gap,
                                              SimTime hold_until, double scale) {
  std::vector<EnvelopeColumn> out(static_cast<std::size_t>(g.columns));
  auto add = [](EnvelopeColumn& c, double lo, double hi) {
    if (!c.present) c = {true, true, lo, hi};
    c.lo = std::min(c.lo, lo);
    c.hi = std::max(c.hi, hi);
  };
  for (int c = 0; c < g.columns; ++c) {
    const SimTime cs = g.columnStart(c), ce = g.columnStart(c + 1) - 1;
    for (std::size_t i = 0; i < s.size(); ++i) {
      SimTime held_to = s[i].t;
      if (hold) {
        if (i + 1 < s.size()) {
          if (s[i + 1].t - s[i].t <= gap) held_to = s[i + 1].t + 1;  // through the next sample's instant
        } else if (hold_until > s[i].t && hold_until - s[i].t <= gap) {
          held_to = hold_until + 1;
        }
      }
      auto& col = out[static_cast<std::size_t>(c)];
      if (s[i].t >= cs && s[i].t <= ce)
        add(col, s[i].v * scale, s[i].peak * scale);
      else if (s[i].t < cs && held_to > cs)
        add(col, s[i].v * scale, s[i].v * scale);
    }
  }
  return out;
}

inline SimTime medianGap(const std::vector<Sample>& s) {
  std::vector<SimTime> d;
  for (std::size_t i = 1; i < s.size(); ++i) d.push_back(s[i].t - s[i - 1].t);
  std::sort(d.begin(), d.end());
  return 3 * d[d.size() / 2];
}

// Compares what the chart will paint with the brute force, then the rendered pixels with both.
inline void checkChart(TimeSeriesChart& chart, const std::vector<Sample>& samples, bool hold, SimTime hold_until,
                       double scale, const QColor& color, const QString& where) {
  const ColumnGrid g = chart.grid();
  const auto expected = bruteForce(samples, g, hold, medianGap(samples), hold_until, scale);
  const auto& drawn = chart.drawnColumns(0);
  QCOMPARE(static_cast<int>(drawn.size()), g.columns);
  int present = 0;
  for (int c = 0; c < g.columns; ++c) {
    const EnvelopeColumn& e = expected[static_cast<std::size_t>(c)];
    const EnvelopeColumn& d = drawn[static_cast<std::size_t>(c)];
    const QString at = QStringLiteral("%1: column %2 of %3 (t=%4 s)")
                           .arg(where)
                           .arg(c)
                           .arg(g.columns)
                           .arg(timeToSeconds(g.columnStart(c)));
    QVERIFY2(e.present == d.present, qPrintable(at + (e.present ? " should have data" : " should be empty")));
    if (!e.present) continue;
    ++present;
    QVERIFY2(d.exact, qPrintable(at));
    QVERIFY2(
        e.lo == d.lo && e.hi == d.hi,
        qPrintable(QStringLiteral("%1: drawn %2..%3, samples %4..%5").arg(at).arg(d.lo).arg(d.hi).arg(e.lo).arg(e.hi)));
  }
  // Without a gap in the samples a gauge is one connected line: neighbouring columns touch (a step
  // that lands on a column edge still has its riser).
  const SimTime gap = medianGap(samples);
  bool gapless = hold;
  for (std::size_t i = 1; i < samples.size(); ++i) gapless = gapless && samples[i].t - samples[i - 1].t <= gap;
  for (int c = 1; gapless && c < g.columns; ++c) {
    const EnvelopeColumn& a = drawn[static_cast<std::size_t>(c - 1)];
    const EnvelopeColumn& b = drawn[static_cast<std::size_t>(c)];
    QVERIFY2(!a.present || !b.present || (a.lo <= b.hi && b.lo <= a.hi),
             qPrintable(QStringLiteral("%1: columns %2 and %3 do not touch (%4..%5, %6..%7)")
                            .arg(where)
                            .arg(c - 1)
                            .arg(c)
                            .arg(a.lo)
                            .arg(a.hi)
                            .arg(b.lo)
                            .arg(b.hi)));
  }
  // The pixels: in every column the series' colour covers exactly rows yOf(hi)..yOf(lo).
  const QImage image = chart.grab().toImage().convertToFormat(QImage::Format_RGB32);
  const QRect plot = chart.plotRect();
  for (int c = 0; c < g.columns; ++c) {
    int top = -1, bottom = -1;
    for (int y = plot.top(); y <= plot.bottom(); ++y) {
      if (QColor(image.pixel(plot.left() + c, y)) != color) continue;
      if (top < 0) top = y;
      bottom = y;
    }
    const EnvelopeColumn& e = expected[static_cast<std::size_t>(c)];
    const QString at = QStringLiteral("%1: pixel column %2").arg(where).arg(c);
    if (!e.present) {
      QVERIFY2(top < 0, qPrintable(at + " painted where there is no data"));
      continue;
    }
    QVERIFY2(top == chart.yOf(e.hi) && bottom == chart.yOf(e.lo),
             qPrintable(QStringLiteral("%1: rows %2..%3, expected %4..%5")
                            .arg(at)
                            .arg(top)
                            .arg(bottom)
                            .arg(chart.yOf(e.hi))
                            .arg(chart.yOf(e.lo))));
  }
  QVERIFY2(present > 0, qPrintable(where));
}

inline std::vector<Sample> kvSamples(const std::vector<Event>& events, WorkerId worker,
                                     SimTime before = std::numeric_limits<SimTime>::max()) {
  std::vector<Sample> out;
  for (const Event& e : events) {
    const auto* snap = std::get_if<Snapshot>(&e.payload);
    if (!snap || e.time >= before) continue;
    const SimTime t = e.time;
    for (const WorkerGauges& g : snap->workers)
      if (g.worker == worker && g.kv_capacity > 0) {
        const double cap = static_cast<double>(g.kv_capacity);
        out.push_back({t, static_cast<float>(static_cast<double>(g.kv_used) / cap),
                       static_cast<float>(static_cast<double>(std::max(g.kv_peak, g.kv_used)) / cap)});
      }
  }
  return out;
}

}  // namespace kvscope::test
