#pragma once
// The console's window replaying a recording, as the GUI tests open it: 1600x1000, shown, the
// recording as its source at `speed` recorded seconds per wall second (0: as fast as it reads).
#include <QString>

#include "app/gui/MainWindow.h"
#include "app/gui/SourceFactory.h"

namespace kvscope::test {

inline void openRecording(MainWindow& window, const QString& recording, double speed) {
  window.resize(1600, 1000);
  window.show();
  SourceSpec spec;
  spec.kind = SourceSpec::Recording;
  spec.target = recording.toStdString();
  spec.speed = speed;
  window.openSource(makeSource(spec));
}

}  // namespace kvscope::test
