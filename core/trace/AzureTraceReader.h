#pragma once
// Reads an Azure LLM inference trace (2023): CSV `TIMESTAMP,ContextTokens,GeneratedTokens`.
// It has no sessions and no prefix hashes, so every prompt is unique.
#include <string>

#include "core/model/Workload.h"
#include "core/trace/TraceOptions.h"

namespace kvscope {

class AzureTraceReader {
 public:
  // Every row becomes a one-turn session starting at its offset from the earliest row's time.
  static Workload read(const std::string& path, const TraceOptions& options);
};

}  // namespace kvscope
