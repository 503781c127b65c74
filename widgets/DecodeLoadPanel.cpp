#include "DecodeLoadPanel.h"

#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

#include "DecodeLoadModel.h"

namespace kvscope {

DecodeLoadPanel::DecodeLoadPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent), model_(new DecodeLoadModel(this)), table_(new QTableView(this)) {
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_);
}

void DecodeLoadPanel::refresh(const TelemetryStore& store) { model_->refresh(store); }

}  // namespace kvscope
