#include "core/model/Error.h"

namespace kvscope {

std::string printableText(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string formatInputError(const std::string& file, long line, const std::string& field, const std::string& what) {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!field.empty()) out += "field '" + field + "': ";
  out += what;
  return printableText(out);
}

std::string quotedExcerpt(std::string_view text, char quote, std::size_t max) {
  std::string out(1, quote);
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c >= 0x20 && c < 0x7f && c != static_cast<unsigned char>(quote)) ? static_cast<char>(c) : '?';
  }
  if (text.size() > max) out += "...";
  return out + quote;
}

}  // namespace kvscope
