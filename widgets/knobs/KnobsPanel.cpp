#include "widgets/knobs/KnobsPanel.h"

#include <algorithm>

#include <QAbstractItemView>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QFontMetrics>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QStringList>
#include <QVBoxLayout>

#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/PaletteTint.h"
#include "widgets/common/ViewState.h"
#include "widgets/knobs/KnobSlider.h"

namespace kvscope {

namespace {

QString fromView(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Fixed hues mixed into the palette's own base colour, so the marks read in light and dark themes.
const QColor kInvalidHue(220, 50, 50);
const QColor kEditedHue(230, 170, 40);
const QColor kErrorText(200, 60, 60);

QString rangeText(const KnobSpec& s) {
  QString text = KnobEditModel::formatValue(s.min) + QStringLiteral(" to ") + KnobEditModel::formatValue(s.max);
  if (s.integer) text += QStringLiteral(", whole numbers");
  return text;
}

// Beside the field: the unit alone (the slider under it spans the range; the tooltip states it).
QString unitText(const KnobSpec& s) { return fromView(s.unit); }

// A knob's name or unit that may wrap after "_" or "/" (a zero-width space there): the longest
// name, decode_active_request_weight, on one line would widen a 320-pixel dock past its edge.
QString wrappable(QString text) {
  text.replace(QLatin1Char('_'), QStringLiteral("_\u200B"));
  text.replace(QLatin1Char('/'), QStringLiteral("/\u200B"));
  return text;
}

QString describe(const KnobSpec& s) {
  return QStringLiteral("%1 (%2): %3. Range %4; default %5.")
      .arg(fromView(s.name), fromView(s.unit), fromView(s.description), rangeText(s),
           KnobEditModel::formatValue(s.default_value));
}

QString describeChange(const std::map<std::string, double>& knobs, const std::optional<std::string>& policy) {
  QStringList parts;
  for (const auto& [name, value] : knobs)
    parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(name), KnobEditModel::formatValue(value));
  if (policy) parts << QStringLiteral("policy %1").arg(QString::fromStdString(*policy));
  return parts.join(QStringLiteral(", "));
}

// The policies that read a knob, as one group's key ("" for the knobs every policy reads).
// The name and unit columns' widths at most (longer ones wrap), so a 320-pixel dock fits a line.
constexpr int kNameColumn = 104;
constexpr int kUnitColumn = 40;

std::string readersKey(const KnobSpec& s) {
  std::string key;
  for (std::string_view p : policiesReading(s.id)) key += (key.empty() ? "" : ", ") + std::string(p);
  return key;
}

}  // namespace

KnobsPanel::KnobsPanel(ViewState& view, QWidget* parent) : TelemetryPanel(view, parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(4);  // every pixel of a short dock goes to the knob list
  source_note_ = new QLabel(this);
  source_note_->setObjectName(QStringLiteral("sourceNote"));
  source_note_->setWordWrap(true);
  layout->addWidget(source_note_);

  auto* policy_row = new QHBoxLayout;
  auto* policy_label = new QLabel(tr("Routing policy"), this);
  policy_ = new QComboBox(this);
  policy_->setObjectName(QStringLiteral("policy"));
  for (const PolicySpec* spec : policySpecs()) {
    policy_->addItem(fromView(spec->name));
    policy_->setItemData(policy_->count() - 1, fromView(spec->description), Qt::ToolTipRole);
  }
  policy_->setToolTip(
      tr("The policy that scores every decode worker for each request (ARCHITECTURE.md D3). "
         "A change is sent with Apply, after the knobs."));
  policy_label->setBuddy(policy_);
  policy_state_ = new QLabel(this);
  policy_row->addWidget(policy_label);
  policy_row->addWidget(policy_, 1);
  policy_row->addWidget(policy_state_);
  layout->addLayout(policy_row);
  connect(policy_, &QComboBox::activated, this, &KnobsPanel::onPolicyActivated);

  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(buildKnobGroups());
  layout->addWidget(scroll, 1);

  // What the knob in focus does; hidden until one is (its line is a knob's line in a short dock).
  description_ = new QLabel(this);
  description_->setObjectName(QStringLiteral("description"));
  description_->setWordWrap(true);
  description_->hide();
  layout->addWidget(description_);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("status"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(status_);

  // Many knobs, a short dock: part of a name or of what it does lists only those. Beside the
  // buttons, not a line of its own: at 1280x800 a line is a knob.
  auto* buttons = new QHBoxLayout;
  filter_ = new QLineEdit(this);
  filter_->setObjectName(QStringLiteral("knobFilter"));
  filter_->setPlaceholderText(tr("Filter knobs"));
  filter_->setToolTip(tr("List only the knobs whose name, description or unit hold this text"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, this, &KnobsPanel::applyFilter);
  buttons->addWidget(filter_, 1);
  revert_ = new QPushButton(tr("Revert"), this);
  revert_->setObjectName(QStringLiteral("revert"));
  revert_->setToolTip(tr("Drop the edits that have not been sent"));
  apply_ = new QPushButton(tr("Apply"), this);
  apply_->setObjectName(QStringLiteral("apply"));
  apply_->setToolTip(tr("Send every edit to the run in one change: all of them are applied or none"));
  apply_->setDefault(true);
  buttons->addWidget(revert_);
  buttons->addWidget(apply_);
  layout->addLayout(buttons);
  connect(apply_, &QPushButton::clicked, this, &KnobsPanel::apply);
  connect(revert_, &QPushButton::clicked, this, &KnobsPanel::revert);

  render(false);
}

KnobsPanel::~KnobsPanel() = default;

// A knob's two grid lines from `line` on: name, slider, field and unit, then the message that says
// why a text is refused. Rows are captured by reference in their handlers (rows_ is reserved).
void KnobsPanel::addKnobRow(const KnobSpec& s, QGroupBox& box, QGridLayout& grid, int line, int field_width) {
  KnobRow& row = rows_.emplace_back();
  row.name = std::string(s.name);
  const QString name = fromView(s.name);
  const QString tooltip = QStringLiteral("<b>%1</b> (%2)<br/>%3<br/>Range %4; default %5.")
                              .arg(name, fromView(s.unit), fromView(s.description).toHtmlEscaped(), rangeText(s),
                                   KnobEditModel::formatValue(s.default_value));
  auto* label = new QLabel(wrappable(name), &box);
  label->setWordWrap(true);
  label->setToolTip(tooltip);
  row.label = label;
  row.haystack = name + QLatin1Char(' ') + fromView(s.description) + QLatin1Char(' ') + fromView(s.unit);
  row.field = new QLineEdit(&box);
  row.field->setObjectName(QStringLiteral("knob:") + name);
  row.field->setMinimumWidth(field_width);
  row.field->setToolTip(tooltip);
  row.field->setProperty("knobDescription", describe(s));
  row.field->installEventFilter(this);
  label->setBuddy(row.field);
  auto* unit = new QLabel(wrappable(unitText(s)), &box);
  unit->setWordWrap(true);
  unit->setToolTip(tooltip);
  row.unit = unit;
  row.message = new QLabel(&box);
  row.message->setObjectName(QStringLiteral("message:") + name);
  row.message->setWordWrap(true);
  QPalette message_palette = row.message->palette();
  message_palette.setColor(QPalette::WindowText, kErrorText);
  row.message->setPalette(message_palette);
  row.message->hide();
  row.slider = new KnobSlider(s, &box);
  row.slider->setObjectName(QStringLiteral("slider:") + name);
  row.slider->setToolTip(tooltip + (row.slider->logarithmic() ? tr("<br/>Logarithmic slider.") : QString()));
  // One line a knob (name, slider, field, unit), so a short dock lists eight or more; the message
  // under it shows only while the text is refused.
  row.slider->setMinimumWidth(32);
  grid.addWidget(label, line, 0);
  grid.addWidget(row.slider, line, 1);
  grid.addWidget(row.field, line, 2);
  grid.addWidget(unit, line, 3);
  grid.addWidget(row.message, line + 1, 0, 1, 4);
  connect(row.field, &QLineEdit::textEdited, this, [this, &row](const QString& text) { onFieldEdited(row, text); });
  connect(row.slider, &KnobSlider::knobValueChosen, this, [this, &row](double value) {
    const QString text = KnobEditModel::formatValue(value);
    row.field->setText(text);
    onFieldEdited(row, text);
  });
  connect(row.slider, &QSlider::sliderReleased, this, &KnobsPanel::editFinished);  // the drag's value, previewed
  // Enter ends the edit and leaves the field; what it changes is previewed, and only Apply sends it.
  connect(row.field, &QLineEdit::returnPressed, this, [this, &row] {
    row.field->clearFocus();
    emit editFinished();
  });
}

QWidget* KnobsPanel::buildKnobGroups() {
  auto* container = new QWidget;
  auto* column = new QVBoxLayout(container);
  // One group per set of policies that read the knobs, in the knob registry's order (kv-aware
  // first, then the admission and cluster knobs every policy shares, then the other policies' own).
  std::vector<std::string> group_keys;
  for (const KnobSpec& s : KnobRegistry::specs())
    if (std::find(group_keys.begin(), group_keys.end(), readersKey(s)) == group_keys.end())
      group_keys.push_back(readersKey(s));
  rows_.reserve(KnobRegistry::specs().size());  // rows are captured by reference in their handlers

  // The same column widths in every group, so the fields line up down the whole panel.
  const QFontMetrics metrics = fontMetrics();
  int name_width = 0, unit_width = 0;
  for (const KnobSpec& s : KnobRegistry::specs()) {
    name_width = std::max(name_width, metrics.horizontalAdvance(fromView(s.name)));
    unit_width = std::max(unit_width, metrics.horizontalAdvance(unitText(s)));
  }
  const int field_width = metrics.horizontalAdvance(QStringLiteral("000000")) + 10;  // wider when the dock is

  for (const std::string& key : group_keys) {
    KnobGroup group;
    for (const KnobSpec& s : KnobRegistry::specs())
      if (readersKey(s) == key) {
        for (std::string_view p : policiesReading(s.id)) group.policies.emplace_back(p);
        break;
      }
    group.title = group.policies.empty() ? tr("Admission, transfers and pools (every policy)")
                                         : tr("Read by %1").arg(QString::fromStdString(key));
    group.box = new QGroupBox(container);
    auto* grid = new QGridLayout(group.box);
    group.heading = new QLabel(group.title, group.box);
    group.heading->setWordWrap(true);
    QFont bold = group.heading->font();
    bold.setBold(true);
    group.heading->setFont(bold);
    grid->addWidget(group.heading, 0, 0, 1, 4);
    // The same column widths in every group, so the sliders and fields line up down the panel; the
    // slider takes what the dock has left.
    grid->setColumnMinimumWidth(0, std::min(name_width, kNameColumn));
    grid->setColumnMinimumWidth(2, field_width);
    grid->setColumnMinimumWidth(3, std::min(unit_width, kUnitColumn));
    grid->setColumnStretch(1, 1);
    grid->setVerticalSpacing(2);
    grid->setContentsMargins(6, 4, 6, 4);
    int line = 1;  // under the heading
    for (const KnobSpec& s : KnobRegistry::specs()) {
      if (readersKey(s) != key) continue;
      group.rows.push_back(rows_.size());
      addKnobRow(s, *group.box, *grid, line, field_width);
      line += 2;
    }
    column->addWidget(group.box);
    groups_.push_back(std::move(group));
  }
  column->addStretch(1);
  return container;
}

void KnobsPanel::setSource(Source* source) {
  if (source == source_) return;
  source_ = source;
  // Acknowledgements still in flight belong to the old run.
  ++ticket_;
  model_.forgetPending();
  result_text_.clear();
  render(false);
}

bool KnobsPanel::editable() const { return source_ && source_->control() && source_->capabilities().knobs; }

void KnobsPanel::refresh(const TelemetryStore& store) {
  const bool editable_now = editable();
  if (store.knobs() == last_knobs_ && store.policy() == last_policy_ && editable_now == last_editable_) return;
  last_knobs_ = store.knobs();
  last_policy_ = store.policy();
  model_.setCurrent(last_knobs_, last_policy_);
  render(false);
}

void KnobsPanel::onFieldEdited(KnobRow& row, const QString& text) {
  model_.edit(row.name, text);
  renderRow(row, false);
  renderStatus();
  emit editsChanged();
}

bool KnobsPanel::setPendingValue(const std::string& knob, double value) {
  if (!editable()) return false;
  for (KnobRow& row : rows_) {
    if (row.name != knob) continue;
    const QString text = KnobEditModel::formatValue(value);
    row.field->setText(text);
    onFieldEdited(row, text);
    return true;
  }
  return false;
}

bool KnobsPanel::setPendingPolicy(const std::string& policy) {
  const int index = policy_->findText(QString::fromStdString(policy));
  if (!editable() || !policy_->isEnabled() || index < 0) return false;
  policy_->setCurrentIndex(index);
  onPolicyActivated(index);
  return true;
}

void KnobsPanel::onPolicyActivated(int index) {
  model_.editPolicy(policy_->itemText(index).toStdString());
  renderPolicy(false);
  renderGroups();
  renderStatus();
  emit editsChanged();
}

template <typename Handler>
auto KnobsPanel::onGuiThread(std::uint64_t ticket, Handler handler) {
  return [guard = QPointer<KnobsPanel>(this), ticket, handler](const KnobRegistry::Result& result) {
    QCoreApplication* app = QCoreApplication::instance();
    if (!app) return;
    // The guard is only read on the GUI thread, where the panel is destroyed.
    QMetaObject::invokeMethod(
        app,
        [guard, ticket, handler, ok = result.ok, message = QString::fromStdString(result.error)] {
          if (guard) (guard.data()->*handler)(ticket, ok, message);
        },
        Qt::QueuedConnection);
  };
}

bool KnobsPanel::sliderHeld() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const KnobRow& r) { return r.slider->isSliderDown(); });
}

