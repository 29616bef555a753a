#include "policy/policy.h"

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "base/strings.h"
#include "base/toml_noexcept.h"
#include "policy/approval_decision.h"
#include "policy/sha256.h"
#include "policy/syntax.h"
#include "sys/fs.h"

namespace berth::policy {

namespace {

constexpr size_t kMaxPolicyBytes = 1 << 20;
constexpr uint64_t kMinOutputLimit = 4096;
constexpr const char* kPolicyPath = ".berth/policy.toml";
constexpr const char* kDocsHint = "see docs/policy.md for every key and its rules";

std::string Join(const std::string& prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

const char* TypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// "expected "a" or "b"" / "expected one of "a", "b", "c"".
std::string Expected(const std::vector<std::string_view>& choices) {
  std::string text = choices.size() == 2 ? "expected " : "expected one of ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += choices.size() == 2 ? " or " : ", ";
    text += Quote(choices[i]);
  }
  return text;
}

// Reads typed values out of the parsed document and turns every problem into an error of the
// form "SOURCE:LINE: KEY.PATH: what".
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Error Fail(const toml::node& node, const std::string& path, const std::string& what) const {
    return FailAt(node.source().begin.line, path, what);
  }
  Error FailAt(uint32_t line, const std::string& path, const std::string& what) const {
    std::string where = source_ + ":" + std::to_string(std::max<uint32_t>(line, 1)) + ": ";
    return Error(Cause::kInvalidArgument, where + (path.empty() ? "" : path + ": ") + what, 0,
                 kDocsHint);
  }
  Error Unknown(const toml::node& node, const std::string& path,
                const std::vector<std::string_view>& known) const {
    std::string list;
    for (std::string_view key : known) list += (list.empty() ? "" : ", ") + std::string(key);
    return Fail(node, path, "unknown key (known here: " + list + ")");
  }
  Error WrongType(const toml::node& node, const std::string& path, const char* wanted) const {
    return Fail(node, path, std::string("expected ") + wanted + ", got " + TypeName(node.type()));
  }

  Result<const toml::table*> Table(const toml::node& node, const std::string& path) const {
    if (const toml::table* table = node.as_table()) return table;
    return WrongType(node, path, "a table");
  }
  Result<std::string> String(const toml::node& node, const std::string& path) const {
    const toml::value<std::string>* value = node.as_string();
    if (value == nullptr) return WrongType(node, path, "a string");
    return value->get();
  }
  Result<std::string> NonEmptyString(const toml::node& node, const std::string& path) const {
    std::string text = TRY(String(node, path));
    if (text.empty()) return Fail(node, path, "must not be empty (omit the key for the default)");
    return text;
  }
  Result<bool> Bool(const toml::node& node, const std::string& path) const {
    const toml::value<bool>* value = node.as_boolean();
    if (value == nullptr) return WrongType(node, path, "a boolean (true or false)");
    return value->get();
  }
  Result<int64_t> Integer(const toml::node& node, const std::string& path, int64_t low,
                          int64_t high) const {
    const toml::value<int64_t>* value = node.as_integer();
    if (value == nullptr) return WrongType(node, path, "an integer");
    if (value->get() < low || value->get() > high)
      return Fail(node, path,
                  "expected an integer from " + std::to_string(low) + " to " +
                      std::to_string(high) + ", got " + std::to_string(value->get()));
    return value->get();
  }
  Result<int64_t> Duration(const toml::node& node, const std::string& path) const {
    std::string text = TRY(String(node, path));
    Result<int64_t> ms = ParseDuration(text);
    if (!ms) return Fail(node, path, ms.error().message() + "; " + ms.error().hint());
    if (*ms <= 0) return Fail(node, path, "must be longer than zero, got " + Quote(text));
    return *ms;
  }
  template <typename Enum>
  Result<Enum> Choice(const toml::node& node, const std::string& path,
                      const std::vector<std::pair<std::string_view, Enum>>& choices) const {
    std::string text = TRY(String(node, path));
    std::vector<std::string_view> names;
    for (const auto& [name, value] : choices) {
      if (text == name) return value;
      names.push_back(name);
    }
    return Fail(node, path, Expected(names) + ", got " + Quote(text));
  }
  // An array whose elements are each handed to `item(node, path, index)`.
  template <typename Fn>
  Status Each(const toml::node& node, const std::string& path, const char* wanted,
              Fn&& item) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) return WrongType(node, path, wanted);
    for (size_t i = 0; i < array->size(); ++i) TRY(item((*array)[i], Index(path, i), i));
    return {};
  }
  // An array of non-empty strings. A plain string gets a hint showing the list form.
  Result<std::vector<std::string>> Strings(const toml::node& node, const std::string& path) const {
    if (const toml::value<std::string>* text = node.as_string()) {
      std::string list;
      for (const std::string& word : Split(text->get(), ' ')) {
        if (!word.empty()) list += (list.empty() ? "" : ", ") + Quote(word);
      }
      return Fail(node, path,
                  "expected an array of strings, got a string; write " +
                      path.substr(path.rfind('.') + 1) + " = [" + list + "]");
    }
    std::vector<std::string> out;
    TRY(Each(node, path, "an array of strings",
             [&](const toml::node& item, const std::string& item_path, size_t) -> Status {
               out.push_back(TRY(NonEmptyString(item, item_path)));
               return {};
             }));
    return out;
  }

 private:
  std::string source_;
};

