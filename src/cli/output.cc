#include "cli/output.h"

#include <fmt/core.h>

#include <cstdio>

#include "cli/exit_codes.h"

namespace berth::cli {

void PrintError(const Error& error) {
  fmt::print(stderr, "berth: error: {}\n", error.ToString());
  if (!error.hint().empty()) fmt::print(stderr, "  hint: {}\n", error.hint());
}

void PrintWarning(const std::string& message) { fmt::print(stderr, "berth: warning: {}\n", message); }

int ExitCodeFor(const Error& error) {
  switch (error.cause()) {
    case Cause::kInvalidArgument: return kExitUsage;
    case Cause::kUnavailable: return kExitUnavailable;
    case Cause::kNotFound: return kExitUsage;
    case Cause::kPermissionDenied:
    case Cause::kSystem:
    case Cause::kTimedOut: return kExitOsError;
    case Cause::kPolicyDenied: return kExitPolicy;
    case Cause::kBusy: return kExitBusy;
    case Cause::kUnauthenticated: return kExitUnauthenticated;
    case Cause::kInternal: return kExitSoftware;
  }
  return kExitSoftware;
}

}  // namespace berth::cli
