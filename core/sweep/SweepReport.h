#pragma once
// A sweep's results as text: summary.md (the tables a person reads), summary.csv (one row per point
// and metric, for a spreadsheet) and summary.json (everything, for a program). The same numbers in
// all three, from one SweepAnalysis.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepData.h"

namespace kvscope {

class SweepReport {
 public:
  SweepReport(const SweepData& data, const SweepAnalysis& analysis) : data_(data), a_(analysis) {}

  std::string markdown() const;
  std::string csv() const;
  nlohmann::json json() const;

  // Writes DIR/summary.md, summary.csv and summary.json as one set (AtomicFile::writeSet). False with `error`.
  bool writeAll(const std::string& dir, std::string* error) const;

 private:
  std::string meanCell(std::size_t point, std::size_t metric) const;
  std::string changeCell(std::size_t point, std::size_t metric) const;
  std::string pCell(std::size_t point, std::size_t metric) const;
  std::string verdictCell(std::size_t point, std::size_t metric) const;
  std::string testCell(std::size_t point, std::size_t metric) const;
  std::string smallestPCell(std::size_t point, std::size_t metric) const;
  std::string wilcoxonCell(std::size_t point, std::size_t metric) const;
  std::string pairsCell(std::size_t point, std::size_t metric) const;
  std::string perWorkerTable() const;
  std::string baselineLabel() const;
  std::string twoPolicyTable() const;

  const SweepData& data_;
  const SweepAnalysis& a_;
};

}  // namespace kvscope
