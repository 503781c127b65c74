#include "widgets/timeline/NotesPanel.h"

#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

#include "widgets/common/ViewState.h"

namespace kvscope {

NotesPanel::NotesPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent), list_(new QListWidget(this)), hint_(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(list_);
  layout->addWidget(hint_);
  // A tab among the timeline's: it must not ask for more height than they do (the window's default
  // layout fits 1280x800), so the list may shrink to a few lines.
  list_->setMinimumHeight(3 * fontMetrics().height());
  hint_->setWordWrap(true);
  hint_->setEnabled(false);
  connect(&view, &ViewState::notesChanged, this, &NotesPanel::fill);
  connect(list_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { this->view().jumpTo(item->data(Qt::UserRole).value<qint64>()); });
  fill();
}

void NotesPanel::fill() {
  list_->clear();
  for (const RunNote& n : view().notes()) {
    auto* item = new QListWidgetItem(
        QStringLiteral("%1 s  %2").arg(timeToSeconds(n.time), 0, 'f', 1).arg(QString::fromStdString(n.text)), list_);
    item->setData(Qt::UserRole, QVariant::fromValue<qint64>(n.time));
    item->setToolTip(QString::fromStdString(n.text));
  }
  hint_->setText(view().notes().empty()
                     ? tr("No notes. On a recording, Run > Add note at cursor (N) keeps one beside the file.")
                     : tr("Double-click a note to go there."));
}

}  // namespace kvscope