void KnobsPanel::apply() {
  if (!editable() || !model_.canApply()) return;  // an invalid field sends nothing at all
  if (apply_check_)
    if (const QString why_not = apply_check_(); !why_not.isEmpty()) {
      result_text_ = why_not;
      result_is_error_ = true;
      renderStatus();
      return;
    }
  const KnobEditModel::Change change = model_.takeEdits();
  sent_ = describeChange(change.knobs, change.policy);
  sent_knobs_ = !change.knobs.empty();
  result_text_.clear();
  const std::uint64_t ticket = ++ticket_;
  // Knobs first, in one all-or-nothing call; the policy follows only if the run took them, so a
  // refusal leaves the run exactly as it was.
  if (!change.knobs.empty())
    source_->control()->applyKnobs(change.knobs, consoleAuthor(), onGuiThread(ticket, &KnobsPanel::onKnobsDone));
  else
    sendPolicy(ticket);
  // What the change does is ahead, not in the window the operator was reading (a finding's, say).
  view().setFollowLive(true);
  render(false);
  emit editsChanged();
}

void KnobsPanel::sendPolicy(std::uint64_t ticket) {
  source_->control()->setPolicy(*model_.pendingPolicy(), consoleAuthor(),
                                onGuiThread(ticket, &KnobsPanel::onPolicyDone));
}

