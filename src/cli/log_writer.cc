#include "cli/log_writer.h"

#include <fmt/core.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "base/quote.h"
#include "cli/base64.h"
#include "job/job_json.h"
#include "sys/self.h"

namespace berth::cli {

namespace {

void Line(const nlohmann::json& j) {
  fmt::print("{}\n", job::DumpJson(j));
  std::fflush(stdout);
}

}  // namespace

LogWriter::LogWriter(Format format)
    : format_(format), out_tty_(sys::IsTerminal(1)), err_tty_(sys::IsTerminal(2)) {}

void LogWriter::Event(const store::Event& e) {
  if (format_ == Format::kJson) {
    Line({{"type", "event"},
          {"seq", e.seq},
          {"at", job::IsoTime(e.at_ms)},
          {"step", e.step},
          {"detail", e.detail}});
  } else {
    fmt::print(stderr, "[berth {}] {:<10} {}\n", job::IsoTime(e.at_ms), e.step,
               EscapeControls(e.detail));
  }
}

void LogWriter::Output(const char* stream, std::string_view data) {
  if (format_ == Format::kJson) {
    // JSON strings carry text: bytes that are not UTF-8 travel as base64 instead.
    if (IsValidUtf8(data))
      Line({{"type", stream}, {"text", std::string(data)}});
    else
      Line({{"type", stream}, {"base64", Base64(data)}});
    return;
  }
  bool to_err = std::string_view(stream) == "stderr";
  FILE* out = to_err ? stderr : stdout;
  if (to_err ? err_tty_ : out_tty_) {
    std::string safe = EscapeControls(data, Newlines::kKeep);
    std::fwrite(safe.data(), 1, safe.size(), out);
  } else {
    std::fwrite(data.data(), 1, data.size(), out);
  }
  std::fflush(out);
}

}  // namespace berth::cli
