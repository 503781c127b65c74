#pragma once
// File > Export: the visible charts as PNG, the run's summary as CSV or Markdown.
#include <QObject>
#include <QString>

class QMenu;
class QWidget;

namespace kvscope {

class RunSession;
struct RunSummary;

class ExportActions : public QObject {
  Q_OBJECT
 public:
  ExportActions(QWidget& window, RunSession& session);
  void addTo(QMenu& menu);

  // The file-writing halves, without dialogs (the tests call them). False with `error` set.
  bool saveWindowPng(const QString& path, QString* error) const;
  bool saveSummary(const QString& path, QString* error) const;  // .csv or .md by extension

  static QString summaryCsv(const RunSummary& s);
  static QString summaryMarkdown(const RunSummary& s);

 private:
  QWidget& window_;
  RunSession& session_;
};

}  // namespace kvscope
