#include "widgets/common/SaveFile.h"

#include <QFile>
#include <QObject>

#include "core/io/AtomicFile.h"

namespace kvscope {

bool saveWholeFile(const QString& path, const QByteArray& bytes, QString* error) {
  std::string why;
  if (AtomicFile::write(QFile::encodeName(path).toStdString(), bytes.toStdString(), &why)) return true;
  if (error) *error = QObject::tr("cannot write %1").arg(QString::fromStdString(why));
  return false;
}

}  // namespace kvscope
