#include "base/quote.h"

#include <cstdint>

namespace berth {

namespace {

void AppendOctal(unsigned char byte, std::string* out) {
  out->push_back('\\');
  out->push_back(static_cast<char>('0' + ((byte >> 6) & 7)));
  out->push_back(static_cast<char>('0' + ((byte >> 3) & 7)));
  out->push_back(static_cast<char>('0' + (byte & 7)));
}

// The C escape git uses for `byte`, or 0 when it has none (and gets an octal one).
char CEscape(unsigned char byte) {
  switch (byte) {
    case '\a':
      return 'a';
    case '\b':
      return 'b';
    case '\t':
      return 't';
    case '\n':
      return 'n';
    case '\v':
      return 'v';
    case '\f':
      return 'f';
    case '\r':
      return 'r';
    case '"':
      return '"';
    case '\\':
      return '\\';
    default:
      return 0;
  }
}

bool NeedsQuote(unsigned char byte) {
  return byte < 0x20 || byte == '"' || byte == '\\' || byte >= 0x7f;
}

// The length of the valid UTF-8 sequence at text[at] and its code point; 0 when invalid.
size_t Utf8Sequence(std::string_view text, size_t at, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length;
  uint32_t cp;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(at + i) & 0x3f);
  }
  // Overlong forms, UTF-16 surrogates and code points beyond Unicode are not UTF-8.
  if ((length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  *code_point = cp;
  return length;
}

bool IsTerminalControl(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string QuotePath(std::string_view path) {
  bool plain = true;
  for (char c : path) plain = plain && !NeedsQuote(static_cast<unsigned char>(c));
  if (plain) return std::string(path);
  std::string out = "\"";
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (!NeedsQuote(byte)) {
      out.push_back(c);
    } else if (char escape = CEscape(byte); escape != 0) {
      out.push_back('\\');
      out.push_back(escape);
    } else {
      AppendOctal(byte, &out);
    }
  }
  out.push_back('"');
  return out;
}

std::string EscapeControls(std::string_view text, Newlines newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    uint32_t cp = 0;
    size_t length = Utf8Sequence(text, at, &cp);
    if (length == 0) {  // not UTF-8: this byte alone
      AppendOctal(static_cast<unsigned char>(text[at]), &out);
      ++at;
      continue;
    }
    bool keep = !IsTerminalControl(cp) || cp == '\t' || (cp == '\n' && newlines == Newlines::kKeep);
    if (keep) {
      out.append(text.substr(at, length));
    } else if (cp == '\n') {
      out.append("\\n");
    } else {
      for (size_t i = 0; i < length; ++i)
        AppendOctal(static_cast<unsigned char>(text[at + i]), &out);
    }
    at += length;
  }
  return out;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    uint32_t cp = 0;
    size_t length = Utf8Sequence(text, at, &cp);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

}  // namespace berth