// Paths that no writable set may reach. Besides these fixed probes, every pattern contributes
// witnesses (concrete paths it matches inside .git or .berth); see ProtectedWitnesses.
constexpr std::string_view kProtectedRoots[] = {".git", ".berth"};
constexpr std::string_view kProtectedProbes[] = {".git",
                                                 ".git/config",
                                                 ".git/HEAD",
                                                 ".git/index",
                                                 ".git/hooks/pre-commit",
                                                 ".git/info/attributes",
                                                 ".git/info/exclude",
                                                 ".git/objects/info/alternates",
                                                 ".git/refs/heads/main",
                                                 ".git/modules/sub/config",
                                                 ".berth",
                                                 ".berth/policy.toml",
                                                 ".berth/x/y"};

// A path segment that `segment_pattern` matches: literals kept, '*' empty, '?' and bracket
// classes replaced by a character they accept.
std::string SegmentWitness(std::string_view segment_pattern) {
  std::string out;
  for (size_t i = 0; i < segment_pattern.size(); ++i) {
    char c = segment_pattern[i];
    if (c == '*') continue;
    if (c != '[') {
      out.push_back(c == '?' ? 'x' : c);
      continue;
    }
    // The class ends at the first ']' that is not its first member (as in glob.cc).
    size_t first = i + 1;
    if (first < segment_pattern.size() && segment_pattern[first] == '!') ++first;
    size_t close = segment_pattern.find(']', first + 1);
    if (close == std::string_view::npos) return "x";
    std::string klass(segment_pattern.substr(i, close - i + 1));
    for (char candidate = '!'; candidate < '~'; ++candidate) {
      if (candidate != '/' && GlobMatch(klass, std::string(1, candidate))) {
        out.push_back(candidate);
        break;
      }
    }
    i = close;
  }
  return out.empty() ? "x" : out;
}

// Concrete paths inside (or equal to) `root` that `pattern` matches, when its leading
// segment can stand for `root`.
std::vector<std::string> ProtectedWitnesses(std::string_view pattern, std::string_view root) {
  std::vector<std::string> segments = Split(pattern, '/');
  std::vector<size_t> rests;  // where the rest of the pattern starts once `root` is placed
  if (segments[0] == "**") {
    rests.push_back(1);  // `**` stands for `root`
    if (segments.size() > 1 && GlobMatch(segments[1], root)) rests.push_back(2);  // `**` empty
  } else if (GlobMatch(segments[0], root)) {
    rests.push_back(1);
  }
  std::vector<std::string> witnesses;
  for (size_t rest : rests) {
    std::string path(root);
    for (size_t i = rest; i < segments.size(); ++i) {
      if (segments[i] != "**") path += "/" + SegmentWitness(segments[i]);  // `**` empty
    }
    if (GlobMatch(pattern, path)) witnesses.push_back(path);
  }
  return witnesses;
}

// Checks that `set` (built from the array at `node`) never makes .git or .berth writable.
Status CheckProtected(const Reader& reader, const toml::array& node, const std::string& path,
                      const GlobSet& set) {
  std::vector<std::string> probes(std::begin(kProtectedProbes), std::end(kProtectedProbes));
  for (size_t i = 0; i < set.patterns().size(); ++i) {
    const std::string& pattern = set.patterns()[i];
    if (pattern[0] == '!') continue;
    std::string first = pattern.substr(0, pattern.find('/'));
    for (std::string_view root : kProtectedRoots) {
      if (first == root)
        return reader.Fail(*node.get(i), Index(path, i),
                           Quote(pattern) + " names a path in " + std::string(root) +
                               "; .git/** and .berth/** can never be writable");
      for (std::string& witness : ProtectedWitnesses(pattern, root)) probes.push_back(witness);
    }
  }
  for (const std::string& probe : probes) {
    if (!set.Matches(probe)) continue;
    std::string decider = set.Decider(probe);
    size_t index = 0;
    for (size_t i = 0; i < set.patterns().size(); ++i) {
      if (set.patterns()[i] == decider) index = i;
    }
    return reader.Fail(*node.get(index), Index(path, index),
                       Quote(decider) + " would make " + probe +
                           " writable; .git/** and .berth/** can never be writable (narrow "
                           "the pattern, or follow it with \"!.git/**\", \"!.berth/**\")");
  }
  return {};
}

// An array of globs, each validated on its own line, then as a set.
Result<GlobSet> Globs(const Reader& reader, const toml::node& node, const std::string& path) {
  std::vector<std::string> patterns = TRY(reader.Strings(node, path));
  for (size_t i = 0; i < patterns.size(); ++i) {
    Result<GlobSet> one = GlobSet::Create({patterns[i]});
    if (!one) return reader.Fail(*node.as_array()->get(i), Index(path, i), one.error().message());
  }
  return GlobSet::Create(patterns);
}

Result<std::vector<std::string>> Grants(const Reader& reader, const toml::node& node,
                                        const std::string& path, bool for_checks) {
  std::vector<std::string> grants = TRY(reader.Strings(node, path));
  for (size_t i = 0; i < grants.size(); ++i) {
    const toml::node& item = *node.as_array()->get(i);
    if (for_checks && StartsWith(grants[i], "net:"))
      return reader.Fail(
          item, Index(path, i),
          "checks run with no network: net: grants are for agents, got " + Quote(grants[i]));
    std::string problem = GrantProblem(grants[i]);
    if (!problem.empty()) return reader.Fail(item, Index(path, i), problem);
  }
  return grants;
}

const std::vector<std::pair<std::string_view, NetworkMode>> kNetworkModes = {
    {"none", NetworkMode::kNone},
    {"provider", NetworkMode::kProvider},
    {"allowlist", NetworkMode::kAllowlist},
    {"open", NetworkMode::kOpen}};

