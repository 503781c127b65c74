#pragma once
// The console's one writer of a file a user named (a chart's PNG or CSV, the window, the summary):
// AtomicFile, so the file is whole or absent, and only a regular file (a device, FIFO or directory
// chosen in a dialog is refused; a symlink is followed).
#include <QByteArray>
#include <QString>

namespace kvscope {

// False with `error` ("cannot write PATH: why") when any step fails.
bool saveWholeFile(const QString& path, const QByteArray& bytes, QString* error);

}  // namespace kvscope
