#include "app/gui/ExportActions.h"

#include <QBuffer>
#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QWidget>

#include "core/metrics/RunSummary.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/SaveFile.h"

namespace kvscope {

ExportActions::ExportActions(QWidget& window, RunSession& session)
    : QObject(&window), window_(window), session_(session) {}

void ExportActions::addTo(QMenu& menu) {
  QMenu* exports = menu.addMenu(tr("&Export"));
  exports->addAction(tr("Window as &PNG..."), this, [this] {
    const QString path = QFileDialog::getSaveFileName(&window_, tr("Export PNG"), "kvscope.png", tr("PNG (*.png)"));
    QString error;
    if (!path.isEmpty() && !saveWindowPng(path, &error)) QMessageBox::warning(&window_, tr("Export"), error);
  });
  exports->addAction(tr("&Summary (CSV or Markdown)..."), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(&window_, tr("Export summary"), "summary.csv", tr("CSV (*.csv);;Markdown (*.md)"));
    QString error;
    if (!path.isEmpty() && !saveSummary(path, &error)) QMessageBox::warning(&window_, tr("Export"), error);
  });
}

bool ExportActions::saveWindowPng(const QString& path, QString* error) const {
  const QPixmap shot = window_.grab();
  QByteArray png;
  QBuffer buffer(&png);
  if (!buffer.open(QIODevice::WriteOnly) || !shot.save(&buffer, "PNG")) {
    if (error) *error = tr("cannot write %1: the window did not encode as PNG").arg(path);
    return false;
  }
  return saveWholeFile(path, png, error);
}

QString ExportActions::summaryCsv(const RunSummary& s) {
  QString out = "worker,role,bindings,share,sessions,kv_peak_frac,evictions,tokens_served\n";
  for (const WorkerSummary& w : s.workers)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8\n")
               .arg(QString::fromStdString(w.id), QString::fromStdString(w.role))
               .arg(w.bindings)
               .arg(w.share, 0, 'f', 4)
               .arg(w.sessions)
               .arg(w.kv_peak_frac, 0, 'f', 4)
               .arg(w.evictions)
               .arg(w.tokens_served);
  out += "\nmetric,value\n";
  auto row = [&](const char* name, double v) { out += QStringLiteral("%1,%2\n").arg(QLatin1String(name)).arg(v); };
  row("requests", s.total);
  row("failed", s.failed);
  row("failure_rate", s.failure_rate);
  row("ttft_p50_s", s.ttft_s.p50);
  row("ttft_p90_s", s.ttft_s.p90);
  row("ttft_p99_s", s.ttft_s.p99);
  row("e2e_p50_s", s.e2e_s.p50);
  row("e2e_p90_s", s.e2e_s.p90);
  row("e2e_p99_s", s.e2e_s.p99);
  row("evictions", s.eviction_count);
  row("seeds", s.seeds);
  row("reseeds", s.reseeds);
  row("link_dead_events", s.link_dead_events);
  row("worker_crashes", s.worker_crashes);
  return out;
}

QString ExportActions::summaryMarkdown(const RunSummary& s) {
  QString out = QStringLiteral("# KVScope run: %1 (policy %2, seed %3)\n\n")
                    .arg(QString::fromStdString(s.scenario), QString::fromStdString(s.policy))
                    .arg(s.seed);
  out += QStringLiteral("%1 requests, %2 failed (%3 %). TTFT p50/p90/p99 %4 / %5 / %6 s; E2E %7 / %8 / %9 s.\n\n")
             .arg(s.total)
             .arg(s.failed)
             .arg(s.failure_rate * 100, 0, 'f', 1)
             .arg(s.ttft_s.p50, 0, 'f', 3)
             .arg(s.ttft_s.p90, 0, 'f', 3)
             .arg(s.ttft_s.p99, 0, 'f', 3)
             .arg(s.e2e_s.p50, 0, 'f', 3)
             .arg(s.e2e_s.p90, 0, 'f', 3)
             .arg(s.e2e_s.p99, 0, 'f', 3);
  out += "| worker | role | bindings | share | sessions | KV peak | evictions |\n|---|---|---:|---:|---:|---:|---:|\n";
  for (const WorkerSummary& w : s.workers)
    out += QStringLiteral("| %1 | %2 | %3 | %4 % | %5 | %6 % | %7 |\n")
               .arg(QString::fromStdString(w.id), QString::fromStdString(w.role))
               .arg(w.bindings)
               .arg(w.share * 100, 0, 'f', 1)
               .arg(w.sessions)
               .arg(w.kv_peak_frac * 100, 0, 'f', 1)
               .arg(w.evictions);
  if (!s.diagnosis.empty()) {
    out += "\n## Diagnosis\n\n";
    for (const Finding& f : s.diagnosis)
      out += QStringLiteral("- **[%1] %2** (%3-%4 s%7): %5. Suggestion: %6\n")
                 .arg(QString::fromStdString(f.mode), QString::fromStdString(f.name))
                 .arg(f.window_start_s, 0, 'f', 0)
                 .arg(f.window_end_s, 0, 'f', 0)
                 .arg(QString::fromStdString(f.evidence), QString::fromStdString(f.suggestion),
                      f.resolved ? QStringLiteral(", resolved") : QString());
  }
  return out;
}

bool ExportActions::saveSummary(const QString& path, QString* error) const {
  RunSummary s = session_.store().summary();
  s.diagnosis = session_.store().findings();
  const QString text = path.endsWith(".md", Qt::CaseInsensitive) ? summaryMarkdown(s) : summaryCsv(s);
  return saveWholeFile(path, text.toUtf8(), error);
}

}  // namespace kvscope