Result<std::string> BranchTemplate(const Reader& reader, const toml::node& node,
                                   const std::string& path) {
  std::string text = TRY(reader.String(node, path));
  std::string sample;
  bool has_id = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      sample.push_back(text[i]);
      continue;
    }
    size_t close = text.find('}', i);
    std::string name = text.substr(i + 1, close == std::string::npos ? close : close - i - 1);
    if (close == std::string::npos || (name != "id" && name != "agent"))
      return reader.Fail(node, path,
                         "unknown placeholder in " + Quote(text) + "; use {id} and {agent}");
    has_id |= name == "id";
    sample += name == "id" ? "0a1b2c3d" : "agent";
    i = close;
  }
  if (!has_id)
    return reader.Fail(node, path,
                       Quote(text) + " must contain {id} so that every job gets its own branch");
  std::string problem = RefNameProblem(sample);
  if (!problem.empty()) return reader.Fail(node, path, "branch " + Quote(text) + " " + problem);
  return text;
}

constexpr uint64_t kMaxPids = 4194304;  // the kernel's pid_max ceiling
constexpr double kMaxCpus = 1024;
constexpr uint64_t kMinMemory = 16ull << 20;
constexpr uint64_t kMinDisk = 1ull << 20;

// A size key of the limits ("2GiB", or "unlimited" for 0), at least `minimum` bytes.
Result<uint64_t> LimitSize(const Reader& reader, const toml::node& node, const std::string& path,
                           uint64_t minimum, const std::string& expected) {
  std::string text = TRY(reader.String(node, path));
  if (text == "unlimited") return uint64_t{0};
  Result<uint64_t> bytes = ParseSize(text);
  if (!bytes) return reader.Fail(node, path, "expected " + expected + ", got " + Quote(text));
  if (*bytes < minimum)
    return reader.Fail(node, path,
                       "expected at least " + FormatBytes(minimum) + ", got " + Quote(text));
  return *bytes;
}

// Reads `key` into `limits` when it is one of the limit keys; false when it is not.
Result<bool> ParseLimit(const Reader& reader, std::string_view key, const toml::node& value,
                        const std::string& key_path, Limits* limits) {
  if (key == "memory") {
    std::string text = TRY(reader.String(value, key_path));
    MemoryLimit memory;
    if (!text.empty() && text.back() == '%') {
      std::string digits = text.substr(0, text.size() - 1);
      bool numeric = !digits.empty() && digits.size() <= 3 &&
                     digits.find_first_not_of("0123456789") == std::string::npos;
      memory.percent = numeric ? std::atoi(digits.c_str()) : 0;
      if (memory.percent < 1 || memory.percent > 100)
        return reader.Fail(
            value, key_path,
            "expected a percentage of physical memory from 1% to 100%, got " + Quote(text));
    } else {
      memory.bytes = TRY(LimitSize(reader, value, key_path, kMinMemory,
                                   "a size such as \"4GiB\", a percentage of physical memory "
                                   "such as \"50%\", or \"unlimited\""));
    }
    limits->memory = memory;
  } else if (key == "pids") {
    if (const toml::value<std::string>* text = value.as_string();
        text && text->get() == "unlimited")
      limits->pids = 0;
    else if (value.is_string())
      return reader.Fail(
          value, key_path,
          "expected an integer or \"unlimited\", got " + Quote(value.as_string()->get()));
    else
      limits->pids = static_cast<uint64_t>(
          TRY(reader.Integer(value, key_path, 1, static_cast<int64_t>(kMaxPids))));
  } else if (key == "cpus") {
    double cpus = 0;
    if (const toml::value<std::string>* text = value.as_string()) {
      if (text->get() != "unlimited")
        return reader.Fail(value, key_path,
                           "expected a number of cores such as 2 or 1.5, or \"unlimited\", got " +
                               Quote(text->get()));
    } else if (const toml::value<double>* number = value.as_floating_point()) {
      cpus = number->get();
      if (!(cpus > 0 && cpus <= kMaxCpus))
        return reader.Fail(
            value, key_path,
            "expected a number of cores above 0 and at most 1024, got " + std::to_string(cpus));
    } else {
      cpus = static_cast<double>(TRY(reader.Integer(value, key_path, 1, 1024)));
    }
    limits->cpus = cpus;
  } else if (key == "disk") {
    limits->disk_bytes = TRY(
        LimitSize(reader, value, key_path, kMinDisk, "a size such as \"20GiB\" or \"unlimited\""));
  } else {
    return false;
  }
  return true;
}

