#include "widgets/timeline/TimelineKind.h"

#include <QCoreApplication>
#include <QLocale>
#include <QPainter>

#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("kvscope::TimelineKind", text); }

QString q(const std::string& s) { return QString::fromStdString(s); }
QString latin(const char* s) { return QString::fromLatin1(s); }

QString workerName(WorkerId w, const TelemetryStore* store) {
  if (store && w >= 0 && static_cast<std::size_t>(w) < store->workers().size())
    return q(store->workers()[static_cast<std::size_t>(w)].info.name);
  return QStringLiteral("worker %1").arg(w);
}

QString linkName(std::int32_t prefill, WorkerId w, const TelemetryStore* store) {
  if (store)
    if (const LinkSeries* l = store->link(prefill, w)) return q(l->name);
  return QStringLiteral("P%1->%2").arg(prefill).arg(workerName(w, store));
}

QString tokens(std::int64_t n) { return QLocale().toString(static_cast<qlonglong>(n)); }

}  // namespace

std::int64_t tokensFreedBy(const Event& e) {
  const auto* ev = std::get_if<Eviction>(&e.payload);
  return ev ? ev->tokens_freed : 0;
}

// Which event a crowded cell shows: the one an operator must not miss.
int timelineKindSeverity(TimelineKind k) {
  switch (k) {
    case TimelineKind::Crash:
      return 10;
    case TimelineKind::LinkDead:
      return 9;
    case TimelineKind::Correction:
      return 8;
    case TimelineKind::TransferFailed:
      return 7;
    case TimelineKind::LinkSuspect:
      return 6;
    case TimelineKind::Retraction:
      return 6;
    case TimelineKind::Restart:
      return 5;
    case TimelineKind::Eviction:
      return 4;  // over the reseed it causes: its size tells the storm
    case TimelineKind::Reseed:
      return 3;
    case TimelineKind::Seed:
      return 2;
    case TimelineKind::LinkAlive:
      return 1;
    case TimelineKind::PolicyChange:
      return 1;
    case TimelineKind::KnobChange:
      return 0;
    case TimelineKind::Count:
      break;
  }
  return 0;
}

std::optional<TimelineKind> timelineKindOf(const Event& e) {
  const EventPayload& p = e.payload;
  if (std::holds_alternative<Eviction>(p)) return TimelineKind::Eviction;
  if (const auto* s = std::get_if<SeedStarted>(&p)) return s->reseed ? TimelineKind::Reseed : TimelineKind::Seed;
  if (std::holds_alternative<WorkerCrashed>(p)) return TimelineKind::Crash;
  if (std::holds_alternative<WorkerRestarted>(p)) return TimelineKind::Restart;
  if (const auto* l = std::get_if<LinkHealth>(&p)) {
    switch (l->state) {
      case LinkState::Dead:
        return TimelineKind::LinkDead;
      case LinkState::Suspect:
        return TimelineKind::LinkSuspect;
      case LinkState::Alive:
        return TimelineKind::LinkAlive;
    }
  }
  if (const auto* t = std::get_if<TransferFinished>(&p); t && !t->ok) return TimelineKind::TransferFailed;
  if (std::holds_alternative<Correction>(p)) return TimelineKind::Correction;
  if (std::holds_alternative<Retraction>(p)) return TimelineKind::Retraction;
  if (std::holds_alternative<KnobChanged>(p)) return TimelineKind::KnobChange;
  if (std::holds_alternative<PolicyChanged>(p)) return TimelineKind::PolicyChange;
  return std::nullopt;
}

QString timelineKindLabel(TimelineKind kind) {
  switch (kind) {
    case TimelineKind::Eviction:
      return tr("Evictions (sized by tokens freed)");
    case TimelineKind::Seed:
      return tr("Seeds");
    case TimelineKind::Reseed:
      return tr("Reseeds");
    case TimelineKind::Crash:
      return tr("Worker crashes");
    case TimelineKind::Restart:
      return tr("Worker restarts");
    case TimelineKind::LinkDead:
      return tr("Link marked dead");
    case TimelineKind::LinkSuspect:
      return tr("Link suspect");
    case TimelineKind::LinkAlive:
      return tr("Link alive again");
    case TimelineKind::TransferFailed:
      return tr("Failed transfers");
    case TimelineKind::Correction:
      return tr("Streaming-session corrections");
    case TimelineKind::Retraction:
      return tr("Decode retractions (KV ran out)");
    case TimelineKind::KnobChange:
      return tr("Knob changes");
    case TimelineKind::PolicyChange:
      return tr("Policy changes");
    case TimelineKind::Count:
      break;
  }
  return {};
}

