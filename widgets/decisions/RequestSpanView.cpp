#include "widgets/decisions/RequestSpanView.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "core/model/NumberText.h"

namespace kvscope {

namespace {
constexpr int kLaneHeight = 16;
constexpr int kAxisHeight = 14;
constexpr int kBesideGap = 16;  // a label beside its slice starts past the flow arrow's first bend
const QColor kPrefill(0xf2, 0x8e, 0x2b);
const QColor kTransfer(0x76, 0xb7, 0xb2);
const QColor kDecode(0x4e, 0x79, 0xa7);
const QColor kFailed(0xe1, 0x57, 0x59);

QString seconds(SimTime t) { return QString::fromStdString(formatNumber("%.3f s", timeToSeconds(t))); }
}  // namespace

RequestSpanView::RequestSpanView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("requestSpans"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void RequestSpanView::setTrace(const std::optional<RequestTrace>& trace, Names names, bool selected) {
  trace_ = trace;
  selected_ = selected;
  names_ = std::move(names);
  setToolTip(laneTexts().join(QLatin1Char('\n')));
  updateGeometry();
  update();
}

int RequestSpanView::lanes() const { return trace_ && trace_->transfer ? 3 : 1; }

QSize RequestSpanView::sizeHint() const { return {400, kAxisHeight + 3 * kLaneHeight + 4}; }

// Squeezed (a 1280x800 tab) it may shrink to nothing: the tables above and below come first.
QSize RequestSpanView::minimumSizeHint() const { return {120, 0}; }

std::vector<RequestSpanView::Slice> RequestSpanView::slices() const {
  std::vector<Slice> out;
  if (!trace_) return out;
  const RequestTrace& t = *trace_;
  const bool failed = t.status == RequestStatus::Failed;
  SimTime decode_from = t.arrival;
  if (t.transfer) {
    const RequestTrace::Transfer& x = *t.transfer;
    const SimTime end = x.end < 0 ? t.done : x.end;
    out.push_back({0, t.arrival, x.start,
                   tr("%1: queue + prefill %2").arg(names_.prefill, seconds(x.start - t.arrival)), kPrefill});
    out.push_back({1, x.start, end,
                   tr("%1 -> %2: KV transfer %3, %4 MB%5")
                       .arg(names_.prefill, names_.decode, seconds(end - x.start))
                       .arg(static_cast<double>(x.bytes) / 1e6, 0, 'f', 1)
                       .arg(x.ok ? QString() : tr(", failed")),
                   x.ok ? kTransfer : kFailed});
    decode_from = end;
  }
  QString decode = tr("%1: decode %2").arg(names_.decode, seconds(t.done - decode_from));
  if (t.first_token >= 0) decode += tr(", first token at +%1").arg(seconds(t.first_token - t.arrival));
  if (failed) decode += tr(", failed");
  out.push_back({lanes() - 1, decode_from, t.done, decode, failed ? kFailed : kDecode});
  return out;
}

QStringList RequestSpanView::laneTexts() const {
  QStringList texts;
  for (const Slice& s : slices()) texts << s.label;
  return texts;
}

void RequestSpanView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.color(QPalette::Base));
  if (!trace_) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter,
               selected_ ? tr("Its prefill, transfer and decode appear once the request has finished")
                         : tr("Select a request to see its prefill, KV transfer and decode"));
    return;
  }
  const RequestTrace& t = *trace_;
  const int lane_h = std::max(8, std::min(kLaneHeight, (height() - kAxisHeight) / lanes()));
  const int left = 4, right = width() - 4;
  const double span = static_cast<double>(std::max<SimTime>(1, t.done - t.arrival));
  auto x = [&](SimTime time) { return left + (right - left) * static_cast<double>(time - t.arrival) / span; };
  auto laneRect = [&](const Slice& s) {
    const double x0 = x(s.start), x1 = std::max(x(s.end), x0 + 2);
    return QRectF(x0, kAxisHeight + s.lane * lane_h + 2, x1 - x0, lane_h - 4);
  };
  // The axis: the request's own time, from its arrival (the run's time in the tooltip's lanes).
  p.setPen(pal.color(QPalette::Text));
  p.drawText(QRect(left, 0, right - left, kAxisHeight), Qt::AlignLeft | Qt::AlignVCenter,
             tr("arrived at %1").arg(seconds(t.arrival)));
  p.drawText(QRect(left, 0, right - left, kAxisHeight), Qt::AlignRight | Qt::AlignVCenter,
             tr("+%1: done").arg(seconds(t.done - t.arrival)));
  const std::vector<Slice> all = slices();
  for (const Slice& s : all) {
    const QRectF r = laneRect(s);
    p.setPen(QPen(s.colour.darker(140), 1));
    p.setBrush(s.colour);
    p.drawRect(r);
    // The label inside its slice where it fits; a slice too short for it (a 50 ms prefill in a
    // 77 s request) has it beside, in its lane, as Perfetto does: every lane says what it is.
    const QRectF inside = r.adjusted(3, 0, -3, 0);
    const int need = fontMetrics().horizontalAdvance(s.label);
    const double beside_width = right - r.right() - kBesideGap;
    if (inside.width() >= need || inside.width() >= beside_width) {
      p.setPen(s.colour.lightness() > 150 ? Qt::black : Qt::white);
      if (inside.width() > 20)
        p.drawText(inside, Qt::AlignLeft | Qt::AlignVCenter,
                   fontMetrics().elidedText(s.label, Qt::ElideRight, int(inside.width())));
    } else {
      const QRectF beside(r.right() + kBesideGap, r.top(), beside_width, r.height());
      p.setPen(pal.color(QPalette::Text));
      p.drawText(beside, Qt::AlignLeft | Qt::AlignVCenter,
                 fontMetrics().elidedText(s.label, Qt::ElideRight, int(beside.width())));
    }
  }
  if (t.first_token >= 0) {  // the first token: a tick across the decode lane
    const QRectF d = laneRect(all.back());
    const double tx = x(t.first_token);
    p.setPen(QPen(pal.color(QPalette::Text), 2));
    p.drawLine(QPointF(tx, d.top() - 2), QPointF(tx, d.bottom() + 2));
  }
  if (t.transfer && all.size() == 3) {  // the flow: from the prefill's end to the decode's start
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF from = laneRect(all[0]), to = laneRect(all[2]);
    const QPointF a(from.right(), from.center().y()), b(to.left(), to.center().y());
    QPainterPath path(a);
    path.cubicTo(a + QPointF(12, 0), b - QPointF(12, 0), b);
    p.setPen(QPen(pal.color(QPalette::Text), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    const QPointF head[] = {b, b + QPointF(-6, -4), b + QPointF(-6, 4)};
    p.setBrush(pal.color(QPalette::Text));
    p.drawPolygon(head, 3);
  }
}

}  // namespace kvscope