Status ParseDefaults(const Reader& reader, const toml::node& node, Defaults* out) {
  const std::string path = "defaults";
  const toml::table* table = TRY(reader.Table(node, path));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join(path, key.str());
    if (key == "max_concurrent_jobs") {
      out->max_concurrent_jobs = static_cast<int>(TRY(reader.Integer(value, key_path, 1, 256)));
    } else if (key == "retry") {
      out->retry = static_cast<int>(TRY(reader.Integer(value, key_path, 0, 10)));
    } else if (key == "run_on") {
      out->run_on = TRY(reader.Choice<RunOn>(
          value, key_path, {{"here", RunOn::kHere}, {"workers", RunOn::kWorkers}}));
    } else if (key == "deadline") {
      out->deadline_ms = TRY(reader.Duration(value, key_path));
    } else if (key == "output_limit") {
      std::string text = TRY(reader.String(value, key_path));
      Result<uint64_t> bytes = ParseSize(text);
      if (!bytes)
        return reader.Fail(value, key_path, bytes.error().message() + "; " + bytes.error().hint());
      if (*bytes < kMinOutputLimit)
        return reader.Fail(value, key_path, "expected at least 4KiB, got " + Quote(text));
      out->output_limit_bytes = *bytes;
    } else if (key == "network") {
      out->network = TRY(reader.Choice(value, key_path, kNetworkModes));
    } else if (key == "workspace") {
      out->workspace = TRY(reader.Choice<WorkspaceBackend>(value, key_path,
                                                           {{"auto", WorkspaceBackend::kAuto},
                                                            {"overlay", WorkspaceBackend::kOverlay},
                                                            {"copy", WorkspaceBackend::kCopy}}));
    } else if (key == "branch") {
      out->branch_template = TRY(BranchTemplate(reader, value, key_path));
    } else if (key == "max_depth") {
      out->max_depth = static_cast<int>(TRY(reader.Integer(value, key_path, 0, 8)));
    } else if (!TRY(ParseLimit(reader, key.str(), value, key_path, &out->limits))) {
      return reader.Unknown(
          value, key_path,
          {"max_concurrent_jobs", "retry", "run_on", "deadline", "output_limit", "network",
           "workspace", "branch", "max_depth", "memory", "pids", "cpus", "disk"});
    }
  }
  return {};
}

// One allowed argv prefix of [approvals] commands: a program (a command name or an absolute
// path) and, optionally, its first arguments.
Result<std::vector<std::string>> CommandPrefix(const Reader& reader, const toml::node& node,
                                               const std::string& path) {
  if (node.is_string())
    return reader.Fail(node, path,
                       "expected an argv prefix as a list, got a string; write [\"npm\", \"test\"] "
                       "for `npm test`");
  std::vector<std::string> prefix = TRY(reader.Strings(node, path));
  if (prefix.empty())
    return reader.Fail(node, path, "is empty; an allowed prefix names at least the program");
  for (size_t i = 0; i < prefix.size(); ++i) {
    const toml::node& item = *node.as_array()->get(i);
    if (prefix[i].find('\0') != std::string::npos)
      return reader.Fail(item, Index(path, i), "must not contain a NUL byte");
    if (prefix[i].find_first_not_of(" \t\n\r\v\f") == std::string::npos)
      return reader.Fail(item, Index(path, i), "must not be only whitespace");
  }
  const std::string& program = prefix[0];
  const toml::node& first = *node.as_array()->get(0);
  if (program.find('/') != std::string::npos && program[0] != '/')
    return reader.Fail(first, Index(path, 0),
                       Quote(program) +
                           " is a relative path, which the workspace could provide; name a "
                           "command (\"npm\") or an absolute path (\"/usr/bin/npm\")");
  if (IsShellProgram(program))
    return reader.Fail(first, Index(path, 0),
                       Quote(program) +
                           " is a shell, and shells are always declined as programs; allow the "
                           "command the shell would run instead");
  if (program.find('=') != std::string::npos && IsEnvName(program.substr(0, program.find('='))))
    return reader.Fail(first, Index(path, 0),
                       Quote(program) +
                           " is a variable assignment, and commands that start with one are "
                           "always declined");
  return prefix;
}

// [approvals] or [agents.NAME.approvals].
Result<ApprovalRules> ParseApprovals(const Reader& reader, const toml::node& node,
                                     const std::string& path) {
  const toml::table* table = TRY(reader.Table(node, path));
  ApprovalRules rules;
  for (const auto& [key, value] : *table) {
    std::string key_path = Join(path, key.str());
    if (key != "commands") return reader.Unknown(value, key_path, {"commands"});
    TRY(reader.Each(value, key_path, "an array of argv prefixes, e.g. [[\"npm\", \"test\"]]",
                    [&](const toml::node& item, const std::string& item_path, size_t) -> Status {
                      rules.commands.push_back(TRY(CommandPrefix(reader, item, item_path)));
                      return {};
                    }));
  }
  return rules;
}

