#pragma once
// The event timeline's rows when a cluster has many workers. The store has a row per decode worker,
// prefill worker and link (64 D + 16 P + 1024 links in a 16 x 64 cluster): past kGroupAbove rows,
// each section longer than kSectionFlat is folded into collapsible groups ("D0-D15", "D16-D31",
// "P0-P15", "P3->D*" for a prefill worker's links), and an event on a member is drawn on its
// group's row (the timeline folds the cell as for any row, so a group row is the union of its
// members' glyphs). Expanding a group lists its members under it.
#include <string>
#include <vector>

#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

class TimelineRowGroups {
 public:
  static constexpr std::size_t kGroupAbove = 40;
  static constexpr std::size_t kSectionFlat = 8;
  static constexpr std::size_t kGroupSize = 16;

  // The store's rows; true when the shown rows changed.
  bool setRows(const std::vector<TimelineRow>& rows);
  // Shown rows, top to bottom: a group's header reads "▸ D0-D15 (16)" collapsed, "▾ ..." open.
  const std::vector<std::string>& names() const { return names_; }
  // Shown rows where the next section (decode, prefill, links) begins, for the dividers.
  const std::vector<int>& sectionStarts() const { return section_starts_; }
  // The shown row an event on store row `store_row` is drawn on (-1 for -1 or out of range).
  int displayOf(int store_row) const {
    return store_row >= 0 && static_cast<std::size_t>(store_row) < display_of_.size()
               ? display_of_[static_cast<std::size_t>(store_row)]
               : -1;
  }
  bool grouped() const { return !groups_.empty(); }
  // The group a shown row heads, -1 when it is a plain row.
  int groupAt(int display_row) const;
  // Opens or closes the group headed by `display_row`; false when it is not a group header.
  bool toggle(int display_row);
  void setExpanded(int group, bool expanded);
  int groupCount() const { return static_cast<int>(groups_.size()); }
  const std::string& groupLabel(int group) const { return groups_[static_cast<std::size_t>(group)].label; }
  // Store rows of a group's members.
  std::vector<int> members(int group) const;

 private:
  struct Group {
    std::string label;
    int first = 0, count = 0;  // store rows [first, first + count)
    bool expanded = false;
  };
  void layout();

  std::vector<TimelineRow> rows_;
  std::vector<Group> groups_;
  std::vector<int> group_of_;  // per store row: its group or -1
  std::vector<std::string> names_;
  std::vector<int> header_of_;  // per shown row: the group it heads or -1
  std::vector<int> display_of_;
  std::vector<int> section_starts_;
};

}  // namespace kvscope
