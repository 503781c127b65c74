#pragma once
// Writers that turn an event stream into files people open elsewhere: CSV (a spreadsheet), JSON
// lines (jq, pandas) and Chrome trace JSON (Perfetto / chrome://tracing). Each is an EventSink
// that writes to a hidden temporary beside the file and renames it on finish(), so a failed export
// leaves nothing behind; the file must be a regular one (AtomicFile::target). Path "-" is standard
// output, written as it goes; a failed write to it fails finish().
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include <vector>

#include "core/events/Event.h"
#include "core/io/TemporaryFiles.h"
#include "core/run/RunNotes.h"

namespace kvscope {

class EventExporter : public EventSink {
 public:
  enum class Format { Csv, JsonLines, ChromeTrace };
  static std::unique_ptr<EventExporter> create(Format format, const std::string& path);  // throws InputError
  static bool parseFormat(const std::string& name, Format& out);

  ~EventExporter() override;
  // An operator's notes on the run (RunNotes), written among the events at their times: a JSON line
  // or CSV row of kind "note", a global instant event in a Chrome trace.
  void setNotes(std::vector<RunNote> notes);
  void onEvent(const Event& e) final;
  // Completes the file and moves it into place; false (with `error`) on an I/O failure.
  bool finish(std::string* error);

 protected:
  explicit EventExporter(std::string path);
  virtual void write(const Event& e) = 0;
  virtual void writeNote(const RunNote& note) = 0;
  virtual void writeFooter() {}
  std::ostream out_{nullptr};  // the file's buffer, or standard output's

 private:
  std::filebuf file_;
  std::string path_, partial_;                                   // partial_ empty for standard output
  std::unique_ptr<TemporaryFiles::Guard> removed_on_interrupt_;  // partial_, on Ctrl+C or SIGTERM
  bool finished_ = false;
  std::vector<RunNote> notes_;
  std::size_t next_note_ = 0;
};

}  // namespace kvscope