Result<Agent> ParseAgent(const Reader& reader, const std::string& name, const toml::node& node) {
  const std::string path = Join("agents", name);
  if (!IsProfileName(name))
    return reader.Fail(node, path,
                       "agent names are lower-case letters, digits, '_' and '-', starting with a "
                       "letter or digit, at most 64 characters");
  const toml::table* table = TRY(reader.Table(node, path));
  Agent agent;
  agent.name = name;
  // Capability and provider decide which other keys are allowed, so they are read first.
  const toml::node* capability = table->get("capability");
  if (capability == nullptr)
    return reader.Fail(node, Join(path, "capability"),
                       "missing; every agent says capability = \"read\" or \"write\"");
  agent.capability =
      TRY(reader.Choice<Capability>(*capability, Join(path, "capability"),
                                    {{"read", Capability::kRead}, {"write", Capability::kWrite}}));
  if (const toml::node* provider = table->get("provider")) {
    agent.provider = TRY(reader.String(*provider, Join(path, "provider")));
    if (!IsProfileName(agent.provider))
      return reader.Fail(*provider, Join(path, "provider"),
                         "expected a provider name (codex, claude, gemini, grok, command, or one "
                         "defined in your config), got " +
                             Quote(agent.provider));
  }
  if (const toml::node* protocol = table->get("protocol")) {
    agent.protocol = TRY(reader.Choice<AgentProtocol>(
        *protocol, Join(path, "protocol"),
        {{"exec", AgentProtocol::kExec}, {"app-server", AgentProtocol::kAppServer}}));
    if (agent.provider != "codex")
      return reader.Fail(
          *protocol, Join(path, "protocol"),
          "only the \"codex\" provider has a protocol (provider is " + Quote(agent.provider) + ")");
  }
  bool write = agent.capability == Capability::kWrite;
  const toml::node* writable = nullptr;
  for (const auto& [key, value] : *table) {
    std::string key_path = Join(path, key.str());
    if (key == "capability" || key == "provider" || key == "protocol") {
      continue;
    } else if (key == "approvals") {
      if (agent.protocol != AgentProtocol::kAppServer)
        return reader.Fail(value, key_path,
                           "approvals apply only to agents with protocol = \"app-server\"");
      agent.approvals = TRY(ParseApprovals(reader, value, key_path));
    } else if (key == "model") {
      agent.model = TRY(reader.NonEmptyString(value, key_path));
    } else if (key == "effort") {
      agent.effort = TRY(reader.NonEmptyString(value, key_path));
    } else if (key == "argv") {
      if (agent.provider != "command")
        return reader.Fail(value, key_path,
                           "only the \"command\" provider takes an argv (provider is " +
                               Quote(agent.provider) + ")");
      agent.argv = TRY(reader.Strings(value, key_path));
      if (agent.argv.empty()) return reader.Fail(value, key_path, "must name a program");
    } else if (key == "writable") {
      if (!write)
        return reader.Fail(value, key_path,
                           "only write agents have writable paths (capability is \"read\")");
      writable = &value;
      agent.writable = TRY(Globs(reader, value, key_path));
      if (agent.writable.patterns().empty())
        return reader.Fail(value, key_path, "is empty; a write agent must say where it may write");
      const std::vector<std::string>& patterns = agent.writable.patterns();
      if (std::all_of(patterns.begin(), patterns.end(),
                      [](const std::string& p) { return p[0] == '!'; }))
        return reader.Fail(value, key_path,
                           "has only exclusions ('!'), so nothing would be writable");
      TRY(CheckProtected(reader, *value.as_array(), key_path, agent.writable));
    } else if (key == "grants") {
      agent.grants = TRY(Grants(reader, value, key_path, /*for_checks=*/false));
    } else if (key == "access") {
      agent.access = TRY(reader.Choice<Access>(
          value, key_path, {{"bounded", Access::kBounded}, {"full", Access::kFull}}));
      if (agent.access == Access::kFull && !write)
        return reader.Fail(value, key_path, "access = \"full\" is only for write agents");
    } else if (key == "deadline") {
      agent.deadline_ms = TRY(reader.Duration(value, key_path));
    } else if (key == "network") {
      agent.network = TRY(reader.Choice(value, key_path, kNetworkModes));
    } else if (!TRY(ParseLimit(reader, key.str(), value, key_path, &agent.limits))) {
      return reader.Unknown(
          value, key_path,
          {"capability", "provider", "protocol", "model", "effort", "argv", "writable", "grants",
           "access", "deadline", "network", "memory", "pids", "cpus", "disk", "approvals"});
    }
  }
  if (write && writable == nullptr)
    return reader.Fail(node, Join(path, "writable"),
                       "missing; a write agent must say where it may write, e.g. writable = "
                       "[\"src/**\", \"tests/**\"]");
  return agent;
}

Status ParseAgents(const Reader& reader, const toml::node& node, Policy* out) {
  const toml::table* table = TRY(reader.Table(node, "agents"));
  for (const auto& [name, value] : *table) {
    Agent agent = TRY(ParseAgent(reader, std::string(name.str()), value));
    out->agents.emplace(agent.name, std::move(agent));
  }
  return {};
}

}  // namespace

bool IsCheckNetwork(const std::string& value) { return value == "none" || value == "blackhole"; }

namespace {

Result<Check> ParseCheck(const Reader& reader, const toml::node& node, const std::string& path) {
  const toml::table* table = TRY(reader.Table(node, path));
  Check check;
  bool has_name = false;
  bool has_argv = false;
  for (const auto& [key, value] : *table) {
    std::string key_path = Join(path, key.str());
    if (key == "name") {
      check.name = TRY(reader.NonEmptyString(value, key_path));
      if (check.name.size() > 64 || std::any_of(check.name.begin(), check.name.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
          }))
        return reader.Fail(value, key_path,
                           "check names are at most 64 characters, without control characters");
      has_name = true;
    } else if (key == "argv") {
      check.argv = TRY(reader.Strings(value, key_path));
      if (check.argv.empty()) return reader.Fail(value, key_path, "must name a program");
      has_argv = true;
    } else if (key == "required") {
      check.required = TRY(reader.Bool(value, key_path));
    } else if (key == "timeout") {
      check.timeout_ms = TRY(reader.Duration(value, key_path));
    } else if (key == "expect_exit") {
      check.expect_exit = static_cast<int>(TRY(reader.Integer(value, key_path, 0, 255)));
    } else if (key == "grants") {
      check.grants = TRY(Grants(reader, value, key_path, /*for_checks=*/true));
    } else if (key == "network") {
      check.network = TRY(reader.String(value, key_path));
      if (!IsCheckNetwork(check.network))
        return reader.Fail(value, key_path,
                           "expected \"none\" or \"blackhole\", got " + Quote(check.network) +
                               " (checks never have network)");
    } else {
      return reader.Unknown(
          value, key_path,
          {"name", "argv", "required", "timeout", "expect_exit", "grants", "network"});
    }
  }
  if (!has_name) return reader.Fail(node, Join(path, "name"), "missing; every check has a name");
  if (!has_argv)
    return reader.Fail(node, Join(path, "argv"),
                       "missing; a check is a command as a list, e.g. argv = [\"make\", \"test\"]");
  return check;
}

