#include "cli/output.h"

#include <fmt/core.h>

#include <cstdio>

#include "base/exit_codes.h"
#include "job/job_json.h"

namespace berth::cli {

void PrintError(const Error& error) {
  // Messages quote agent-controlled text (paths, reasons): never raw to the terminal.
  fmt::print(stderr, "berth: error: {}\n", EscapeControls(error.ToString(), Newlines::kKeep));
  if (!error.hint().empty()) fmt::print(stderr, "  hint: {}\n", EscapeControls(error.hint()));
}

void PrintWarning(const std::string& message) {
  fmt::print(stderr, "berth: warning: {}\n", EscapeControls(message));
}

int ExitCodeFor(const Error& error) {
  switch (error.cause()) {
    case Cause::kInvalidArgument:
      return kExitUsage;
    case Cause::kUnavailable:
      return kExitUnavailable;
    case Cause::kNotFound:
      return kExitUsage;
    case Cause::kPermissionDenied:
    case Cause::kSystem:
    case Cause::kTimedOut:
      return kExitOsError;
    case Cause::kPolicyDenied:
      return kExitPolicy;
    case Cause::kBusy:
    case Cause::kFenced:  // the job is another worker's now: try again means a new job
      return kExitBusy;
    case Cause::kUnauthenticated:
      return kExitUnauthenticated;
    case Cause::kInternal:
      return kExitSoftware;
  }
  return kExitSoftware;
}

nlohmann::json ErrorToJson(const Error& error, int exit_code) {
  return {{"error",
           {{"message", error.ToString()},
            {"cause", CauseName(error.cause())},
            {"hint", error.hint().empty() ? nlohmann::json(nullptr) : nlohmann::json(error.hint())},
            {"exit_code", exit_code}}}};
}

int Fail(const Error& error, Format format, int exit_code) {
  PrintError(error);
  if (format == Format::kJson) PrintJson(ErrorToJson(error, exit_code));
  return exit_code;
}

int Fail(const Error& error, Format format) { return Fail(error, format, ExitCodeFor(error)); }

void PrintJson(const nlohmann::json& value) {
  fmt::print("{}\n", job::DumpJson(value, 2));
  std::fflush(stdout);
}

}  // namespace berth::cli
