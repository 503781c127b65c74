#include "widgets/knobs/WhatIfTable.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/run/WhatIfPreview.h"

namespace kvscope {

WhatIfTable::WhatIfTable(QWidget* parent)
    : QWidget(parent), caption_(new QLabel(this)), note_(new QLabel(this)), table_(new QTableWidget(0, 2, this)) {
  caption_->setWordWrap(true);
  note_->setWordWrap(true);
  QFont italic = note_->font();
  italic.setItalic(true);
  note_->setFont(italic);
  table_->setHorizontalHeaderLabels({tr("without"), tr("with the change")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(caption_);
  layout->addWidget(note_);
  layout->addWidget(table_);
  hide();
}

void WhatIfTable::setComputing(const QString& what) {
  caption_->setText(what);
  show();
}

void WhatIfTable::setPreview(const WhatIfResult* r, const QString& note) {
  note_->setText(note);
  note_->setVisible(!note.isEmpty());
  if (!r) {
    table_->setRowCount(0);
    setVisible(!note.isEmpty());
    caption_->clear();
    return;
  }
  show();
  const double minutes = timeToSeconds(r->to - r->from) / 60;
  caption_->setText(r->with.error.empty()
                        ? tr("Preview: the next %1 simulated min from %2 s, same seed (%3 ms)")
                              .arg(minutes, 0, 'f', 0)
                              .arg(timeToSeconds(r->from), 0, 'f', 0)
                              .arg(r->wall_ms, 0, 'f', 0)
                        : tr("The change cannot be previewed: %1").arg(QString::fromStdString(r->with.error)));
  struct Line {
    QString name;
    QString without, with;
  };
  std::vector<Line> lines;
  const RunSummary& a = r->without.horizon;
  const RunSummary& b = r->with.horizon;
  for (const WorkerSummary& w : a.workers) {
    if (w.role != "decode") continue;
    double with_share = 0;
    for (const WorkerSummary& x : b.workers)
      if (x.id == w.id) with_share = x.share;
    lines.push_back({tr("%1 share").arg(QString::fromStdString(w.id)), QString::number(w.share * 100, 'f', 1) + " %",
                     QString::number(with_share * 100, 'f', 1) + " %"});
  }
  lines.push_back({tr("TTFT p90 (s)"), QString::number(a.ttft_s.p90, 'f', 2), QString::number(b.ttft_s.p90, 'f', 2)});
  lines.push_back({tr("E2E p90 (s)"), QString::number(a.e2e_s.p90, 'f', 2), QString::number(b.e2e_s.p90, 'f', 2)});
  lines.push_back({tr("evictions"), QString::number(a.eviction_count), QString::number(b.eviction_count)});
  lines.push_back({tr("failed"), QStringLiteral("%1 of %2").arg(a.failed).arg(a.total), QStringLiteral("%1 of %2").arg(b.failed).arg(b.total)});
  table_->setRowCount(static_cast<int>(lines.size()));
  QStringList names;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    names << lines[static_cast<std::size_t>(i)].name;
    for (int c = 0; c < 2; ++c) {
      auto* item = new QTableWidgetItem(c == 0 ? lines[static_cast<std::size_t>(i)].without : lines[static_cast<std::size_t>(i)].with);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(i, c, item);
    }
  }
  table_->setVerticalHeaderLabels(names);
  int height = table_->horizontalHeader()->height() + 2 * table_->frameWidth();
  for (int i = 0; i < table_->rowCount(); ++i) height += table_->rowHeight(i);
  table_->setMaximumHeight(height);  // may shrink (then scroll) rather than push the docks around
}

QString WhatIfTable::text() const {
  QStringList out{caption_->text(), note_->text()};
  for (int r = 0; r < table_->rowCount(); ++r)
    out << table_->verticalHeaderItem(r)->text() + ": " + table_->item(r, 0)->text() + " | " + table_->item(r, 1)->text();
  return out.join('\n');
}

}  // namespace kvscope
