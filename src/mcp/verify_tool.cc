// `verify`: re-runs the policy's checks on a job's commit, as `berth verify`. Checks can take
// longer than a client waits for a tool call, so they run in a process of their own: the tool
// answers with the result when they end within kVerifyWaitMs, else says they are still running
// and `show`/`wait` report the verification when it is recorded (docs/mcp.md).
#include <algorithm>

#include "mcp/tools.h"
#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/spawn.h"

namespace berth::mcp {

namespace {

constexpr int64_t kVerifyWaitMs = 40000;

// Reaps the verifications of earlier calls that ended since.
void ReapEnded(std::vector<sys::Process>& running) {
  running.erase(std::remove_if(running.begin(), running.end(),
                               [](sys::Process& p) {
                                 Result<std::optional<sys::ExitStatus>> ended = p.TryWait();
                                 return !ended || ended->has_value();
                               }),
                running.end());
}

}  // namespace

Tool VerifyTool(Backend& backend) {
  Tool t;
  t.name = "verify";
  t.title = "Re-run a job's checks";
  t.description =
      "Re-run the policy's checks on the job's commit, as `berth verify`. Answers with the "
      "result when the checks end within 40 s; otherwise they keep running in the background "
      "and `show` reports the verification once it is recorded.";
  t.params = {JobParam()};
  t.read_only = false;
  t.run = [&backend](const nlohmann::json& args, CallContext& call) -> ToolResult {
    ReapEnded(backend.verifications());
    const std::string dir = backend.ctx().state_dir + "/mcp";
    if (Status made = sys::MakeDirs(dir, 0700); !made) return ToolError(made.error().ToString());
    Result<std::string> tmp = sys::MakeTempDir(dir, "verify-");
    if (!tmp) return ToolError(tmp.error().ToString());
    const std::string out_path = *tmp + "/out.json";
    Result<sys::UniqueFd> out = sys::CreateFile(out_path, 0600);
    if (!out) return ToolError(out.error().ToString());
    sys::SpawnOptions options;
    options.argv = {backend.ctx().self_exe, "--state-dir", backend.ctx().state_dir};
    options.argv.insert(options.argv.end(), {"verify", "--json", args["job"].get<std::string>()});
    for (const auto& [key, value] : backend.ChildEnvironment(nullptr))
      options.env.push_back(key + "=" + value);
    options.cwd = backend.repo();
    options.stdio[0] = sys::kDevNull;
    options.stdio[1] = out->get();
    options.stdio[2] = sys::kDevNull;
    // Its own session: a client that goes away does not take the checks with it.
    options.group = sys::ProcessGroup::kNewSession;
    Result<sys::Process> spawned = sys::Spawn(options);
    if (!spawned) return ToolError("cannot start berth verify: " + spawned.error().ToString());
    out->Reset();
    const int64_t deadline = sys::MonotonicMillis() + kVerifyWaitMs;
    std::optional<sys::ExitStatus> ended;
    while (sys::MonotonicMillis() < deadline) {
      Result<std::optional<sys::ExitStatus>> polled = spawned->TryWait();
      if (!polled) return ToolError(polled.error().ToString());
      if (*polled) {
        ended = *polled;
        break;
      }
      if (!call.Pump(200)) break;
    }
    if (!ended) {
      backend.verifications().push_back(std::move(*spawned));
      return ToolResult{"the checks of job " + args["job"].get<std::string>() +
                            " are still running in the background; `show` reports the "
                            "verification once it is recorded",
                        {{"job", args["job"]}, {"running", true}},
                        false};
    }
    Result<std::string> text = sys::ReadFile(out_path);
    IgnoreError(sys::RemoveTree(*tmp), "a leftover temporary directory only takes space");
    nlohmann::json j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    CommandOutput result;
    result.exit_code = ended->ShellCode();
    result.json = j;
    if (!j.is_object() || j.contains("error")) return ToolError(FailureText(result));
    const bool passed = Bool(j, "passed", false);
    std::string summary = "verification of job " + Str(j, "id") +
                          (passed ? " passed" : " failed: a required check did not pass");
    if (j.contains("verification") && j["verification"].is_object() &&
        j["verification"].contains("checks") && j["verification"]["checks"].is_array()) {
      for (const nlohmann::json& c : j["verification"]["checks"]) {
        if (!c.is_object()) continue;
        summary += std::string("\n  ") + (Bool(c, "passed", false) ? "ok   " : "FAIL ") +
                   Str(c, "name") + " " + Str(c, "reason");
      }
    }
    j["running"] = false;
    return ToolResult{summary, j, !passed};
  };
  return t;
}

}  // namespace berth::mcp
