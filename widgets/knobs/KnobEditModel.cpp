#include "widgets/knobs/KnobEditModel.h"

#include "core/knobs/KnobRegistry.h"

namespace kvscope {

const char* toString(KnobFieldState s) {
  switch (s) {
    case KnobFieldState::Current:
      return "current";
    case KnobFieldState::Edited:
      return "edited";
    case KnobFieldState::Invalid:
      return "invalid";
    case KnobFieldState::Pending:
      return "pending";
  }
  return "?";
}

QString KnobEditModel::formatValue(double v) {
  // 12 significant digits show every registry value exactly and hide binary noise (0.1 + 0.2).
  return QString::number(v, 'g', 12);
}

double KnobEditModel::baseline(const std::string& knob) const {
  if (auto it = pending_.find(knob); it != pending_.end()) return it->second;
  if (auto it = accepted_.find(knob); it != accepted_.end()) return it->second.value;
  return current(knob);
}

double KnobEditModel::current(const std::string& knob) const {
  if (auto it = current_.find(knob); it != current_.end()) return it->second;
  if (auto id = KnobRegistry::find(knob)) return KnobRegistry::spec(*id).default_value;
  return 0;
}

void KnobEditModel::setCurrent(const std::map<std::string, double>& knobs, const std::string& policy) {
  current_ = knobs;
  current_policy_ = policy;
  // The store takes over once it shows our value, or anything else (a later change by someone else).
  std::erase_if(accepted_, [&](const auto& entry) {
    const double now = current(entry.first);
    return now == entry.second.value || now != entry.second.store_value_then;
  });
  if (policy_accepted_ && (policy == policy_accepted_->first || policy != policy_accepted_->second))
    policy_accepted_.reset();
}

KnobFieldState KnobEditModel::edit(const std::string& knob, const QString& text) {
  Edit e;
  e.text = text;
  // The same parser and range check as `--set` and the Control RPC, so the messages match theirs.
  std::map<std::string, double> parsed;
  if (auto error = KnobRegistry::parseAssignment(knob + "=" + text.trimmed().toStdString(), parsed)) {
    e.error = QString::fromStdString(*error);
  } else {
    e.value = parsed.begin()->second;
    KnobRegistry scratch;
    const auto result = scratch.apply(parsed, {});
    if (!result.ok) e.error = QString::fromStdString(result.error);
  }
  if (e.error.isEmpty() && e.value == baseline(knob)) {
    edits_.erase(knob);
    return KnobFieldState::Current;
  }
  const bool valid = e.error.isEmpty();
  edits_[knob] = std::move(e);
  return valid ? KnobFieldState::Edited : KnobFieldState::Invalid;
}

void KnobEditModel::editPolicy(const std::string& policy) {
  if (policy == displayPolicyWithoutEdit())
    policy_edit_.reset();
  else
    policy_edit_ = policy;
}

std::string KnobEditModel::displayPolicyWithoutEdit() const {
  if (policy_pending_) return *policy_pending_;
  if (policy_accepted_) return policy_accepted_->first;
  return current_policy_;
}

std::string KnobEditModel::displayPolicy() const { return policy_edit_ ? *policy_edit_ : displayPolicyWithoutEdit(); }

KnobFieldState KnobEditModel::state(const std::string& knob) const {
  if (auto it = edits_.find(knob); it != edits_.end())
    return it->second.error.isEmpty() ? KnobFieldState::Edited : KnobFieldState::Invalid;
  if (pending_.contains(knob)) return KnobFieldState::Pending;
  return KnobFieldState::Current;
}

QString KnobEditModel::message(const std::string& knob) const {
  auto it = edits_.find(knob);
  return it != edits_.end() ? it->second.error : QString();
}

QString KnobEditModel::displayText(const std::string& knob) const {
  if (auto it = edits_.find(knob); it != edits_.end()) return it->second.text;
  return formatValue(baseline(knob));
}

bool KnobEditModel::hasInvalid() const {
  for (const auto& [knob, e] : edits_)
    if (!e.error.isEmpty()) return true;
  return false;
}

KnobEditModel::Change KnobEditModel::edits() const {
  Change c;
  for (const auto& [name, e] : edits_)
    if (e.error.isEmpty()) c.knobs[name] = e.value;
  c.policy = policy_edit_;
  return c;
}

KnobEditModel::Change KnobEditModel::takeEdits() {
  Change change;
  if (!canApply()) return change;
  for (auto& [knob, e] : edits_) change.knobs[knob] = e.value;
  pending_ = change.knobs;
  edits_.clear();
  change.policy = policy_edit_;
  policy_pending_ = std::move(policy_edit_);
  policy_edit_.reset();
  return change;
}

void KnobEditModel::knobsAccepted() {
  for (const auto& [knob, value] : pending_) accepted_[knob] = Accepted{value, current(knob)};
  pending_.clear();
}

void KnobEditModel::policyAccepted() {
  if (policy_pending_) policy_accepted_.emplace(*policy_pending_, current_policy_);
  policy_pending_.reset();
}

void KnobEditModel::refused() {
  for (const auto& [knob, value] : pending_)
    if (!edits_.contains(knob)) edits_[knob] = Edit{formatValue(value), value, {}};
  pending_.clear();
  if (policy_pending_ && !policy_edit_) policy_edit_ = policy_pending_;
  policy_pending_.reset();
}

void KnobEditModel::revert() {
  edits_.clear();
  policy_edit_.reset();
}

void KnobEditModel::forgetPending() {
  pending_.clear();
  accepted_.clear();
  policy_pending_.reset();
  policy_accepted_.reset();
}

}  // namespace kvscope