void KnobsPanel::onKnobsDone(std::uint64_t ticket, bool ok, const QString& error) {
  if (ticket != ticket_) return;
  if (!ok) {
    model_.refused();
    result_text_ = tr("Refused by the run: %1. Nothing was changed; your edits are kept.").arg(error);
    result_is_error_ = true;
  } else {
    model_.knobsAccepted();
    if (model_.pendingPolicy()) {
      sendPolicy(ticket);
    } else {
      result_text_ = tr("Applied: %1.").arg(sent_);
      result_is_error_ = false;
    }
  }
  render(false);
}

void KnobsPanel::onPolicyDone(std::uint64_t ticket, bool ok, const QString& error) {
  if (ticket != ticket_) return;
  if (ok) {
    model_.policyAccepted();
    result_text_ = tr("Applied: %1.").arg(sent_);
    result_is_error_ = false;
  } else {
    model_.refused();
    result_text_ = sent_knobs_ ? tr("The knobs were applied, but the run refused the policy: %1").arg(error)
                               : tr("Refused by the run: %1").arg(error);
    result_is_error_ = true;
  }
  render(false);
}

void KnobsPanel::revert() {
  model_.revert();
  result_text_.clear();
  render(true);
  emit editsChanged();
}

bool KnobsPanel::eventFilter(QObject* watched, QEvent* event) {
  const bool field = watched->property("knobDescription").isValid();
  if (field && (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress)) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Space && key->modifiers() == Qt::NoModifier) {
      // A number has no spaces: Space stays the console's pause even in a knob field. Not taken
      // here as an override, the window's shortcut gets it; a key press that still comes types nothing.
      event->ignore();
      return true;
    }
    if (key->key() == Qt::Key_Escape && event->type() == QEvent::KeyPress) {
      static_cast<QWidget*>(watched)->clearFocus();  // leaves the field; the edit stays pending
      return true;
    }
  }
  if (event->type() == QEvent::FocusIn) {
    const QVariant text = watched->property("knobDescription");
    if (text.isValid()) {
      description_->setText(text.toString());
      description_->show();
    }
  } else if (event->type() == QEvent::FocusOut) {
    // The run may have changed this knob while the operator sat in the field: show it now.
    for (KnobRow& row : rows_)
      if (row.field == watched) renderRow(row, true);
  }
  return TelemetryPanel::eventFilter(watched, event);
}

