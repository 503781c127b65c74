#pragma once
// A chart's own exports (its context menu): the chart as PNG, and what it draws over the visible
// range as CSV - per series and pixel column, the span of run time and the min and max there (the
// same envelope the chart paints, so the file says exactly what the eye saw), and the band's.
#include <QByteArray>
#include <QString>

class QPoint;

namespace kvscope {

class TimeSeriesChart;

namespace ChartExport {

// "series,from_s,to_s,min,max,median" then a row per drawn column of every shown series (the
// band's rows have a median; the others leave it empty).
QString visibleCsv(const TimeSeriesChart& chart);
// Whole or nothing (AtomicFile); false with `error` naming the file.
bool savePng(TimeSeriesChart& chart, const QString& path, QString* error);
bool saveCsv(const TimeSeriesChart& chart, const QString& path, QString* error);
// The context menu at `global` (Save as PNG..., Save visible data as CSV...).
void showMenu(TimeSeriesChart& chart, const QPoint& global);

}  // namespace ChartExport

}  // namespace kvscope
