#pragma once
// A fixed hue mixed into a colour of the current palette (usually Base), so a mark reads in light
// and dark themes alike and follows a palette switch (callers mix at paint or data() time).
#include <QColor>

namespace kvscope {

inline QColor mixHue(const QColor& base, const QColor& hue, double amount) {
  return QColor::fromRgbF(static_cast<float>(base.redF() * (1 - amount) + hue.redF() * amount),
                          static_cast<float>(base.greenF() * (1 - amount) + hue.greenF() * amount),
                          static_cast<float>(base.blueF() * (1 - amount) + hue.blueF() * amount));
}

}  // namespace kvscope