QString KnobsPanel::readOnlyReason() const { return editable() ? QString() : source_note_->text(); }

void KnobsPanel::render(bool force) {
  const bool can_edit = editable();
  const bool changed = can_edit != last_editable_;
  last_editable_ = can_edit;
  if (!source_) {
    source_note_->setText(tr("No run attached: the knobs are shown read-only."));
  } else if (!can_edit) {
    source_note_->setText(tr("%1 takes no knob or policy changes: the values it reports are shown read-only.")
                              .arg(QString::fromStdString(source_->description())));
  }
  source_note_->setVisible(!can_edit);
  for (KnobRow& row : rows_) renderRow(row, force);
  renderPolicy(force);
  renderGroups();
  renderStatus();
  if (changed) emit editableChanged(can_edit);
}

void KnobsPanel::renderRow(KnobRow& row, bool force) {
  const KnobFieldState state = model_.state(row.name);
  row.field->setReadOnly(!editable());
  // Never pull text from under the operator's cursor ("0.950" is a valid way to type 0.95); only
  // Revert does, on purpose.
  const bool typing = !force && row.field->hasFocus();
  const QString text = model_.displayText(row.name);
  if (!typing && row.field->text() != text) row.field->setText(text);
  row.slider->setEnabled(editable());
  bool number = false;
  const double shown = row.field->text().toDouble(&number);
  if (number && !row.slider->isSliderDown()) row.slider->showValue(shown);

  const char* state_name = toString(state);
  if (row.field->property("knobState").toString() != QLatin1String(state_name)) {
    row.field->setProperty("knobState", QString::fromLatin1(state_name));
    QPalette p = palette();
    const QColor base = p.color(QPalette::Base);
    switch (state) {
      case KnobFieldState::Invalid:
        p.setColor(QPalette::Base, mixHue(base, kInvalidHue, 0.35));
        break;
      case KnobFieldState::Edited:
        p.setColor(QPalette::Base, mixHue(base, kEditedHue, 0.25));
        break;
      case KnobFieldState::Pending:
        p.setColor(QPalette::Base, mixHue(base, p.color(QPalette::Highlight), 0.3));
        break;
      case KnobFieldState::Current:
        break;
    }
    row.field->setPalette(p);
    // Not by colour alone: an edit is bold, a pending value italic, an invalid one has its message.
    QFont font = row.field->font();
    font.setBold(state == KnobFieldState::Edited || state == KnobFieldState::Invalid);
    font.setItalic(state == KnobFieldState::Pending);
    row.field->setFont(font);
  }
  const QString message = model_.message(row.name);
  if (row.message->text() != message) row.message->setText(message);
  row.message->setVisible(!message.isEmpty() && !row.filtered_out);
}

