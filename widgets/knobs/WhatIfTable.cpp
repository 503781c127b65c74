#include "widgets/knobs/WhatIfTable.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

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
  caption_text_ = what;
  from_ = -1;
  renderCaption();
  show();
}

void WhatIfTable::setNow(SimTime now) {
  if (now == now_) return;
  now_ = now;
  if (from_ >= 0) renderCaption();
}

void WhatIfTable::renderCaption() {
  // A preview is a fork of the run as it was: say how far the run has moved on since, so a
  // promise made at 921 s is not taken for the state at 995 s.
  const double age = from_ >= 0 && now_ > from_ ? timeToSeconds(now_ - from_) : 0;
  QString text =
      age >= 1 ? tr("%1; the run has moved %2 s on since").arg(caption_text_).arg(age, 0, 'f', 0) : caption_text_;
  // Past a tenth of its horizon Apply refuses it (PreviewController): say so before the click.
  if (horizon_ > 0 && now_ - from_ >= horizon_ / 10) text += tr(" - stale: Apply previews again from now");
  caption_->setText(text);
}

void WhatIfTable::setPreview(const WhatIfResult* r, const QString& note) {
  note_->setText(note);
  note_->setVisible(!note.isEmpty());
  if (!r) {
    table_->setRowCount(0);
    setVisible(!note.isEmpty());
    caption_text_.clear();
    from_ = -1;
    caption_->clear();
    return;
  }
  show();
  const double minutes = timeToSeconds(r->to - r->from) / 60;
  caption_text_ = r->with.error.empty()
                      ? tr("Preview: the next %1 simulated min from %2 s, same seed (%3 ms)")
                            .arg(minutes, 0, 'f', 0)
                            .arg(timeToSeconds(r->from), 0, 'f', 0)
                            .arg(r->wall_ms, 0, 'f', 0)
                      : tr("The change cannot be previewed: %1").arg(QString::fromStdString(r->with.error));
  from_ = r->from;
  horizon_ = r->to - r->from;
  renderCaption();
  struct Line {
    QString name;
    QString without, with;
  };
  std::vector<Line> lines;
  const RunSummary& a = r->without.horizon;
  const RunSummary& b = r->with.horizon;
  struct Share {
    const WorkerSummary* worker;
    double without, with;
  };
  std::vector<Share> shares;
  for (const WorkerSummary& w : a.workers) {
    if (w.role != "decode") continue;
    double with_share = 0;
    for (const WorkerSummary& x : b.workers)
      if (x.id == w.id) with_share = x.share;
    shares.push_back({&w, w.share, with_share});
  }
  auto percent = [](double share) { return QString::number(share * 100, 'f', 1) + " %"; };
  // On a large cluster: the workers the change moves most, then the rest summed.
  const bool summed = shares.size() > kMovers + 1;
  double rest_without = 0, rest_with = 0;
  if (summed) {
    std::stable_sort(shares.begin(), shares.end(), [](const Share& x, const Share& y) {
      return std::abs(x.with - x.without) > std::abs(y.with - y.without);
    });
    for (std::size_t i = kMovers; i < shares.size(); ++i)
      rest_without += shares[i].without, rest_with += shares[i].with;
  }
  const std::size_t listed = summed ? kMovers : shares.size();
  for (std::size_t i = 0; i < listed; ++i)
    lines.push_back({tr("%1 share").arg(QString::fromStdString(shares[i].worker->id)), percent(shares[i].without),
                     percent(shares[i].with)});
  if (summed)
    lines.push_back({tr("%1 other D, summed").arg(shares.size() - listed), percent(rest_without), percent(rest_with)});
  lines.push_back({tr("TTFT p90 (s)"), QString::number(a.ttft_s.p90, 'f', 2), QString::number(b.ttft_s.p90, 'f', 2)});
  lines.push_back({tr("E2E p90 (s)"), QString::number(a.e2e_s.p90, 'f', 2), QString::number(b.e2e_s.p90, 'f', 2)});
  lines.push_back({tr("evictions"), QString::number(a.eviction_count), QString::number(b.eviction_count)});
  lines.push_back({tr("failed"), QStringLiteral("%1 of %2").arg(a.failed).arg(a.total),
                   QStringLiteral("%1 of %2").arg(b.failed).arg(b.total)});
  table_->setRowCount(static_cast<int>(lines.size()));
  QStringList names;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    names << lines[static_cast<std::size_t>(i)].name;
    for (int c = 0; c < 2; ++c) {
      auto* item = new QTableWidgetItem(c == 0 ? lines[static_cast<std::size_t>(i)].without
                                               : lines[static_cast<std::size_t>(i)].with);
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
    out << table_->verticalHeaderItem(r)->text() + ": " + table_->item(r, 0)->text() + " | " +
               table_->item(r, 1)->text();
  return out.join('\n');
}

}  // namespace kvscope
