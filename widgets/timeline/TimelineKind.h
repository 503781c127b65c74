#pragma once
// The event timeline's vocabulary: which discrete events it draws, how each looks (glyph and a
// colour readable on light and dark palettes), which one a crowded spot shows, and how a person
// reads one. Shared by the timeline's canvas, its filter menu and its details pane.
#include <QColor>
#include <QPointF>
#include <QString>

#include <cstdint>
#include <optional>

#include "core/events/Event.h"

class QPainter;

namespace kvscope {

class TelemetryStore;

enum class TimelineKind : int {
  Eviction,
  Seed,
  Reseed,
  Crash,
  Restart,
  LinkDead,
  LinkSuspect,
  LinkAlive,
  TransferFailed,
  Correction,
  Retraction,    // decode ran out of KV and took requests out of its batch
  KnobChange,    // drawn as a line across all rows
  PolicyChange,  // drawn as a line across all rows
  Count
};
inline constexpr int kTimelineKinds = static_cast<int>(TimelineKind::Count);

// The kind an event is drawn as; none for what the timeline does not show (routes, snapshots, ...).
std::optional<TimelineKind> timelineKindOf(const Event& e);
// Which kind a crowded cell shows: the one an operator must not miss (a crash over 1000 evictions).
int timelineKindSeverity(TimelineKind kind);
std::int64_t tokensFreedBy(const Event& e);      // an eviction's size; 0 for other events
QString timelineKindLabel(TimelineKind kind);    // "Evictions (sized by tokens freed)"
const char* timelineKindKey(TimelineKind kind);  // "eviction": stable, for object names and settings
// One mid-luminance hue per kind; glyphs get a palette-coloured outline to stand out on any Base.
QColor timelineKindColor(TimelineKind kind);
void paintTimelineGlyph(QPainter& p, TimelineKind kind, QPointF centre, qreal radius, const QColor& outline);

// A person's account of an event, a line per fact; `store` names workers and links when given.
QString describeTimelineEvent(const Event& e, const TelemetryStore* store);
QString formatSimTime(SimTime t);

}  // namespace kvscope
