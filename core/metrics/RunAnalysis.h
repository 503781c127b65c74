#pragma once
// The summary and the diagnosis of one run, fed from its event stream: what `simulate` prints at
// the end of a run and `report` computes from a recording - the same code, so they agree.
#include "core/diagnosis/DiagnosisEngine.h"
#include "core/metrics/SummaryCollector.h"

namespace kvscope {

class RunAnalysis : public EventSink {
 public:
  void onEvent(const Event& e) override {
    summary_.onEvent(e);
    diagnosis_.onEvent(e);
  }
  RunSummary summary() const {
    RunSummary s = summary_.summary();
    s.diagnosis = diagnosis_.findings();
    return s;
  }

 private:
  SummaryCollector summary_;
  DiagnosisEngine diagnosis_;
};

}  // namespace kvscope
