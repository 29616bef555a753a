// Short host commands: finding a program in a PATH, and running one with a timeout while
// capturing what it prints (a provider CLI's `--version`, `berth doctor`'s probes).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sys/process.h"
#include "sys/spawn.h"

namespace berth::sys {

// The first executable regular file called `name` in the absolute entries of `path_var`
// (relative entries are skipped: they would resolve against whatever the current directory
// is). A `name` with a '/' is checked as given. kNotFound when there is none.
Result<std::string> FindExecutable(const std::string& name, const std::string& path_var);

struct CommandResult {
  ExitStatus status;
  std::string output;  // stdout and stderr interleaved, at most `max_output` bytes
  bool timed_out = false;
};

// Runs `argv` (argv[0] an absolute path) with exactly `env`, stdin from /dev/null, in
// `cwd`; kills it (SIGKILL to its process group) after `timeout_ms`. A program that cannot be
// started (missing, not executable, `cwd` not enterable) yields status 127 or 126 and the reason
// as its output, as a shell would.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::pair<std::string, std::string>>& env,
                                 const std::string& cwd, int timeout_ms,
                                 size_t max_output = 64 * 1024);

// What RunCommandSeparately captured: stdout and stderr apart, so that a program's JSON on
// stdout is never interleaved with its messages (the MCP server runs berth's own commands).
struct SeparatedResult {
  ExitStatus status;
  std::string out;  // at most `max_output` bytes of each stream
  std::string err;
  bool timed_out = false;
};

// RunCommand with stdout and stderr captured separately; the same rules otherwise, but for
// stdin: `stdin_fd` (a file the caller opened, read by the program from where its offset
// is), or /dev/null by default.
Result<SeparatedResult> RunCommandSeparately(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env, const std::string& cwd,
    int timeout_ms, size_t max_output = 1024 * 1024, int stdin_fd = kDevNull);

}  // namespace berth::sys
