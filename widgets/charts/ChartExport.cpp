#include "widgets/charts/ChartExport.h"

#include <QBuffer>
#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPixmap>
#include <QRegularExpression>

#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/SaveFile.h"

namespace kvscope::ChartExport {

namespace {

// A CSV field: quoted when it holds a comma or a quote (series names are the operator's workers).
QString field(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"'))) return text;
  return QLatin1Char('"') + QString(text).replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
}

QString seconds(SimTime t) { return QString::number(timeToSeconds(t), 'f', 6); }

// A name for the files: the chart's title without what a file name cannot hold.
QString baseName(const TimeSeriesChart& chart) {
  static const QRegularExpression kOther(QStringLiteral("[^a-z0-9]+"));
  static const QRegularExpression kEnds(QStringLiteral("^-+|-+$"));
  QString name = chart.title().toLower();
  name.replace(kOther, QStringLiteral("-"));
  return name.remove(kEnds);
}

}  // namespace

QString visibleCsv(const TimeSeriesChart& chart) {
  QString out = QStringLiteral("series,from_s,to_s,min,max,median\n");
  const ColumnGrid g = chart.grid();
  for (int i = 0; i < chart.seriesCount(); ++i) {
    const QString name = chart.seriesName(i);
    if (chart.isSeriesHidden(name)) continue;
    const auto& columns = chart.drawnColumns(i);
    for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
      const EnvelopeColumn& col = columns[static_cast<std::size_t>(c)];
      if (!col.present) continue;
      out += QStringLiteral("%1,%2,%3,%4,%5,\n")
                 .arg(field(name), seconds(g.columnStart(c)), seconds(g.columnStart(c + 1) - 1))
                 .arg(col.lo, 0, 'g', 10)
                 .arg(col.hi, 0, 'g', 10);
    }
  }
  const auto& band = chart.drawnBand();
  for (int c = 0; c < static_cast<int>(band.size()); ++c) {
    const BandColumn& b = band[static_cast<std::size_t>(c)];
    if (!b.present) continue;
    out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
               .arg(field(chart.bandLegend()), seconds(g.columnStart(c)), seconds(g.columnStart(c + 1) - 1))
               .arg(b.lo, 0, 'g', 10)
               .arg(b.hi, 0, 'g', 10)
               .arg(b.median, 0, 'g', 10);
  }
  return out;
}

bool savePng(TimeSeriesChart& chart, const QString& path, QString* error) {
  QByteArray png;
  QBuffer buffer(&png);
  if (!buffer.open(QIODevice::WriteOnly) || !chart.grab().save(&buffer, "PNG")) {
    if (error) *error = QObject::tr("cannot write %1: the chart did not encode as PNG").arg(path);
    return false;
  }
  return saveWholeFile(path, png, error);
}

bool saveCsv(const TimeSeriesChart& chart, const QString& path, QString* error) {
  return saveWholeFile(path, visibleCsv(chart).toUtf8(), error);
}

void showMenu(TimeSeriesChart& chart, const QPoint& global) {
  QMenu menu(&chart);
  QAction* png = menu.addAction(QObject::tr("Save chart as &PNG..."));
  menu.addAction(QObject::tr("Save visible data as &CSV..."));
  QAction* chosen = menu.exec(global);
  if (!chosen) return;
  const bool as_png = chosen == png;
  const QString path =
      QFileDialog::getSaveFileName(&chart, as_png ? QObject::tr("Save chart") : QObject::tr("Save visible data"),
                                   baseName(chart) + (as_png ? QStringLiteral(".png") : QStringLiteral(".csv")),
                                   as_png ? QObject::tr("PNG (*.png)") : QObject::tr("CSV (*.csv)"));
  QString error;
  if (!path.isEmpty() && !(as_png ? savePng(chart, path, &error) : saveCsv(chart, path, &error)))
    QMessageBox::warning(&chart, QObject::tr("Export"), error);
}

}  // namespace kvscope::ChartExport