Status ParseVerify(const Reader& reader, const toml::node& node, Policy* out) {
  if (node.is_table())
    return reader.Fail(node, "verify",
                       "expected an array of tables: write [[verify]], not [verify]");
  return reader.Each(node, "verify", "an array of tables ([[verify]])",
                     [&](const toml::node& item, const std::string& path, size_t) -> Status {
                       Check check = TRY(ParseCheck(reader, item, path));
                       for (size_t j = 0; j < out->verify.size(); ++j) {
                         if (out->verify[j].name == check.name)
                           return reader.Fail(*item.as_table()->get("name"), Join(path, "name"),
                                              "duplicate check name " + Quote(check.name) +
                                                  " (also " + Index("verify", j) + ")");
                       }
                       out->verify.push_back(std::move(check));
                       return {};
                     });
}

Status EnvName(const Reader& reader, const toml::node& node, const std::string& path,
               const std::string& name) {
  if (!IsEnvName(name))
    return reader.Fail(node, path,
                       Quote(name) + " is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
  if (StartsWith(name, "BERTH_"))
    return reader.Fail(node, path,
                       Quote(name) + ": BERTH_* variables are reserved for berth itself");
  return {};
}

Status ParseEnv(const Reader& reader, const toml::node& node, EnvPolicy* out) {
  const toml::table* table = TRY(reader.Table(node, "env"));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join("env", key.str());
    if (key == "pass") {
      out->pass = TRY(reader.Strings(value, key_path));
      std::set<std::string> seen;
      for (size_t i = 0; i < out->pass.size(); ++i) {
        const toml::node& item = *value.as_array()->get(i);
        TRY(EnvName(reader, item, Index(key_path, i), out->pass[i]));
        if (!seen.insert(out->pass[i]).second)
          return reader.Fail(item, Index(key_path, i), Quote(out->pass[i]) + " is listed twice");
      }
    } else if (key == "set") {
      const toml::table* set = TRY(reader.Table(value, key_path));
      for (const auto& [name, text] : *set) {
        std::string name_path = Join(key_path, name.str());
        TRY(EnvName(reader, text, name_path, std::string(name.str())));
        out->set[std::string(name.str())] = TRY(reader.String(text, name_path));
      }
    } else {
      return reader.Unknown(value, key_path, {"pass", "set"});
    }
  }
  for (const std::string& name : out->pass) {
    if (out->set.count(name) != 0)
      return reader.Fail(*table->get("set")->as_table()->get(name), Join("env.set", name),
                         Quote(name) + " is also in env.pass; keep one of them");
  }
  return {};
}

// A path [environment] produces: relative, plain segments, nothing of git's or berth's.
std::string EnvironmentPathProblem(const std::string& path) {
  if (path[0] == '/') return "must be relative to the repository root, got " + Quote(path);
  if (path.back() == '/') return "must not end with '/', got " + Quote(path);
  for (const std::string& part : Split(path, '/')) {
    if (part.empty() || part == "." || part == "..")
      return "must be a plain relative path (no empty, \".\" or \"..\" segments), got " +
             Quote(path);
    if (part.find_first_of("*?[\\") != std::string::npos)
      return "is a path, not a glob, got " + Quote(path);
  }
  const std::string first = path.substr(0, path.find('/'));
  if (first == ".git" || first == ".berth")
    return "nothing under .git/ or .berth/ is ever part of an environment, got " + Quote(path);
  return {};
}

// The kinds of [environment.services.NAME] berth can start.
const std::vector<std::string>& ServiceKinds() {
  static const std::vector<std::string> kinds = {"postgresql"};
  return kinds;
}

Status ParseService(const Reader& reader, const toml::node& node, const std::string& name,
                    Service* out) {
  const std::string path = Join("environment.services", name);
  const toml::table* table = TRY(reader.Table(node, path));
  out->name = name;
  for (const auto& [key, value] : *table) {
    std::string key_path = Join(path, key.str());
    if (key == "kind") {
      out->kind = TRY(reader.String(value, key_path));
      if (std::find(ServiceKinds().begin(), ServiceKinds().end(), out->kind) ==
          ServiceKinds().end())
        return reader.Fail(
            value, key_path,
            "berth starts only \"postgresql\" services so far, got " + Quote(out->kind));
    } else if (key == "setup") {
      TRY(reader.Each(value, key_path,
                      "an array of commands, e.g. setup = [[\"psql\", \"-f\", \"schema.sql\"]]",
                      [&](const toml::node& item, const std::string& item_path, size_t) -> Status {
                        if (!item.is_array())
                          return reader.Fail(
                              item, item_path,
                              "expected a command as a list, e.g. [\"psql\", \"-f\", "
                              "\"schema.sql\"]");
                        std::vector<std::string> argv = TRY(reader.Strings(item, item_path));
                        if (argv.empty())
                          return reader.Fail(item, item_path, "must name a program");
                        out->setup.push_back(std::move(argv));
                        return {};
                      }));
    } else if (key == "key") {
      out->key = TRY(Globs(reader, value, key_path)).patterns();
    } else if (key == "url") {
      out->url = TRY(reader.String(value, key_path));
      TRY(EnvName(reader, value, key_path, out->url));
    } else {
      return reader.Unknown(value, key_path, {"kind", "setup", "key", "url"});
    }
  }
  if (out->kind.empty())
    return reader.Fail(node, Join(path, "kind"),
                       "missing; name the server, e.g. kind = \"postgresql\"");
  return {};
}

