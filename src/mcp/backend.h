// What berth's tools and resources act on: the repository, the state, the host, and berth's
// own commands. Most tools run `berth <command> --json` (the same binary) so that what they
// report is exactly what the command prints, with its rules, refusals and masking; `wait` and
// `logs` read the store and the job's files in process, masked the way `berth logs` masks.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "host/permission_mode.h"
#include "job/context.h"
#include "job/masking_store.h"
#include "sys/process.h"

namespace berth::mcp {

// What a berth command printed and how it ended.
struct CommandOutput {
  int exit_code = 0;
  nlohmann::json json;  // stdout parsed; discarded() when it was not one JSON document
  std::string out;
  std::string err;
  bool timed_out = false;
};

// "why it failed" from a command's {"error": {message, hint}} or, lacking that, its stderr.
std::string FailureText(const CommandOutput& output);

class Backend {
 public:
  // `host`: "claude-code", "codex" or "" (then the environment's markers say, if any).
  Backend(job::JobContext ctx, std::string repo, std::string host);

  const job::JobContext& ctx() const { return ctx_; }
  const std::string& repo() const { return repo_; }
  const std::string& host() const { return host_; }

  // The host's mode for a call whose params._meta is `meta`: Claude Code's record of this
  // session, what Codex's _meta says, else the restrictive default.
  host::HostMode ModeFor(const nlohmann::json& meta) const;

  // Runs `berth ARGS` in the repository with this server's environment, plus BERTH_HOST and
  // BERTH_HOST_MODE when `mode` is given, for at most `timeout_ms`.
  Result<CommandOutput> Berth(const std::vector<std::string>& args, int timeout_ms,
                              const host::HostMode* mode = nullptr) const;

  // The store, masked like every command's (opened on first use).
  Result<job::MaskingStore*> Store();

  // The environment berth's commands get (with the host's mode, when given).
  std::vector<std::pair<std::string, std::string>> ChildEnvironment(
      const host::HostMode* mode) const;

  // Verifications still running in the background: reaped when they end.
  std::vector<sys::Process>& verifications() { return verifications_; }

 private:
  job::JobContext ctx_;
  std::string repo_;
  std::string host_;
  std::unique_ptr<job::MaskingStore> store_;
  std::vector<sys::Process> verifications_;
};

}  // namespace berth::mcp
