#include "core/run/RunNotes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/AtomicFile.h"
#include "core/io/InputFile.h"
#include "core/model/Error.h"
#include "core/model/JsonKeys.h"

namespace kvscope {

std::string RunNotes::pathFor(const std::string& recording) { return recording + ".notes.json"; }

RunNotes RunNotes::loadFor(const std::string& recording) {
  const std::string path = pathFor(recording);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return parse(InputFile::readAll(path), path);
}

RunNotes RunNotes::parse(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, rejectDuplicateKeys<nlohmann::json>(), /*allow_exceptions=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    const auto upto = text.begin() + static_cast<long>(std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size()));
    throw InputError(
        formatInputError(path, 1 + std::count(text.begin(), upto, '\n'), "", std::string("invalid JSON: ") + e.what()));
  } catch (const DuplicateJsonKey& e) {
    throw InputError(formatInputError(path, 0, e.key(), "given twice in one object; say it once"));
  }
  if (!j.is_object() || !j.contains("notes") || !j["notes"].is_array())
    throw InputError(formatInputError(path, 0, "notes", "expected {\"notes\": [{\"time_s\": ..., \"text\": ...}]}"));
  RunNotes out;
  for (std::size_t i = 0; i < j["notes"].size(); ++i) {
    const auto& n = j["notes"][i];
    const std::string field = "notes[" + std::to_string(i) + "]";
    if (!n.is_object() || !n.contains("time_s") || !n["time_s"].is_number() || !n.contains("text") ||
        !n["text"].is_string())
      throw InputError(formatInputError(path, 0, field, "expected {\"time_s\": seconds, \"text\": \"...\"}"));
    const double t = n["time_s"].get<double>();
    std::string error;
    if (!std::isfinite(t) || t > 1e9 || !out.add({secondsToTime(t), n["text"].get<std::string>()}, &error))
      throw InputError(formatInputError(path, 0, field, error.empty() ? "time_s: expected seconds >= 0" : error));
  }
  return out;
}

bool RunNotes::add(RunNote note, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (note.time < 0) return fail("a note's time is seconds >= 0");
  if (note.text.find_first_not_of(" \t\r\n") == std::string::npos) return fail("a note needs a text");
  if (note.text.size() > kMaxText) return fail("a note holds at most " + std::to_string(kMaxText) + " bytes");
  if (notes_.size() >= kMaxNotes) return fail("a run holds at most " + std::to_string(kMaxNotes) + " notes");
  const auto at =
      std::upper_bound(notes_.begin(), notes_.end(), note.time, [](SimTime t, const RunNote& n) { return t < n.time; });
  notes_.insert(at, std::move(note));
  return true;
}

bool RunNotes::remove(std::size_t index) {
  if (index >= notes_.size()) return false;
  notes_.erase(notes_.begin() + static_cast<long>(index));
  return true;
}

std::string RunNotes::text() const {
  nlohmann::json list = nlohmann::json::array();
  for (const RunNote& n : notes_) list.push_back({{"time_s", timeToSeconds(n.time)}, {"text", n.text}});
  return nlohmann::json{{"notes", list}}.dump(2) + "\n";
}

bool RunNotes::saveFor(const std::string& recording, std::string* error) const {
  return AtomicFile::write(pathFor(recording), text(), error);
}

}  // namespace kvscope
