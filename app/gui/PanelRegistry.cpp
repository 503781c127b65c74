#include "app/gui/PanelRegistry.h"

#include <QCoreApplication>

#include <optional>

#include "core/telemetry/WorkerGauge.h"

#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LabMetricsPanel.h"
#include "widgets/charts/LatencyPanel.h"
#include "widgets/charts/LinkHealthPanel.h"
#include "widgets/charts/WorkerChartPanel.h"
#include "widgets/decisions/DecisionInspectorPanel.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/knobs/WhatIfPanel.h"
#include "widgets/runs/RunComparePanel.h"
#include "widgets/timeline/EventTimelinePanel.h"
#include "widgets/timeline/NotesPanel.h"
#include "widgets/timeline/ReplayControlsPanel.h"

namespace kvscope {

namespace {
template <class Panel>
TelemetryPanel* make(ViewState& view, QWidget* parent) {
  return new Panel(view, parent);
}

// A chart of the per-worker gauge `key` (WorkerGauge.h), a line per D.
std::function<TelemetryPanel*(ViewState&, QWidget*)> workerChart(const char* key) {
  const std::optional<WorkerGauge> gauge = workerGaugeNamed(key);
  Q_ASSERT_X(gauge, "workerChart", key);
  return [gauge = gauge.value_or(WorkerGauge::KvFraction)](ViewState& view, QWidget* parent) -> TelemetryPanel* {
    return new WorkerChartPanel(view, {WorkerChartSpec::of(gauge)}, parent);
  };
}
}  // namespace

const std::vector<PanelSpec>& panelSpecs() {
  static const std::vector<PanelSpec> specs{
      {"kvPools", QT_TRANSLATE_NOOP("PanelDocks", "KV pools"), "", Qt::NoDockWidgetArea, make<KvPoolPanel>},
      {"decodeLoad", QT_TRANSLATE_NOOP("PanelDocks", "Decode load"), "Alt+1", Qt::TopDockWidgetArea,
       make<DecodeLoadPanel>},
      {"knobs", QT_TRANSLATE_NOOP("PanelDocks", "Knobs"), "Alt+2", Qt::LeftDockWidgetArea, make<KnobsPanel>},
      {"diagnosis", QT_TRANSLATE_NOOP("PanelDocks", "Diagnosis"), "Alt+3", Qt::LeftDockWidgetArea,
       make<DiagnosisPanel>},
      {"linkHealth", QT_TRANSLATE_NOOP("PanelDocks", "Mooncake links"), "Alt+4", Qt::RightDockWidgetArea,
       make<LinkHealthPanel>},
      {"latency", QT_TRANSLATE_NOOP("PanelDocks", "Latency and failures"), "Alt+5", Qt::RightDockWidgetArea,
       make<LatencyPanel>},
      {"whatIf", QT_TRANSLATE_NOOP("PanelDocks", "What-if preview"), "Alt+6", Qt::RightDockWidgetArea,
       make<WhatIfPanel>},
      {"replay", QT_TRANSLATE_NOOP("PanelDocks", "Replay"), "", Qt::BottomDockWidgetArea, make<ReplayControlsPanel>},
      {"timeline", QT_TRANSLATE_NOOP("PanelDocks", "Event timeline"), "Alt+7", Qt::BottomDockWidgetArea,
       make<EventTimelinePanel>},
      {"decisions", QT_TRANSLATE_NOOP("PanelDocks", "Decision inspector"), "Alt+8", Qt::BottomDockWidgetArea,
       make<DecisionInspectorPanel>, "timeline"},
      {"labMetrics", QT_TRANSLATE_NOOP("PanelDocks", "Lab metrics"), "Alt+9", Qt::BottomDockWidgetArea,
       make<LabMetricsPanel>, "timeline"},
      {"decodeQueues", QT_TRANSLATE_NOOP("PanelDocks", "Decode queues"), "", Qt::BottomDockWidgetArea,
       workerChart("queued"), "timeline"},
      {"notes", QT_TRANSLATE_NOOP("PanelDocks", "Notes"), "", Qt::BottomDockWidgetArea, make<NotesPanel>, "timeline"},
      {"compare", QT_TRANSLATE_NOOP("PanelDocks", "Compare runs"), "", Qt::BottomDockWidgetArea, make<RunComparePanel>,
       "timeline"},
  };
  return specs;
}

}  // namespace kvscope
