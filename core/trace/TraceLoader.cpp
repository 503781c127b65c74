#include "core/trace/TraceLoader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#include "core/model/Error.h"
#include "core/trace/AgenticSessionReader.h"
#include "core/trace/AzureTraceReader.h"
#include "core/trace/MooncakeTraceReader.h"

namespace kvscope {

namespace {

namespace fs = std::filesystem;

struct Registered {
  std::string extension, what;
  TraceReader reader;
};
std::vector<Registered>& registered() {
  static std::vector<Registered> formats;
  return formats;
}

std::string expected() {
  std::string list = "expected a .jsonl (Mooncake), .csv (Azure) or .json (kv-cache-tester) trace";
  for (const auto& r : registered()) list += ", " + r.what;
  return list + ", or a directory of .json sessions";
}

Workload loadDirectory(const std::string& path, const TraceOptions& options) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".json" && it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  if (ec) throw InputError(formatInputError(path, 0, "", "cannot list directory: " + ec.message()));
  if (files.empty())
    throw InputError(
        formatInputError(path, 0, "", "expected a directory of kv-cache-tester .json sessions, found none"));
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });

  Workload w;
  SessionId next = options.first_session_id;
  for (const auto& f : files) AgenticSessionReader::read(f.string(), options, next, w);
  return w;
}

Workload loadFile(const std::string& path, const TraceOptions& options) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".jsonl") return MooncakeTraceReader::read(path, options);
  if (ext == ".csv") return AzureTraceReader::read(path, options);
  if (ext == ".json") {
    Workload w;
    SessionId next = options.first_session_id;
    AgenticSessionReader::read(path, options, next, w);
    return w;
  }
  for (const auto& r : registered())
    if (r.extension == ext) return r.reader(path, options);
  const std::string found = ext.empty() ? "no extension" : "'" + ext + "'";
  throw InputError(formatInputError(path, 0, "", expected() + ", got " + found));
}

}  // namespace

void registerTraceReader(const std::string& extension, const std::string& what, TraceReader reader) {
  for (auto& r : registered())
    if (r.extension == extension) {
      r = Registered{extension, what, std::move(reader)};
      return;
    }
  registered().push_back(Registered{extension, what, std::move(reader)});
}

Workload loadTrace(const std::string& path, const TraceOptions& options) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (path.empty() || ec || !fs::exists(status))
    throw InputError(formatInputError(path, 0, "", "no such file or directory; " + expected()));
  Workload w = fs::is_directory(status) ? loadDirectory(path, options) : loadFile(path, options);
  // A run of nothing is a mistake (an empty or wrong file), not a result of 0 requests.
  if (w.turnCount() == 0)
    throw InputError(formatInputError(
        path, 0, "",
        "the trace holds no requests" + (w.skipped_records > 0 ? " (all " + std::to_string(w.skipped_records) +
                                                                     " records were malformed and skipped)"
                                                               : std::string(" (an empty file?)"))));
  // Replay walks sessions in arrival order; ids break ties so equal start times stay deterministic.
  std::stable_sort(w.sessions.begin(), w.sessions.end(), [](const Session& a, const Session& b) {
    return a.start_s != b.start_s ? a.start_s < b.start_s : a.id < b.id;
  });
  return w;
}

}  // namespace kvscope
