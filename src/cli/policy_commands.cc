#include "cli/policy_commands.h"

#include <fmt/core.h>

#include "base/exit_codes.h"
#include "cli/output.h"
#include "confine/homes.h"
#include "git/repository.h"
#include "job/repo_policy.h"
#include "policy/policy.h"
#include "policy/policy_json.h"
#include "policy/starter.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::cli {

namespace {

Result<std::string> RepoRoot() {
  std::string cwd = TRY(sys::CurrentDir());
  git::Repository repo = TRY(git::Repository::Discover(cwd));
  return repo.workdir();
}

}  // namespace

void AddPolicyCommands(CLI::App& app, PolicyOptions* o) {
  CLI::App* init =
      app.add_subcommand("init", "Write a starter .berth/policy.toml for this repository");
  init->add_flag("--force", o->force, "overwrite an existing policy");
  init->add_flag("--json", o->json, "what was written (or the error) as JSON");
  CLI::App* policy = app.add_subcommand("policy", "Work with the repository's policy");
  policy->require_subcommand(1);
  CLI::App* check = policy->add_subcommand("check", "Validate .berth/policy.toml and explain it");
  check->add_flag("--json", o->json, "the validated policy (or the error) as JSON");
}

int RunInitCommand(const GlobalOptions&, const PolicyOptions& options) {
  const Format format = FormatOf(options.json);
  Result<std::string> root = RepoRoot();
  if (!root) return Fail(root.error(), format);
  std::string path = *root + "/.berth/policy.toml";
  const bool existed = sys::Exists(path);
  if (existed && !options.force)
    return Fail(
        Error(Cause::kInvalidArgument, path + " already exists", 0, "pass --force to overwrite it"),
        format, 1);
  // Every home is hidden in a job: nothing under one may be written into the policy.
  policy::DetectOptions detect;
  detect.homes = confine::HideableHomes(sys::AccountHomes());
  detect.homes.push_back(sys::CurrentIdentity().home);
  policy::RepoFacts facts = policy::DetectRepo(*root, detect);
  std::string text = policy::StarterPolicy(facts);
  if (Status made = sys::MakeDirs(*root + "/.berth", 0755); !made)
    return Fail(made.error(), format, 1);
  if (Status written = sys::WriteFileAtomic(path, text, 0644); !written)
    return Fail(written.error(), format, 1);
  if (options.json) {
    // The checks as the written policy declares them (a starter leaves some commented out).
    nlohmann::json checks = nlohmann::json::array();
    if (Result<policy::Policy> parsed = policy::ParsePolicy(text, path))
      checks = policy::PolicyToJson(*parsed)["verify"];
    PrintJson({{"path", path},
               {"overwrote", existed},
               {"detected", facts.build_systems},
               {"checks", checks},
               {"next", "review it, then berth policy check"}});
    return 0;
  }
  std::string detected;
  for (const std::string& b : facts.build_systems) detected += (detected.empty() ? "" : ", ") + b;
  fmt::print("berth: {} {}{}\n  next     review it, then `berth policy check`\n",
             existed ? "overwrote" : "wrote", path,
             detected.empty() ? "" : " (detected: " + detected + ")");
  return 0;
}

int RunPolicyCheckCommand(const GlobalOptions&, const PolicyOptions& options) {
  const Format format = FormatOf(options.json);
  Result<std::string> root = RepoRoot();
  if (!root) return Fail(root.error(), format);
  const std::string path = *root + "/.berth/policy.toml";
  Result<policy::Policy> loaded = job::LoadRepoPolicy(*root);
  if (!loaded) {
    PrintError(loaded.error());
    fmt::print(stderr, "berth: write agents are denied until the policy is valid\n");
    if (options.json) {
      nlohmann::json out = ErrorToJson(loaded.error(), kExitPolicy);
      out["path"] = path;
      out["valid"] = false;
      PrintJson(out);
    }
    return kExitPolicy;
  }
  if (options.json) {
    PrintJson({{"path", path}, {"valid", true}, {"policy", policy::PolicyToJson(*loaded)}});
    return 0;
  }
  fmt::print("{}: valid (sha256 {})\n{}", path, loaded->sha256.substr(0, 16),
             policy::ExplainPolicy(*loaded));
  return 0;
}

}  // namespace berth::cli
