#include "widgets/decisions/DecisionModel.h"

#include <QColor>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <cmath>
#include <limits>

#include "core/router/PolicyRegistry.h"
#include "widgets/decisions/RequestTableModel.h"

namespace kvscope {

namespace {

QString fromView(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// How a policy orders equal scores, and why it may choose a worker whose score is not the best:
// from its registry entry (core/router/policies).
QString tieBreak(const std::string& policy) {
  const PolicySpec* spec = findPolicy(policy);
  if (spec && !spec->tie_break.empty()) return fromView(spec->tie_break);
  return QStringLiteral("%1 gives a tie to the lowest worker index").arg(QString::fromStdString(policy));
}

// What a decision field's code says (unified-gated's decision dict), or "" for a plain number.
QString fieldMeaning(const QString& name, double value) {
  if (name == QLatin1String("decision"))
    return value == 1 ? QStringLiteral(" (affinity)") : QStringLiteral(" (fallback)");
  if (name == QLatin1String("affinity") && value < 0) return QStringLiteral(" (none)");
  if (name == QLatin1String("tie_break")) {
    static const char* const kinds[] = {" (no tie)", " (new uncached tokens)", " (num_requests)", " (round-robin)"};
    const auto k = static_cast<int>(value);
    if (k >= 0 && k < 4) return QString::fromLatin1(kinds[k]);
  }
  return {};
}

QString overrideReason(const std::string& policy) {
  const PolicySpec* spec = findPolicy(policy);
  if (spec && !spec->override_rule.empty()) return fromView(spec->override_rule);
  return QStringLiteral("%1 ranks by more than the total score").arg(QString::fromStdString(policy));
}

}  // namespace

QString formatScore(double value) {
  if (std::isnan(value)) return QStringLiteral("—");
  const double magnitude = std::abs(value);
  if (value == std::floor(value) && magnitude < 1e15) return QString::number(value, 'f', 0);
  if (magnitude >= 100) return QString::number(value, 'f', 1);
  if (magnitude >= 1) return QString::number(value, 'f', 2);
  return QString::number(value, 'g', 3);
}

DecisionModel::DecisionModel(QObject* parent) : QAbstractTableModel(parent) {}

void DecisionModel::setDecision(const RouteDecision& decision) {
  // A different decision usually has a different column set: a reset is the honest signal.
  beginResetModel();
  decision_ = decision;
  components_.clear();
  for (const CandidateScore& c : decision.candidates)
    for (std::size_t i = 0; i < c.num_components; ++i) {
      const QString name = QString::fromLatin1(c.components[i].name ? c.components[i].name : "?");
      if (!components_.contains(name)) components_ << name;
    }
  // A cell per (candidate, component), NaN where a candidate lacks one, so painting never searches.
  values_.assign(decision.candidates.size(), std::vector<double>(static_cast<std::size_t>(components_.size()),
                                                                 std::numeric_limits<double>::quiet_NaN()));
  for (std::size_t row = 0; row < decision.candidates.size(); ++row) {
    const CandidateScore& c = decision.candidates[row];
    for (std::size_t i = 0; i < c.num_components; ++i) {
      const auto column = components_.indexOf(QString::fromLatin1(c.components[i].name ? c.components[i].name : "?"));
      values_[row][static_cast<std::size_t>(column)] = c.components[i].value;
    }
  }
  endResetModel();
}

void DecisionModel::clear() {
  if (!decision_) return;
  beginResetModel();
  decision_.reset();
  components_.clear();
  values_.clear();
  endResetModel();
}

void DecisionModel::setWorkerNames(std::vector<QString> names) {
  if (names == worker_names_) return;
  worker_names_ = std::move(names);
  if (rowCount() > 0) emit dataChanged(index(0, Worker), index(rowCount() - 1, Worker));
}

int DecisionModel::chosenRow() const {
  if (!decision_ || decision_->chosen == kNoWorker) return -1;
  for (std::size_t i = 0; i < decision_->candidates.size(); ++i)
    if (decision_->candidates[i].worker == decision_->chosen) return static_cast<int>(i);
  return -1;
}

int DecisionModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !decision_ ? 0 : static_cast<int>(decision_->candidates.size());
}

int DecisionModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstComponent + static_cast<int>(components_.size());
}

