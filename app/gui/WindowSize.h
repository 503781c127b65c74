#pragma once
// A window size given on the command line as WIDTHxHEIGHT (kvscope --size, bench_console --size).
#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace kvscope {

// The size, or nothing unless it reads WIDTHxHEIGHT within 640x400 .. 8192x8192.
inline std::optional<QSize> parseWindowSize(const QString& text) {
  const QStringList parts = text.split('x');
  bool w_ok = false, h_ok = false;
  const int w = parts.size() == 2 ? parts[0].toInt(&w_ok) : 0;
  const int h = parts.size() == 2 ? parts[1].toInt(&h_ok) : 0;
  if (!w_ok || !h_ok || w < 640 || h < 400 || w > 8192 || h > 8192) return std::nullopt;
  return QSize(w, h);
}

}  // namespace kvscope