const char* timelineKindKey(TimelineKind kind) {
  switch (kind) {
    case TimelineKind::Eviction:
      return "eviction";
    case TimelineKind::Seed:
      return "seed";
    case TimelineKind::Reseed:
      return "reseed";
    case TimelineKind::Crash:
      return "crash";
    case TimelineKind::Restart:
      return "restart";
    case TimelineKind::LinkDead:
      return "link-dead";
    case TimelineKind::LinkSuspect:
      return "link-suspect";
    case TimelineKind::LinkAlive:
      return "link-alive";
    case TimelineKind::TransferFailed:
      return "transfer-failed";
    case TimelineKind::Correction:
      return "correction";
    case TimelineKind::Retraction:
      return "retraction";
    case TimelineKind::KnobChange:
      return "knob";
    case TimelineKind::PolicyChange:
      return "policy";
    case TimelineKind::Count:
      break;
  }
  return "?";
}

QColor timelineKindColor(TimelineKind kind) {
  // One hue per kind at mid luminance, so each reads on a white and on a near-black Base.
  switch (kind) {
    case TimelineKind::Eviction:
      return QColor(0xF5, 0x7C, 0x00);  // orange
    case TimelineKind::Seed:
      return QColor(0x1E, 0x88, 0xE5);  // blue
    case TimelineKind::Reseed:
      return QColor(0xAB, 0x47, 0xBC);  // purple
    case TimelineKind::Crash:
      return QColor(0xE5, 0x39, 0x35);  // red
    case TimelineKind::Restart:
      return QColor(0x43, 0xA0, 0x47);  // green
    case TimelineKind::LinkDead:
      return QColor(0xD8, 0x1B, 0x60);  // crimson
    case TimelineKind::LinkSuspect:
      return QColor(0xF9, 0xA8, 0x25);  // amber
    case TimelineKind::LinkAlive:
      return QColor(0x7C, 0xB3, 0x42);  // light green
    case TimelineKind::TransferFailed:
      return QColor(0x8D, 0x6E, 0x63);  // brown
    case TimelineKind::Correction:
      return QColor(0x00, 0xAC, 0xC1);  // cyan
    case TimelineKind::Retraction:
      return QColor(0xC0, 0xCA, 0x33);  // lime
    case TimelineKind::KnobChange:
      return QColor(0x5C, 0x6B, 0xC0);  // indigo
    case TimelineKind::PolicyChange:
      return QColor(0x00, 0x89, 0x7B);  // teal
    case TimelineKind::Count:
      break;
  }
  return Qt::gray;
}

void paintTimelineGlyph(QPainter& p, TimelineKind kind, QPointF c, qreal r, const QColor& outline) {
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  const QColor fill = timelineKindColor(kind);
  // Filled glyphs get a thin palette outline; hollow ones are a thick stroke of the kind's colour.
  auto filled = [&] {
    p.setPen(QPen(outline, 1));
    p.setBrush(fill);
  };
  auto hollow = [&] {
    p.setPen(QPen(fill, 2));
    p.setBrush(Qt::NoBrush);
  };
  auto polygon = [&](std::initializer_list<QPointF> pts) { p.drawPolygon(QPolygonF(QList<QPointF>(pts))); };
  auto square = [&](qreal half) { p.drawRect(QRectF(c - QPointF(half, half), c + QPointF(half, half))); };
  switch (kind) {
    case TimelineKind::Eviction:
      filled();
      p.drawEllipse(c, r, r);
      break;
    case TimelineKind::Seed:
      filled();
      polygon({c + QPointF(0, -r), c + QPointF(r, r * 0.8), c + QPointF(-r, r * 0.8)});
      break;
    case TimelineKind::Reseed:  // a seed drawn hollow, with a dot: the same path, taken again
      hollow();
      polygon({c + QPointF(0, -r), c + QPointF(r, r * 0.8), c + QPointF(-r, r * 0.8)});
      p.setPen(Qt::NoPen);
      p.setBrush(fill);
      p.drawEllipse(c + QPointF(0, r * 0.2), r * 0.25, r * 0.25);
      break;
    case TimelineKind::Crash: {
      const qreal width = std::max<qreal>(1.5, r / 2.5);
      for (const QPen& pen :
           {QPen(outline, width + 2, Qt::SolidLine, Qt::RoundCap), QPen(fill, width, Qt::SolidLine, Qt::RoundCap)}) {
        p.setPen(pen);
        p.drawLine(c + QPointF(-r, -r), c + QPointF(r, r));
        p.drawLine(c + QPointF(-r, r), c + QPointF(r, -r));
      }
      break;
    }
    case TimelineKind::Restart:
      hollow();
      p.drawEllipse(c, r * 0.8, r * 0.8);
      break;
    case TimelineKind::LinkDead:
      filled();
      square(r);
      break;
    case TimelineKind::LinkSuspect:
      hollow();
      square(r * 0.8);
      break;
    case TimelineKind::LinkAlive:
      filled();
      square(r * 0.5);
      break;
    case TimelineKind::TransferFailed:
      filled();
      polygon({c + QPointF(0, r), c + QPointF(r, -r * 0.8), c + QPointF(-r, -r * 0.8)});
      break;
    case TimelineKind::Correction:
      filled();
      polygon({c + QPointF(0, -r), c + QPointF(r, 0), c + QPointF(0, r), c + QPointF(-r, 0)});
      break;
    case TimelineKind::Retraction:  // a hollow diamond: a correction's shape, for the other scheduler fix-up
      hollow();
      polygon({c + QPointF(0, -r), c + QPointF(r, 0), c + QPointF(0, r), c + QPointF(-r, 0)});
      break;
    case TimelineKind::KnobChange:
    case TimelineKind::PolicyChange:
      p.setPen(QPen(fill, 2, kind == TimelineKind::KnobChange ? Qt::DashLine : Qt::SolidLine));
      p.drawLine(c + QPointF(0, -r), c + QPointF(0, r));
      break;
    case TimelineKind::Count:
      break;
  }
  p.restore();
}