QVariant DecisionModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const CandidateScore& c = decision_->candidates[static_cast<std::size_t>(index.row())];
  const bool chosen = c.worker == decision_->chosen;
  const int column = index.column();
  const double component =
      column >= FirstComponent
          ? values_[static_cast<std::size_t>(index.row())][static_cast<std::size_t>(column - FirstComponent)]
          : 0.0;
  switch (role) {
    case Qt::DisplayRole:
      switch (column) {
        case Rank:
          return index.row() + 1;
        case Worker:
          return chosen ? tr("%1 (chosen)").arg(workerLabel(worker_names_, c.worker))
                        : workerLabel(worker_names_, c.worker);
        case Score:
          return formatScore(c.score);
        case Eligible:
          return c.eligible ? tr("yes") : tr("no");
        default:
          return formatScore(component);
      }
    case SortRole:
      switch (column) {
        case Rank:
          return index.row() + 1;
        case Worker:
          return c.worker;
        case Score:
          return c.score;
        case Eligible:
          return c.eligible;
        default:
          return component;
      }
    case Qt::TextAlignmentRole:
      if (column != Worker) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::FontRole:
      if (chosen) {
        QFont font;
        font.setBold(true);
        return font;
      }
      break;
    case Qt::BackgroundRole:
      if (chosen) {
        QColor highlight = QGuiApplication::palette().color(QPalette::Highlight);
        highlight.setAlpha(70);  // a tint, so the text keeps the palette's own colour
        return highlight;
      }
      break;
    case Qt::ForegroundRole:
      if (!c.eligible) return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
      break;
    case Qt::ToolTipRole:
      if (column == Eligible && !c.eligible) return tr("Dead, or excluded by admission: never chosen");
      break;
    default:
      break;
  }
  return {};
}

QVariant DecisionModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (section >= FirstComponent) {
    const QString& name = components_[section - FirstComponent];
    if (role == Qt::DisplayRole) return QString(name).replace(QLatin1Char('_'), QLatin1Char(' '));
    if (role == ComponentRole) return name;
    if (role == Qt::ToolTipRole) {
      const PolicySpec* spec = decision_ ? findPolicy(decision_->policy) : nullptr;
      const ScoreComponentSpec* c = spec ? spec->component(name.toStdString()) : nullptr;
      return c ? QStringLiteral("%1 (%2)").arg(fromView(c->help), fromView(c->unit)) : name;
    }
    return {};
  }
  if (role == Qt::ToolTipRole && section == Score && decision_)
    return decision_->lower_is_better ? tr("The policy's total cost: lower wins")
                                      : tr("The policy's total score: higher wins");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Rank:
      return tr("Rank");
    case Worker:
      return tr("Worker");
    case Score:
      return tr("Score");
    case Eligible:
      return tr("Eligible");
  }
  return {};
}

QString explainDecision(const RouteDecision& d, const std::vector<QString>& names) {
  QStringList lines;
  lines << (d.lower_is_better ? DecisionModel::tr("Lower score wins (%1 scores a cost).")
                              : DecisionModel::tr("Higher score wins (%1 scores a preference)."))
               .arg(QString::fromStdString(d.policy));
  if (d.num_fields > 0) {
    // The policy's decision-wide fields (unified-gated's decision dict), with what the codes mean.
    QStringList fields;
    for (std::uint8_t i = 0; i < d.num_fields && i < d.fields.size(); ++i) {
      const QString name = QString::fromLatin1(d.fields[i].name ? d.fields[i].name : "?");
      fields << QStringLiteral("%1 %2%3").arg(QString(name).replace(QLatin1Char('_'), QLatin1Char(' ')),
                                              formatScore(d.fields[i].value), fieldMeaning(name, d.fields[i].value));
    }
    lines << fields.join(QStringLiteral(", ")) + QLatin1Char('.');
  }
  if (d.chosen == kNoWorker) {
    lines << DecisionModel::tr("No candidate was eligible: the request could not be routed.");
    return lines.join(QLatin1Char('\n'));
  }
  const CandidateScore* chosen = nullptr;
  const CandidateScore* best = nullptr;
  for (const CandidateScore& c : d.candidates) {
    if (c.worker == d.chosen) chosen = &c;
    if (!c.eligible) continue;
    if (!best || (d.lower_is_better ? c.score < best->score : c.score > best->score)) best = &c;
  }
  if (!chosen || !best) return lines.join(QLatin1Char('\n'));
  const QString chosen_name = workerLabel(names, chosen->worker);
  if (chosen->score != best->score) {
    lines << DecisionModel::tr("%1 won although %2 scored better (%3 against %4): %5.")
                 .arg(chosen_name, workerLabel(names, best->worker), formatScore(best->score),
                      formatScore(chosen->score), overrideReason(d.policy));
    return lines.join(QLatin1Char('\n'));
  }
  QStringList tied;
  for (const CandidateScore& c : d.candidates)
    if (c.eligible && c.worker != chosen->worker && c.score == chosen->score) tied << workerLabel(names, c.worker);
  if (!tied.isEmpty())
    lines << DecisionModel::tr("%1 tied with %2 at %3: %4.")
                 .arg(chosen_name, tied.join(QStringLiteral(", ")), formatScore(chosen->score), tieBreak(d.policy));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace kvscope