// A knob is listed when its name, what it does or its unit holds the filter's text (any case); a
// group with none listed is hidden whole. An edited knob is always listed: an edit never hides.
void KnobsPanel::applyFilter(const QString& text) {
  const QString needle = text.trimmed();
  for (KnobGroup& group : groups_) {
    bool any = false;
    for (std::size_t index : group.rows) {
      KnobRow& row = rows_[index];
      const KnobFieldState state = model_.state(row.name);
      row.filtered_out =
          !needle.isEmpty() && !row.haystack.contains(needle, Qt::CaseInsensitive) && state == KnobFieldState::Current;
      for (QWidget* w : {static_cast<QWidget*>(row.label), static_cast<QWidget*>(row.field),
                         static_cast<QWidget*>(row.slider), static_cast<QWidget*>(row.unit)})
        w->setVisible(!row.filtered_out);
      renderRow(row, false);
      any = any || !row.filtered_out;
    }
    group.box->setVisible(any);
  }
}

int KnobsPanel::listedKnobs() const {
  return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const KnobRow& r) { return !r.filtered_out; }));
}

void KnobsPanel::renderPolicy(bool force) {
  policy_->setEnabled(editable());
  const QString shown = QString::fromStdString(model_.displayPolicy());
  // Leave an open list alone: the operator is choosing.
  if (force || !policy_->view()->isVisible()) {
    int index = policy_->findText(shown);
    if (index < 0 && !shown.isEmpty()) {
      policy_->addItem(shown);  // a policy the run knows but this build does not list
      index = policy_->count() - 1;
    }
    if (policy_->currentIndex() != index) policy_->setCurrentIndex(index);
  }
  policy_state_->setText(model_.policyPending() ? tr("pending…") : model_.policyEdited() ? tr("edited") : QString());
}