Status ParseServices(const Reader& reader, const toml::node& node, std::vector<Service>* out) {
  const toml::table* table = TRY(reader.Table(node, "environment.services"));
  for (const auto& [name, value] : *table) {
    const std::string text(name.str());
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
    if (!plain)
      return reader.Fail(
          value, Join("environment.services", text),
          "a service's name is lowercase letters, digits, - and _, got " + Quote(text));
    Service service;
    TRY(ParseService(reader, value, text, &service));
    for (const Service& other : *out)
      if (other.url == service.url)
        return reader.Fail(value, Join(Join("environment.services", text), "url"),
                           Quote(service.url) + " already names service " + Quote(other.name) +
                               "; give each service its own variable with url = \"NAME\"");
    out->push_back(std::move(service));
  }
  return {};
}

Status ParseEnvironment(const Reader& reader, const toml::node& node, Environment* out) {
  const toml::table* table = TRY(reader.Table(node, "environment"));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join("environment", key.str());
    if (key == "key") {
      out->key = TRY(Globs(reader, value, key_path)).patterns();
    } else if (key == "setup") {
      TRY(reader.Each(value, key_path, "an array of commands, e.g. setup = [[\"npm\", \"ci\"]]",
                      [&](const toml::node& item, const std::string& item_path, size_t) -> Status {
                        if (!item.is_array())
                          return reader.Fail(
                              item, item_path,
                              "expected a command as a list, e.g. [\"npm\", \"ci\"]");
                        std::vector<std::string> argv = TRY(reader.Strings(item, item_path));
                        if (argv.empty())
                          return reader.Fail(item, item_path, "must name a program");
                        out->setup.push_back(std::move(argv));
                        return {};
                      }));
    } else if (key == "paths") {
      out->paths = TRY(reader.Strings(value, key_path));
      for (size_t i = 0; i < out->paths.size(); ++i) {
        const toml::node& item = *value.as_array()->get(i);
        if (std::string problem = EnvironmentPathProblem(out->paths[i]); !problem.empty())
          return reader.Fail(item, Index(key_path, i), problem);
        for (size_t j = 0; j < i; ++j) {
          const std::string& a = out->paths[j];
          const std::string& b = out->paths[i];
          if (a == b || StartsWith(b, a + "/") || StartsWith(a, b + "/"))
            return reader.Fail(item, Index(key_path, i),
                               Quote(b) + " overlaps " + Quote(a) + " (" + Index(key_path, j) +
                                   "); list each produced tree once");
        }
      }
    } else if (key == "hosts") {
      out->hosts = TRY(reader.Strings(value, key_path));
      for (size_t i = 0; i < out->hosts.size(); ++i) {
        std::string problem = GrantProblem("net:" + out->hosts[i]);
        if (!problem.empty())
          return reader.Fail(*value.as_array()->get(i), Index(key_path, i), problem);
      }
    } else if (key == "grants") {
      out->grants = TRY(Grants(reader, value, key_path, /*for_checks=*/false));
      for (size_t i = 0; i < out->grants.size(); ++i) {
        if (!StartsWith(out->grants[i], "cache:") && !StartsWith(out->grants[i], "read:"))
          return reader.Fail(*value.as_array()->get(i), Index(key_path, i),
                             "setup takes cache: and read: grants only (its network is "
                             "environment.hosts), got " +
                                 Quote(out->grants[i]));
      }
    } else if (key == "pass") {
      out->pass = TRY(reader.Strings(value, key_path));
      std::set<std::string> seen;
      for (size_t i = 0; i < out->pass.size(); ++i) {
        const toml::node& item = *value.as_array()->get(i);
        TRY(EnvName(reader, item, Index(key_path, i), out->pass[i]));
        if (!seen.insert(out->pass[i]).second)
          return reader.Fail(item, Index(key_path, i), Quote(out->pass[i]) + " is listed twice");
      }
    } else if (key == "timeout") {
      out->timeout_ms = TRY(reader.Duration(value, key_path));
    } else if (key == "services") {
      TRY(ParseServices(reader, value, &out->services));
    } else {
      return reader.Unknown(
          value, key_path,
          {"key", "setup", "paths", "hosts", "grants", "pass", "timeout", "services"});
    }
  }
  // A database-only environment (services, no dependency tree) needs neither; otherwise
  // setup produces paths, and both are needed.
  const bool services_only = !out->services.empty() && out->setup.empty() && out->paths.empty();
  if (services_only) return {};
  if (out->setup.empty())
    return reader.Fail(node, "environment.setup",
                       "missing or empty; an environment is built by at least one command, e.g. "
                       "setup = [[\"npm\", \"ci\"]] (an environment of services only has "
                       "neither setup nor paths)");
  if (out->paths.empty())
    return reader.Fail(
        node, "environment.paths",
        "missing or empty; name what setup produces, e.g. paths = [\"node_modules\"]");
  return {};
}

Status ParseInclude(const Reader& reader, const toml::node& node, Include* out) {
  const toml::table* table = TRY(reader.Table(node, "include"));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join("include", key.str());
    if (key == "paths") {
      GlobSet set = TRY(Globs(reader, value, key_path));
      for (size_t i = 0; i < set.patterns().size(); ++i) {
        const std::string& pattern = set.patterns()[i];
        if (pattern[0] != '!' && (pattern == ".git" || StartsWith(pattern, ".git/")))
          return reader.Fail(*value.as_array()->get(i), Index(key_path, i),
                             "nothing under .git/ is ever copied into a workspace");
      }
      out->paths = set.patterns();
    } else if (key == "secrets") {
      out->secrets = TRY(reader.Bool(value, key_path));
    } else {
      return reader.Unknown(value, key_path, {"paths", "secrets"});
    }
  }
  return {};
}

