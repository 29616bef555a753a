#include "job/commit_message.h"

#include <vector>

#include "base/strings.h"

namespace berth::job {

namespace {

constexpr size_t kSubjectBytes = 72;
constexpr size_t kBodyBytes = 4096;
constexpr std::string_view kTrailer = "Berth-Job:";

std::string_view Trim(std::string_view s) {
  size_t start = s.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(" \t");
  return s.substr(start, end - start + 1);
}

// Back from `n` to the start of a UTF-8 character, so that a cut never splits one.
size_t CharBoundary(std::string_view s, size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

// Agent or user text made safe for a commit message: newlines as \n, no other control
// character but tab, and no line that reads as berth's trailer.
std::string Clean(std::string_view text) {
  std::string flat;
  flat.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      flat.push_back('\n');
    } else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) {
      flat.push_back(static_cast<char>(c));
    }
  }
  std::string out;
  for (const std::string& line : Split(flat, '\n')) {
    if (Trim(line).starts_with(kTrailer)) continue;
    out += line;
    out.push_back('\n');
  }
  if (!out.empty()) out.pop_back();  // the newline after the last line, which Split added
  return out;
}

// `text` without blank lines at either end and trailing spaces on each line.
std::string TrimBlock(std::string_view text) {
  std::vector<std::string> lines;
  for (const std::string& line : Split(std::string(text), '\n')) {
    std::string_view kept = line;
    while (!kept.empty() && (kept.back() == ' ' || kept.back() == '\t')) kept.remove_suffix(1);
    lines.emplace_back(kept);
  }
  size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  size_t last = lines.size();
  while (last > first && lines[last - 1].empty()) --last;
  std::string out;
  for (size_t i = first; i < last; ++i) out += (i == first ? "" : "\n") + lines[i];
  return out;
}

std::string Bounded(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, CharBoundary(text, limit - 3))) + "...";
}

// The first line with content, its markdown heading, list or emphasis marks taken off.
std::string_view FirstContentLine(std::string_view text, size_t* rest) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    std::string_view content = Trim(line);
    while (!content.empty() && (content.front() == '#' || content.front() == '*' ||
                                content.front() == '>' || content.front() == '-'))
      content = Trim(content.substr(1));
    while (!content.empty() && content.back() == '*')
      content = Trim(content.substr(0, content.size() - 1));
    if (!content.empty()) {
      if (rest != nullptr) *rest = end == std::string_view::npos ? text.size() : end + 1;
      return content;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (rest != nullptr) *rest = text.size();
  return {};
}

std::string Fill(std::string_view tmpl, const CommitFacts& facts, const std::string& subject,
                 const std::string& summary) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t close = c == '{' ? tmpl.find('}', i) : std::string_view::npos;
    if (close == std::string_view::npos) {
      out.push_back(c);
      continue;
    }
    std::string_view name = tmpl.substr(i + 1, close - i - 1);
    if (name == "subject") {
      out += subject;
    } else if (name == "summary") {
      out += summary;
    } else if (name == "prompt") {
      out += SubjectLine(Clean(facts.prompt));
    } else if (name == "job" || name == "id") {
      out += facts.job;
    } else if (name == "agent") {
      out += facts.agent;
    } else if (name == "model") {
      out += facts.model;
    } else {
      out += tmpl.substr(i, close - i + 1);  // not a placeholder (the policy refuses these)
    }
    i = close;
  }
  return out;
}

}  // namespace

std::string SubjectLine(std::string_view text) {
  std::string_view line = FirstContentLine(text, nullptr);
  if (line.size() <= kSubjectBytes) return std::string(line);
  size_t cut = CharBoundary(line, kSubjectBytes - 3);
  size_t space = line.substr(0, cut).find_last_of(" \t");
  if (space != std::string_view::npos && space >= kSubjectBytes / 2) cut = space;
  return std::string(Trim(line.substr(0, cut))) + "...";
}

std::string JobCommitMessage(const CommitFacts& facts, std::string_view message_template) {
  const std::string summary = TrimBlock(Clean(facts.summary));
  const std::string prompt = Clean(facts.prompt);
  std::string subject = SubjectLine(summary);
  std::string body;
  if (!subject.empty()) {
    size_t rest = 0;
    FirstContentLine(summary, &rest);
    body = Bounded(TrimBlock(std::string_view(summary).substr(rest)), kBodyBytes);
  } else {
    subject = SubjectLine(prompt);
  }
  if (subject.empty()) subject = "berth: job " + facts.job + " (agent " + facts.agent + ")";
  const std::string trailer = std::string(kTrailer) + " " + facts.job + "\n";

  if (!message_template.empty()) {
    std::string filled =
        TrimBlock(Clean(Fill(message_template, facts, subject, Bounded(summary, kBodyBytes))));
    if (!filled.empty()) return filled + "\n\n" + trailer;
  }
  std::string message = subject + "\n\n";
  if (!body.empty()) message += body + "\n\n";
  message += "berth job " + facts.job + ", agent " + facts.agent;
  if (!facts.model.empty()) message += ", model " + facts.model;
  return message + "\n\n" + trailer;
}

}  // namespace berth::job