void KnobsPanel::renderGroups() {
  const std::string policy = model_.displayPolicy();
  for (KnobGroup& group : groups_) {
    const bool read = group.policies.empty() || policy.empty() ||
                      std::find(group.policies.begin(), group.policies.end(), policy) != group.policies.end();
    // Still editable: an operator may set a policy's knobs before switching to it.
    const QString title =
        read ? group.title : tr("%1 (inactive under %2)").arg(group.title, QString::fromStdString(policy));
    if (group.heading->text() != title) group.heading->setText(title);
  }
}

void KnobsPanel::renderStatus() {
  QStringList lines;
  if (model_.pending())
    lines << tr("Pending: %1, waiting for the run to acknowledge.")
                 .arg(describeChange(model_.pendingKnobs(), model_.pendingPolicy()));
  if (!result_text_.isEmpty()) lines << result_text_;
  if (model_.hasEdits()) {
    QStringList edits;
    for (const KnobRow& row : rows_)
      if (model_.state(row.name) != KnobFieldState::Current && model_.state(row.name) != KnobFieldState::Pending)
        edits << QStringLiteral("%1 = %2").arg(QString::fromStdString(row.name), model_.displayText(row.name));
    if (model_.policyEdited()) edits << tr("policy %1").arg(QString::fromStdString(model_.displayPolicy()));
    lines << tr("Edited, not sent: %1.").arg(edits.join(QStringLiteral(", ")));
  }
  if (model_.hasInvalid()) lines << tr("Correct the fields marked invalid: nothing is sent while one is.");
  const QString text = lines.join(QLatin1Char('\n'));
  if (status_->text() != text) status_->setText(text);
  QPalette p = palette();
  if (result_is_error_ && !result_text_.isEmpty()) p.setColor(QPalette::WindowText, kErrorText);
  status_->setPalette(p);
  apply_->setEnabled(editable() && model_.canApply());
  revert_->setEnabled(model_.hasEdits());
}

}  // namespace kvscope
