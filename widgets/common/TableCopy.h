#pragma once
// Ctrl+C in a table copies what is selected, as tab-separated rows (what a spreadsheet pastes),
// or the whole table with its header when nothing is (the worker strip selects nothing: a click
// there picks a worker for the charts).
#include <QString>

class QAbstractItemView;

namespace kvscope {

// Installs the copy on `view` (an event filter it owns).
void enableTableCopy(QAbstractItemView& view);
// What Ctrl+C puts on the clipboard for `view` now.
QString tableCopyText(const QAbstractItemView& view);

}  // namespace kvscope
