#pragma once
// Reads two recordings for the compare view (ComparedRun): B whole into a store, and both summarised
// as `report` and `compare` summarise them. One pass over each file; on a worker thread in the
// console (a 64-D hour takes a second or two).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/telemetry/ComparedRun.h"

namespace kvscope {

struct ComparedRunLoad {
  std::shared_ptr<const ComparedRun> run;
  std::vector<std::string> warnings;  // damage found in either file ("b.kvrec: ...")
};

// What B is beyond its file: a label and, for a counterfactual, its baseline (ComparedRun).
struct ComparedRunContext {
  std::string b_label;
  std::optional<RunSummary> base;
  std::string base_label;
};

// Throws InputError naming the file that cannot be read as a recording.
ComparedRunLoad loadComparedRun(const std::string& path_a, const std::string& path_b,
                                const ComparedRunContext& context = {});

}  // namespace kvscope
