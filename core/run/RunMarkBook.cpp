#include "core/run/RunMarkBook.h"

#include <set>
#include <sstream>

namespace kvscope {
namespace {

// Text a file name, a table cell and a JSON string can all carry: no control characters.
bool printable(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

template <class... Parts>
std::string text(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace

bool isRunNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

RunMarked runEnd(const RunMarked& start, ChangeAuthor author) {
  RunMarked end = start;
  end.action = RunMarkAction::End;
  end.who = std::move(author.who);
  end.origin = std::move(author.origin);
  return end;
}

std::string RunMarkBook::validate(const RunMarkRequest& r) {
  const bool start = r.action == RunMarkAction::Start;
  if (start && r.name.empty()) return "name: a run's start needs a name";
  if (r.name.size() > kMaxRunNameBytes) return text("name: ", r.name.size(), " bytes, at most ", kMaxRunNameBytes);
  if (!printable(r.name)) return "name: contains control characters";
  if (!start && !r.parameters.empty()) return "parameters: only a run's start carries parameters";
  if (r.parameters.size() > kMaxRunParameters)
    return text("parameters: ", r.parameters.size(), " entries, at most ", kMaxRunParameters);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    const auto& [name, value] = r.parameters[i];
    const std::string field = text("parameters[", i, "]");
    if (name.empty()) return field + ".name: empty";
    if (name.size() > kMaxRunParameterNameBytes)
      return text(field, ".name: ", name.size(), " bytes, at most ", kMaxRunParameterNameBytes);
    for (char c : name)
      if (!isRunNameChar(c)) return text(field, ".name: '", name, "' (letters, digits, '_', '-', '.' only)");
    if (!seen.insert(name).second) return text(field, ".name: '", name, "' given twice");
    if (value.size() > kMaxRunParameterValueBytes)
      return text(field, ".value: ", value.size(), " bytes, at most ", kMaxRunParameterValueBytes);
    if (!printable(value)) return field + ".value: contains control characters";
  }
  return {};
}

RunMarkResult RunMarkBook::mark(RunMarkRequest request) {
  RunMarkResult result;
  if (result.error = validate(request); !result.error.empty()) return result;
  if (request.action == RunMarkAction::End) {
    if (!open_) {
      result.error = "no run is open";
      result.preconditionFailed = true;
      return result;
    }
    if (!request.name.empty() && request.name != open_->name) {
      result.error = text("run '", open_->name, "' is open, not '", request.name, "'");
      result.preconditionFailed = true;
      return result;
    }
    result.marks.push_back(runEnd(*open_, ChangeAuthor(std::move(request.who), std::move(request.origin))));
    open_.reset();
    return result;
  }
  if (open_) result.marks.push_back(runEnd(*open_, ChangeAuthor(request.who, request.origin)));
  RunMarked start;
  start.action = RunMarkAction::Start;
  start.index = next_index_++;
  start.name = std::move(request.name);
  start.parameters = std::move(request.parameters);
  start.who = std::move(request.who);
  start.origin = std::move(request.origin);
  open_ = start;
  result.marks.push_back(std::move(start));
  return result;
}

std::optional<RunMarked> RunMarkBook::closeOpen(ChangeAuthor author) {
  if (!open_) return std::nullopt;
  RunMarked end = runEnd(*open_, std::move(author));
  open_.reset();
  return end;
}

}  // namespace kvscope
