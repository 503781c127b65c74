#pragma once
// A selected request's spans, as Perfetto draws a request across threads: a lane for its prefill
// worker (queued and prefilled, from its arrival to its KV transfer's start), one for the link
// P -> D (the transfer), one for its decode worker (from the transfer's end, or its arrival when
// it was served without one, to its end) with a tick at its first token, and a flow arrow from the
// prefill's end to the decode's start. The time axis spans the request alone. In the decision
// inspector, under the request table.
#include <QString>
#include <QWidget>

#include <optional>

#include "core/telemetry/RequestTraces.h"

namespace kvscope {

class RequestSpanView : public QWidget {
  Q_OBJECT
 public:
  explicit RequestSpanView(QWidget* parent = nullptr);
  // The request to draw, with its workers' names (nothing: the view says why it is empty: no
  // request selected, or `selected` and not finished yet).
  struct Names {
    QString prefill, decode;
  };
  void setTrace(const std::optional<RequestTrace>& trace, Names names, bool selected = true);
  const std::optional<RequestTrace>& trace() const { return trace_; }
  // What each lane says (for tests and the tooltip): "P0: queue + prefill 0.42 s", ...
  QStringList laneTexts() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Slice {
    int lane;
    SimTime start, end;
    QString label;
    QColor colour;
  };
  std::vector<Slice> slices() const;
  int lanes() const;

  std::optional<RequestTrace> trace_;
  Names names_;
  bool selected_ = false;
};

}  // namespace kvscope
