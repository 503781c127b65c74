#pragma once
// Writers that turn an event stream into files people open elsewhere: CSV (a spreadsheet), JSON
// lines (jq, pandas) and Chrome trace JSON (Perfetto / chrome://tracing). Each is an EventSink
// that writes to `path.partial` and renames on finish(), so a failed export leaves nothing behind.
#include <fstream>
#include <memory>
#include <string>

#include "events/Event.h"

namespace kvscope {

class EventExporter : public EventSink {
 public:
  enum class Format { Csv, JsonLines, ChromeTrace };
  static std::unique_ptr<EventExporter> create(Format format, const std::string& path);  // throws InputError
  static bool parseFormat(const std::string& name, Format& out);

  ~EventExporter() override;
  // Completes the file and moves it into place; false (with `error`) on an I/O failure.
  bool finish(std::string* error);

 protected:
  explicit EventExporter(std::string path);
  virtual void writeFooter() {}
  std::ofstream out_;

 private:
  std::string path_, partial_;
  bool finished_ = false;
};

}  // namespace kvscope
