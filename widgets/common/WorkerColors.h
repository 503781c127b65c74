#pragma once
// One colour per worker, the same in every chart and on the timeline (a qualitative palette that
// stays readable on light and dark backgrounds).
#include <QColor>

namespace kvscope {

inline QColor workerColor(int worker) {
  static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd),
                                  QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2), QColor(0x17, 0xbe, 0xcf),
                                  QColor(0xbc, 0xbd, 0x22), QColor(0x7f, 0x7f, 0x7f)};
  return colors[static_cast<unsigned>(worker) % (sizeof(colors) / sizeof(colors[0]))];
}

}  // namespace kvscope