QString formatSimTime(SimTime t) { return QStringLiteral("%1 s").arg(timeToSeconds(t), 0, 'f', 3); }

QString describeTimelineEvent(const Event& e, const TelemetryStore* store) {
  const QString at = formatSimTime(e.time);
  const EventPayload& p = e.payload;
  if (const auto* v = std::get_if<Eviction>(&p))
    return tr("Eviction on %1 at %2\n%3 tokens freed (%4-level), %5 session(s) hit\nsession %6")
        .arg(workerName(v->worker, store), at, tokens(v->tokens_freed), latin(toString(v->granularity)))
        .arg(v->sessions_hit)
        .arg(v->session ? QString::number(v->session) : tr("several"));
  if (const auto* s = std::get_if<SeedStarted>(&p))
    return tr("%1 P%2 -> %3 at %4\n%5 tokens, request %6, session %7")
        .arg(s->reseed ? tr("Reseed") : tr("Seed"))
        .arg(s->prefill)
        .arg(workerName(s->worker, store), at, tokens(s->tokens))
        .arg(s->request)
        .arg(s->session);
  if (const auto* c = std::get_if<WorkerCrashed>(&p))
    return tr("%1 crashed at %2\n%3\n%4 request(s) aborted")
        .arg(workerName(c->worker, store), at, q(c->reason))
        .arg(c->aborted_requests);
  if (const auto* r = std::get_if<WorkerRestarted>(&p))
    return tr("%1 restarted at %2").arg(workerName(r->worker, store), at);
  if (const auto* l = std::get_if<LinkHealth>(&p))
    return tr("Link %1 %2 at %3\n%4\n%5 request(s) aborted")
        .arg(linkName(l->prefill, l->worker, store), latin(toString(l->state)), at,
             l->reason.empty() ? tr("(no reason given)") : q(l->reason))
        .arg(l->aborted_requests);
  if (const auto* t = std::get_if<TransferFinished>(&p))
    return tr("Transfer %1 %2 at %3\n%4\nrequest %5, %6 tokens, %7 bytes")
        .arg(linkName(t->prefill, t->worker, store), t->ok ? tr("done") : tr("failed"), at, q(t->reason))
        .arg(t->request)
        .arg(tokens(t->tokens), tokens(t->bytes));
  if (const auto* c = std::get_if<Correction>(&p))
    return tr("Streaming-session correction on %1 at %2\nextend_input_len %3 -> 0 (fill_len=%3, prefix_len=%4, "
              "kv_committed_len=%5)\nrequest %6, session %7, fault: %8")
        .arg(workerName(c->worker, store), at)
        .arg(c->fill_len)
        .arg(c->prefix_len)
        .arg(c->kv_committed_len)
        .arg(c->request)
        .arg(c->session)
        .arg(latin(toString(c->fault)));
  if (const auto* r = std::get_if<Retraction>(&p))
    return tr("Decode out of memory on %1 at %2\n%3 request(s) retracted, %4 tokens freed\nnew_token_ratio %5 -> %6")
        .arg(workerName(r->worker, store), at)
        .arg(r->requests.size())
        .arg(tokens(r->tokens_freed))
        .arg(r->new_token_ratio_before, 0, 'f', 4)
        .arg(r->new_token_ratio_after, 0, 'f', 4);
  if (const auto* k = std::get_if<KnobChanged>(&p))
    return tr("Knob %1: %2 -> %3 at %4 (by %5)")
        .arg(q(k->name))
        .arg(k->old_value)
        .arg(k->new_value)
        .arg(at, k->who.empty() ? tr("unknown") : q(k->who));
  if (const auto* c = std::get_if<PolicyChanged>(&p))
    return tr("Policy %1 -> %2 at %3 (by %4)")
        .arg(q(c->old_policy), q(c->new_policy), at, c->who.empty() ? tr("unknown") : q(c->who));
  return tr("%1 at %2").arg(latin(eventKindName(p)), at);
}

}  // namespace kvscope
