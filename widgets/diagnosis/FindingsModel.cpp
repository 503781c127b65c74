#include "widgets/diagnosis/FindingsModel.h"

#include <QGuiApplication>
#include <QPalette>

#include <algorithm>

namespace kvscope {

namespace {

// A finding keeps its mode and where it started as the run goes on; its end and numbers grow.
bool sameFinding(const Finding& a, const Finding& b) {
  return a.mode == b.mode && a.name == b.name && a.window_start_s == b.window_start_s;
}

bool sameContent(const Finding& a, const Finding& b) {
  return sameFinding(a, b) && a.window_end_s == b.window_end_s && a.evidence == b.evidence &&
         a.suggestion == b.suggestion && a.subjects == b.subjects &&
         a.resolved == b.resolved;  // (the mode cell names them)
}

QString q(const std::string& s) { return QString::fromStdString(s); }

// Long texts wrap in a tooltip only when given as rich text.
QString wrapped(const std::string& s) { return QStringLiteral("<p>%1</p>").arg(q(s).toHtmlEscaped()); }

}  // namespace

void FindingsModel::setFindings(std::vector<Finding> findings) {
  const std::size_t kept = std::min(findings_.size(), findings.size());
  const bool prefix = std::equal(findings_.begin(), findings_.begin() + static_cast<std::ptrdiff_t>(kept),
                                 findings.begin(), sameFinding);
  if (!prefix || findings.size() < findings_.size()) {
    beginResetModel();
    findings_ = std::move(findings);
    endResetModel();
    return;
  }
  for (std::size_t row = 0; row < kept; ++row) {
    if (sameContent(findings_[row], findings[row])) continue;
    findings_[row] = findings[row];
    emit dataChanged(index(static_cast<int>(row), 0), index(static_cast<int>(row), ColumnCount - 1));
  }
  if (findings.size() > kept) {
    beginInsertRows({}, static_cast<int>(kept), static_cast<int>(findings.size()) - 1);
    findings_.insert(findings_.end(), std::make_move_iterator(findings.begin() + static_cast<std::ptrdiff_t>(kept)),
                     std::make_move_iterator(findings.end()));
    endInsertRows();
  }
}

const Finding* FindingsModel::finding(int row) const {
  return row >= 0 && row < rowCount() ? &findings_[static_cast<std::size_t>(row)] : nullptr;
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(findings_.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString FindingsModel::modeText(const Finding& f, std::size_t named) {
  // Selecting the row still highlights every subject, and the tooltip names them all; the cell
  // names the first few, so that a finding over 50 of 64 D fits a laptop's side column.
  return f.subjects.empty() ? q(f.mode) : q(f.mode) + QStringLiteral(" - ") + q(f.subjectsText(named));
}

void FindingsModel::setNamedSubjects(int named) {
  const auto n = static_cast<std::size_t>(std::clamp(named, 1, 3));
  if (n == named_) return;
  named_ = n;
  if (!findings_.empty()) emit dataChanged(index(0, Mode), index(rowCount() - 1, Mode));
}

QString FindingsModel::windowText(const Finding& f) {
  const QString window = tr("%1 – %2 s").arg(f.window_start_s, 0, 'f', 1).arg(f.window_end_s, 0, 'f', 1);
  return f.resolved ? tr("%1, resolved").arg(window) : window;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Finding& f = findings_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Mode:
          return modeText(f, named_);
        case Name:
          return q(f.name);
        case Window:
          return windowText(f);
        case Evidence:
          return q(f.evidence);
        case Suggestion:
          return q(f.suggestion);
      }
      break;
    case Qt::ToolTipRole:
      switch (index.column()) {
        case Mode:
        case Name: {
          const QString title = tr("Mode %1: %2").arg(q(f.mode), q(f.name));
          if (f.subjects.size() <= 3) return title;
          QStringList all;
          for (const std::string& s : f.subjects) all << q(s);
          return QStringLiteral("<p>%1</p><p>%2</p>")
              .arg(title.toHtmlEscaped(), all.join(QStringLiteral(", ")).toHtmlEscaped());
        }
        case Window:
          return f.resolved ? tr("It held until %1 s and no longer does. Click to show its window on every chart")
                                  .arg(f.window_end_s, 0, 'f', 1)
                            : tr("Click to show this window on every chart");
        case Evidence:
          return wrapped(f.evidence);
        case Suggestion:
          return wrapped(f.suggestion);
      }
      break;
    case Qt::ForegroundRole:  // a resolved finding stays on record, greyed
      if (f.resolved) return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == Mode) return QVariant::fromValue(Qt::Alignment(Qt::AlignCenter));
      break;
    case WindowStartRole:
      return f.window_start_s;
    case WindowEndRole:
      return f.window_end_s;
    case ModeRole:
      return q(f.mode);
    default:
      break;
  }
  return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case Mode:
      return tr("Mode");
    case Name:
      return tr("Failure mode");
    case Window:
      return tr("Window");
    case Evidence:
      return tr("Evidence");
    case Suggestion:
      return tr("Suggested fix");
  }
  return {};
}

}  // namespace kvscope
