#pragma once
// Errors are values with a message a user can act on: where (file, line or record), which field,
// and what was expected.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvscope {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command line that cannot work as given (a refused listen address): exit 2 like CLI11's own
// usage errors, where InputError is exit 1.
struct UsageError : InputError {
  using InputError::InputError;
};

// `text` with its control characters (but newline and tab) written as \xNN: an input's bytes quoted
// in a message can then never retitle, clear or recolour the terminal that shows it.
std::string printableText(std::string_view text);

// What a message shows of untrusted text: at most `max` characters between `quote`s, every byte that
// is not printable ASCII (or is the quote itself) written as '?', "..." when cut. A reader's
// "expected a number, got 'x?y...'" then stays one short line whatever the input held.
std::string quotedExcerpt(std::string_view text, char quote = '\'', std::size_t max = 40);

// "FILE:LINE: field 'F': expected ..., got ..." (line 0 = no line, e.g. a whole-file problem), its
// control characters escaped (printableText).
std::string formatInputError(const std::string& file, long line, const std::string& field, const std::string& what);

}  // namespace kvscope
