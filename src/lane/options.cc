#include "lane/options.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

#include "sys/fs.h"

namespace berth::lane {

namespace {

Error Usage(std::string message) { return Error(Cause::kInvalidArgument, std::move(message)); }

template <size_t N>
Result<std::string> OneOf(const std::string& name, const std::optional<std::string>& value,
                          const char* const (&choices)[N]) {
  for (const char* c : choices)
    if (value && *value == c) return *value;
  std::string list;
  for (const char* c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  return Usage(name + " must be one of: " + list);
}

Result<std::string> Required(const std::string& name, const std::optional<std::string>& value) {
  if (!value || value->find_first_not_of(" \t\n\r\f\v") == std::string::npos)
    return Usage(name + " is required");
  return *value;
}

// Seconds as JavaScript's Number() reads them in the original: a finite decimal, surrounding
// whitespace allowed. Hex, "Infinity" and an empty string are not accepted here (Number("")
// is 0, which the original refuses too).
std::optional<double> ParseSeconds(const std::string& text) {
  static const std::regex kNumber(R"(\s*[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*)");
  if (!std::regex_match(text, kNumber)) return std::nullopt;
  double value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

const char* ModeName(Mode mode) { return mode == Mode::kReadOnly ? "read-only" : "isolated-write"; }

const std::string& UsageText() {
  static const std::string kText =
      "Usage: berth lane --parent <claude|codex> --provider <claude|codex|grok|cursor|...> \\\n"
      "  --model <slug> --effort <low|medium|high|xhigh|max> --mode <read-only|isolated-write> \\\n"
      "  --prompt <file> --cwd <dir> --output <file> --receipt <file> [--timeout <seconds>]\n"
      "\n"
      "Runs exactly one external model lane as a berth job, in berth's sandbox and workspace\n"
      "(also invoked as pstack-runner). Same-provider calls are rejected; use the parent\n"
      "harness's native subagent primitive for those lanes. Output and receipt paths must not\n"
      "already exist. There is no implicit timeout: --timeout is one deadline from the start\n"
      "of this command, shared by setup and the model run. An isolated-write lane's changes\n"
      "stay on its job branch: review them with `berth diff JOB`, apply them with\n"
      "`berth land JOB`.\n";
  return kText;
}

Result<std::optional<LaneOptions>> ParseLaneArgs(const std::vector<std::string>& args) {
  static const std::set<std::string> kNames = {"parent",  "provider", "model", "effort",
                                               "mode",    "prompt",   "cwd",   "output",
                                               "receipt", "timeout"};
  std::map<std::string, std::string> values;
  bool help = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help = true;
      continue;
    }
    if (a.rfind("--", 0) != 0 || a == "--") {
      if (!a.empty() && a[0] == '-' && a != "-" && a != "--")
        return Usage("Unknown option '" + a + "'");
      return Usage("Unexpected argument '" + a +
                   "'. This command does not take positional "
                   "arguments");
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (!kNames.count(name)) return Usage("Unknown option '--" + name + "'");
    if (inline_value) {
      values[name] = *inline_value;
      continue;
    }
    // A string option takes the next argument, unless it looks like an option itself.
    if (i + 1 >= args.size() || (args[i + 1].rfind("-", 0) == 0 && args[i + 1].size() > 1))
      return Usage("Option '--" + name + " <value>' argument missing");
    values[name] = args[++i];
  }
  if (help) return std::optional<LaneOptions>();
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
  LaneOptions o;
  // The original's order of checks, so that the first message is the same one.
  std::string mode = TRY(OneOf("mode", get("mode"), {"read-only", "isolated-write"}));
  o.mode = mode == "read-only" ? Mode::kReadOnly : Mode::kIsolatedWrite;
  if (std::optional<std::string> t = get("timeout")) {
    std::optional<double> seconds = ParseSeconds(*t);
    if (!seconds || *seconds <= 0) return Usage("timeout must be a number greater than zero");
    o.timeout_ms = static_cast<int64_t>(std::ceil(*seconds * 1000.0));
  }
  o.parent = TRY(OneOf("parent", get("parent"), kParents));
  o.provider = TRY(OneOf("provider", get("provider"), kProviders));
  o.model = TRY(Required("model", get("model")));
  o.effort = TRY(OneOf("effort", get("effort"), kEfforts));
  o.prompt_path = TRY(Required("prompt", get("prompt")));
  o.cwd = TRY(Required("cwd", get("cwd")));
  o.output_path = TRY(Required("output", get("output")));
  o.receipt_path = TRY(Required("receipt", get("receipt")));
  return std::optional<LaneOptions>(std::move(o));
}

Status ValidateLaneOptions(const std::string& cwd_of_caller, LaneOptions* o) {
  if (o->parent == o->provider)
    return Usage("provider " + o->provider + " is native to parent " + o->parent +
                 "; use the parent subagent primitive");
  static const std::regex kPin(R"(claude-(fable|opus)-[0-9][0-9-]*)");
  if (std::regex_match(o->model, kPin))
    return Usage("model " + o->model +
                 " is a version pin; normalize it to fable/opus before invoking the runner");
  for (std::string* path : {&o->prompt_path, &o->cwd, &o->output_path, &o->receipt_path})
    *path = sys::NormalizePath(sys::AbsolutePath(cwd_of_caller, *path));
  if (sys::TypeOfFollowing(o->cwd) != sys::FileType::kDirectory)
    return Usage("cwd must be an existing directory: " + o->cwd);
  if (sys::TypeOfFollowing(o->prompt_path) != sys::FileType::kRegular)
    return Usage("prompt must be an existing file: " + o->prompt_path);
  const std::vector<std::pair<std::string, std::string>> named = {
      {"prompt", o->prompt_path},
      {"output", o->output_path},
      {"receipt", o->receipt_path},
      {"receipt stdout sidecar", o->stdout_path()},
      {"receipt stderr sidecar", o->stderr_path()}};
  for (size_t i = 0; i < named.size(); ++i)
    for (size_t j = i + 1; j < named.size(); ++j)
      if (named[i].second == named[j].second)
        return Usage(named[i].first + " and " + named[j].first +
                     " paths must be distinct: " + named[i].second);
  for (size_t i = 1; i < named.size(); ++i)
    if (sys::TypeOf(named[i].second) != sys::FileType::kMissing)
      return Usage(named[i].first + " path already exists: " + named[i].second);
  return {};
}

}  // namespace berth::lane
