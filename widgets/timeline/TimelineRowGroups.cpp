#include "widgets/timeline/TimelineRowGroups.h"

#include <algorithm>
#include <map>

namespace kvscope {

namespace {
// "P3->D12" -> "P3": links are grouped by their prefill end.
std::string prefillOf(const std::string& link) {
  const auto arrow = link.find("->");
  return arrow == std::string::npos ? link : link.substr(0, arrow);
}
}  // namespace

bool TimelineRowGroups::setRows(const std::vector<TimelineRow>& rows) {
  const bool same = rows.size() == rows_.size() &&
                    std::equal(rows.begin(), rows.end(), rows_.begin(), [](const TimelineRow& a, const TimelineRow& b) {
                      return a.kind == b.kind && a.name == b.name;
                    });
  if (same) return false;
  // Keep open what was open (by label) when the rows grow (a new link appears).
  std::map<std::string, bool> open;
  for (const Group& g : groups_) open[g.label] = g.expanded;
  rows_ = rows;
  groups_.clear();
  group_of_.assign(rows_.size(), -1);
  if (rows_.size() > kGroupAbove) {
    std::size_t start = 0;
    while (start < rows_.size()) {
      std::size_t end = start;
      while (end < rows_.size() && rows_[end].kind == rows_[start].kind) ++end;
      if (end - start > kSectionFlat) {
        std::size_t i = start;
        while (i < end) {
          std::size_t j = i;
          if (rows_[start].kind == TimelineRow::Link) {
            const std::string p = prefillOf(rows_[i].name);
            while (j < end && j - i < 4 * kGroupSize && prefillOf(rows_[j].name) == p) ++j;
          } else {
            j = std::min(end, i + kGroupSize);
          }
          Group g;
          g.first = static_cast<int>(i);
          g.count = static_cast<int>(j - i);
          g.label = rows_[start].kind == TimelineRow::Link ? prefillOf(rows_[i].name) + "->D*"
                                                           : rows_[i].name + "-" + rows_[j - 1].name;
          g.expanded = open.count(g.label) ? open[g.label] : false;
          for (std::size_t k = i; k < j; ++k) group_of_[k] = static_cast<int>(groups_.size());
          groups_.push_back(std::move(g));
          i = j;
        }
      }
      start = end;
    }
  }
  layout();
  return true;
}

void TimelineRowGroups::layout() {
  names_.clear();
  header_of_.clear();
  section_starts_.clear();
  display_of_.assign(rows_.size(), -1);
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (i > 0 && rows_[i].kind != rows_[i - 1].kind) section_starts_.push_back(static_cast<int>(names_.size()));
    const int g = group_of_[i];
    if (g < 0) {
      display_of_[i] = static_cast<int>(names_.size());
      names_.push_back(rows_[i].name);
      header_of_.push_back(-1);
      continue;
    }
    const Group& group = groups_[static_cast<std::size_t>(g)];
    if (static_cast<int>(i) == group.first) {
      names_.push_back((group.expanded ? "\u25BE " : "\u25B8 ") + group.label + " (" + std::to_string(group.count) +
                       ")");
      header_of_.push_back(g);
    }
    if (group.expanded) {
      display_of_[i] = static_cast<int>(names_.size());
      names_.push_back("  " + rows_[i].name);
      header_of_.push_back(-1);
    } else {
      display_of_[i] = static_cast<int>(names_.size()) - 1;  // the header: the group's union
    }
  }
}

int TimelineRowGroups::groupAt(int display_row) const {
  return display_row >= 0 && static_cast<std::size_t>(display_row) < header_of_.size()
             ? header_of_[static_cast<std::size_t>(display_row)]
             : -1;
}

bool TimelineRowGroups::toggle(int display_row) {
  const int g = groupAt(display_row);
  if (g < 0) return false;
  setExpanded(g, !groups_[static_cast<std::size_t>(g)].expanded);
  return true;
}

void TimelineRowGroups::setExpanded(int group, bool expanded) {
  groups_[static_cast<std::size_t>(group)].expanded = expanded;
  layout();
}

std::vector<int> TimelineRowGroups::members(int group) const {
  std::vector<int> out;
  const Group& g = groups_[static_cast<std::size_t>(group)];
  for (int i = 0; i < g.count; ++i) out.push_back(g.first + i);
  return out;
}

}  // namespace kvscope
