#include "integrate/text_block.h"

namespace berth::integrate {

namespace {

struct Span {
  size_t begin = std::string::npos;  // offset of the begin marker's line
  size_t end = std::string::npos;    // offset just past the end marker's line
};

// The offset of the line that is exactly `line`, from `from`; npos if none.
size_t FindLine(const std::string& text, const std::string& line, size_t from) {
  for (size_t at = text.find(line, from); at != std::string::npos; at = text.find(line, at + 1)) {
    bool starts = at == 0 || text[at - 1] == '\n';
    size_t after = at + line.size();
    bool ends = after == text.size() || text[after] == '\n' ||
                (text[after] == '\r' && after + 1 < text.size() && text[after + 1] == '\n');
    if (starts && ends) return at;
  }
  return std::string::npos;
}

size_t LineEnd(const std::string& text, size_t at) {
  size_t nl = text.find('\n', at);
  return nl == std::string::npos ? text.size() : nl + 1;
}

Result<Span> Locate(const std::string& text, const Markers& markers) {
  Span span;
  size_t begin = FindLine(text, markers.begin, 0);
  size_t end = FindLine(text, markers.end, 0);
  if (begin == std::string::npos && end == std::string::npos) return span;
  const std::string hint =
      "berth's block is delimited by the lines '" + markers.begin + "' and '" + markers.end +
      "'; restore them (or delete the block by hand) and run the command again";
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    return Error(Cause::kInvalidArgument, "berth's block has lost one of its marker lines", 0,
                 hint);
  if (FindLine(text, markers.begin, begin + 1) != std::string::npos ||
      FindLine(text, markers.end, end + 1) != std::string::npos)
    return Error(Cause::kInvalidArgument, "berth's block appears more than once", 0, hint);
  span.begin = begin;
  span.end = LineEnd(text, end);
  return span;
}

}  // namespace

Result<bool> HasBlock(const std::string& text, const Markers& markers) {
  Span span = TRY(Locate(text, markers));
  return span.begin != std::string::npos;
}

Result<std::string> PutBlock(const std::string& text, const Markers& markers,
                             const std::string& body) {
  Span span = TRY(Locate(text, markers));
  const std::string block = markers.begin + "\n" + body + markers.end + "\n";
  if (span.begin != std::string::npos)
    return text.substr(0, span.begin) + block + text.substr(span.end);
  std::string out = text;
  if (!out.empty()) {
    if (out.back() != '\n') out += '\n';
    out += '\n';
  }
  return out + block;
}

Result<std::string> TakeBlock(const std::string& text, const Markers& markers) {
  Span span = TRY(Locate(text, markers));
  if (span.begin == std::string::npos) return text;
  std::string before = text.substr(0, span.begin);
  std::string after = text.substr(span.end);
  // The blank line PutBlock put before a block it appended.
  if (after.empty() && before.size() >= 2 && before.compare(before.size() - 2, 2, "\n\n") == 0)
    before.pop_back();
  return before + after;
}

}  // namespace berth::integrate
