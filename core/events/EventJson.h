#pragma once
// Events as JSON objects (one per line in --events files and `export --format jsonl`).
#include <fstream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "events/Event.h"

namespace kvscope {

nlohmann::json eventToJson(const Event& e);

// Writes each event as one JSON line. Writes to `path.partial` and renames on close, so a failed
// run never leaves a half-written file under the requested name.
class JsonLinesWriter : public EventSink {
 public:
  explicit JsonLinesWriter(std::string path);
  ~JsonLinesWriter() override;
  void onEvent(const Event& e) override;
  // Flushes and moves the file into place; returns false (with `error`) on an I/O failure.
  bool close(std::string* error = nullptr);

 private:
  std::string path_;
  std::string partial_;
  std::ofstream out_;
  bool closed_ = false;
};

}  // namespace kvscope
