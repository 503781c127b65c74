#include "widgets/knobs/WhatIfPanel.h"

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>

#include "widgets/knobs/WhatIfTable.h"

namespace kvscope {

WhatIfPanel::WhatIfPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      hint_(new QLabel(tr("Change a knob or the policy (a field, a slider, or the rho and soft-cap lines on the "
                          "charts) and the next 10 simulated minutes are played without and with the change: "
                          "their numbers here, their futures as faint lines on the charts."),
                       this)),
      table_(new WhatIfTable(this)) {
  hint_->setWordWrap(true);
  hint_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(hint_);
  layout->addWidget(table_);
  layout->addStretch(1);
  // The hint stands in for the table whenever the table has nothing to show.
  table_->installEventFilter(this);
}

bool WhatIfPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_ && (event->type() == QEvent::Show || event->type() == QEvent::Hide))
    hint_->setVisible(event->type() == QEvent::Hide);
  return TelemetryPanel::eventFilter(watched, event);
}

}  // namespace kvscope