Status ParseLanding(const Reader& reader, const toml::node& node, Landing* out) {
  const toml::table* table = TRY(reader.Table(node, "landing"));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join("landing", key.str());
    if (key == "auto") {
      out->auto_land = TRY(reader.Bool(value, key_path));
    } else if (key == "target") {
      out->target = TRY(reader.NonEmptyString(value, key_path));
      std::string problem = RefNameProblem(out->target);
      if (!problem.empty())
        return reader.Fail(value, key_path, "branch " + Quote(out->target) + " " + problem);
    } else if (key == "allow_unverified") {
      out->allow_unverified = TRY(reader.Bool(value, key_path));
    } else {
      return reader.Unknown(value, key_path, {"auto", "target", "allow_unverified"});
    }
  }
  return {};
}

Status ParseCommit(const Reader& reader, const toml::node& node, CommitPolicy* out) {
  const toml::table* table = TRY(reader.Table(node, "commit"));
  for (const auto& [key, value] : *table) {
    std::string key_path = Join("commit", key.str());
    if (key == "message") {
      out->message = TRY(reader.NonEmptyString(value, key_path));
      std::string problem = CommitTemplateProblem(out->message);
      if (!problem.empty()) return reader.Fail(value, key_path, "the message template " + problem);
    } else {
      return reader.Unknown(value, key_path, {"message"});
    }
  }
  return {};
}

Status ParseVersion(const Reader& reader, const toml::table& root) {
  const std::string supported = "this berth reads policy version " + std::to_string(kPolicyVersion);
  const toml::node* version = root.get("version");
  if (version == nullptr)
    return reader.FailAt(1, "version",
                         "missing; " + supported + " (start the file with version = " +
                             std::to_string(kPolicyVersion) + ")");
  const toml::value<int64_t>* number = version->as_integer();
  if (number == nullptr) return reader.WrongType(*version, "version", "an integer");
  if (number->get() != kPolicyVersion)
    return reader.Fail(
        *version, "version",
        "policy version " + std::to_string(number->get()) + " is not supported; " + supported);
  return {};
}

}  // namespace

Result<Policy> ParsePolicy(const std::string& text, const std::string& source_name) {
  Reader reader(source_name);
  if (text.size() > kMaxPolicyBytes) return reader.FailAt(1, "", "the policy is larger than 1 MiB");
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    return reader.FailAt(error.source().begin.line, "", std::string(error.description()));
  }
  const toml::table& root = parsed.table();
  TRY(ParseVersion(reader, root));
  Policy policy;
  for (const auto& [key, value] : root) {
    if (key == "version") {
      continue;
    } else if (key == "defaults") {
      TRY(ParseDefaults(reader, value, &policy.defaults));
    } else if (key == "agents") {
      TRY(ParseAgents(reader, value, &policy));
    } else if (key == "verify") {
      TRY(ParseVerify(reader, value, &policy));
    } else if (key == "environment") {
      policy.environment.emplace();
      TRY(ParseEnvironment(reader, value, &*policy.environment));
    } else if (key == "env") {
      TRY(ParseEnv(reader, value, &policy.env));
    } else if (key == "include") {
      TRY(ParseInclude(reader, value, &policy.include));
    } else if (key == "landing") {
      TRY(ParseLanding(reader, value, &policy.landing));
    } else if (key == "commit") {
      TRY(ParseCommit(reader, value, &policy.commit));
    } else if (key == "approvals") {
      policy.approvals = TRY(ParseApprovals(reader, value, "approvals"));
    } else {
      return reader.Unknown(value, std::string(key.str()),
                            {"version", "defaults", "agents", "verify", "environment", "env",
                             "include", "landing", "commit", "approvals"});
    }
  }
  policy.sha256 = Sha256Hex(text);
  return policy;
}

Result<Policy> LoadPolicy(const std::string& repo_root) {
  std::string path = repo_root + "/" + kPolicyPath;
  Result<std::string> text = sys::ReadFile(path);
  if (!text) {
    if (text.error().sys_errno() == ENOENT)
      return Error(Cause::kNotFound, std::string("no policy at ") + kPolicyPath, 0,
                   "run `berth init` to write a starter policy");
    Error error = text.error();
    error.AddContext(std::string("reading ") + kPolicyPath);
    return error;
  }
  return ParsePolicy(*text, kPolicyPath);
}

Policy DefaultPolicy() { return Policy{}; }

const char* CapabilityName(Capability c) {
  switch (c) {
    case Capability::kRead:
      return "read";
    case Capability::kWrite:
      return "write";
  }
  return "read";
}

const char* BackendName(WorkspaceBackend b) {
  switch (b) {
    case WorkspaceBackend::kAuto:
      return "auto";
    case WorkspaceBackend::kOverlay:
      return "overlay";
    case WorkspaceBackend::kCopy:
      return "copy";
  }
  return "auto";
}

const char* NetworkModeName(NetworkMode n) {
  switch (n) {
    case NetworkMode::kNone:
      return "none";
    case NetworkMode::kProvider:
      return "provider";
    case NetworkMode::kAllowlist:
      return "allowlist";
    case NetworkMode::kOpen:
      return "open";
  }
  return "none";
}

const char* AgentProtocolName(AgentProtocol p) {
  return p == AgentProtocol::kAppServer ? "app-server" : "exec";
}

ApprovalRules EffectiveApprovals(const Policy& policy, const Agent& agent) {
  return agent.approvals ? *agent.approvals : policy.approvals;
}

}  // namespace berth::policy
