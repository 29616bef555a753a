// The command line of `berth lane` (and of `pstack-runner`, which it stands in for): strict
// parsing into LaneOptions, and the checks that run before any file is reserved.
//
// Every failure here is a usage error: the caller prints `error: <message>` and the usage text
// on stderr and exits 64, and nothing has been created (docs/lane.md "Validation").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::lane {

enum class Mode { kReadOnly, kIsolatedWrite };

struct LaneOptions {
  std::string parent;
  std::string provider;
  std::string model;
  std::string effort;
  Mode mode = Mode::kReadOnly;
  // Absolute and normalized once Validate ran.
  std::string prompt_path;
  std::string cwd;
  std::string output_path;
  std::string receipt_path;
  std::optional<int64_t> timeout_ms;  // absent: no deadline at all

  std::string stdout_path() const { return receipt_path + ".stdout"; }
  std::string stderr_path() const { return receipt_path + ".stderr"; }
};

inline constexpr const char* kParents[] = {"claude", "codex"};
// The providers a parent may name: pstack-runner's mainline set, its latest `cursor`, and the
// fork gateways. Those berth has no adapter for end `unavailable-cli` (lane_status.h).
inline constexpr const char* kProviders[] = {"claude", "codex",    "grok",
                                             "cursor", "deepseek", "minimax"};
inline constexpr const char* kEfforts[] = {"low", "medium", "high", "xhigh", "max"};

const char* ModeName(Mode mode);

// The usage text, printed for --help (stdout) and after a usage error (stderr).
const std::string& UsageText();

// Parses the arguments after the command name. std::nullopt: help was asked for. Errors
// (kInvalidArgument) carry the message to print after "error: ".
Result<std::optional<LaneOptions>> ParseLaneArgs(const std::vector<std::string>& args);

// Makes the paths absolute against `cwd_of_caller` and checks what the original runner checks
// before it reserves anything: version pins, same-provider recursion, the prompt and the
// directory exist, the paths (sidecars included) are distinct and do not exist yet.
Status ValidateLaneOptions(const std::string& cwd_of_caller, LaneOptions* options);

}  // namespace berth::lane
