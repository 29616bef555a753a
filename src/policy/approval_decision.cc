#include "policy/approval_decision.h"

#include <string_view>

#include "base/quote.h"
#include "base/result.h"
#include "policy/command_line.h"
#include "policy/syntax.h"

namespace berth::policy {

namespace {

constexpr size_t kMaxShown = 200;  // bytes of a request's text quoted in a reason

// Text from the request made safe and short for a reason.
std::string Shown(std::string_view text) {
  bool cut = text.size() > kMaxShown;
  std::string shown = EscapeControls(text.substr(0, kMaxShown));
  return cut ? shown + "..." : shown;
}

// An argv for people: plain words as they are, the others in single quotes.
std::string ShownArgv(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    bool plain =
        !word.empty() && word.find_first_of(" \t\n'\"\\$`|&;<>(){}*?[~#") == std::string::npos;
    line += (line.empty() ? "" : " ") + (plain ? word : JoinCommandLine({word}));
  }
  return "`" + Shown(line) + "`";
}

ApprovalDecision Decide(Answer answer, const char* rule, std::string reason,
                        std::vector<std::string> argv = {}) {
  return ApprovalDecision{answer, rule, std::move(reason), std::move(argv)};
}

// `path` made absolute against `base` and lexically normalised: empty and "." segments
// dropped, ".." removing the segment before it (never above "/"). No filesystem access.
std::string NormalizePath(const std::string& base, const std::string& path) {
  std::string joined = !path.empty() && path[0] == '/' ? path : base + "/" + path;
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t slash = joined.find('/', start);
    if (slash == std::string::npos) slash = joined.size();
    std::string_view segment(joined.data() + start, slash - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = slash + 1;
  }
  std::string out;
  for (std::string_view segment : segments) out += "/" + std::string(segment);
  return out.empty() ? "/" : out;
}

// Whether normalised `path` is `root` or below it. An empty or relative root contains nothing.
bool IsWithin(const std::string& root, const std::string& path) {
  if (root.empty() || root[0] != '/') return false;
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

// Whether normalised `path`, inside `root`, has a segment ".git" below `root` (the
// repository's own .git or a nested one's).
bool IsInGitDir(const std::string& root, const std::string& path) {
  std::string rest = root == "/" ? path : path.substr(root.size());
  return rest == "/.git" || rest.find("/.git/") != std::string::npos ||
         (rest.size() >= 5 && rest.compare(rest.size() - 5, 5, "/.git") == 0);
}

ApprovalDecision DecideFileChange(const ApprovalRequest& request, const std::string& workspace) {
  if (!request.grant_root.empty())
    return Decide(Answer::kDecline, "root-grant",
                  "the file change asks for write access to all of " + Shown(request.grant_root) +
                      " for the session, which berth never grants");
  if (request.paths.empty())
    return Decide(Answer::kDecline, "file-change-paths-unknown",
                  "the file change does not say which paths it touches");
  std::string base = request.cwd.empty() ? workspace : NormalizePath(workspace, request.cwd);
  for (const std::string& path : request.paths) {
    if (path.empty() || path.find('\0') != std::string::npos)
      return Decide(Answer::kDecline, "file-change-paths-unknown",
                    "the file change names an empty or malformed path");
    std::string normal = NormalizePath(base, path);
    if (!IsWithin(workspace, normal))
      return Decide(Answer::kDecline, "file-change-outside",
                    "the file change touches " + Shown(normal) + ", outside the workspace");
    if (IsInGitDir(workspace, normal))
      return Decide(Answer::kDecline, "file-change-git",
                    "the file change touches " + Shown(normal) + ", inside .git");
  }
  std::string what = request.paths.size() == 1 ? Shown(request.paths[0])
                                               : std::to_string(request.paths.size()) + " paths";
  return Decide(Answer::kAccept, "file-change-inside",
                "the file change to " + what + " stays inside the workspace, outside .git");
}

std::string_view Basename(std::string_view program) {
  size_t slash = program.rfind('/');
  return slash == std::string_view::npos ? program : program.substr(slash + 1);
}

// [SHELL, -c or -lc, SCRIPT]: how Codex wraps one command line.
bool IsShellWrapper(const std::vector<std::string>& argv) {
  return argv.size() == 3 && IsShellProgram(argv[0]) && (argv[1] == "-c" || argv[1] == "-lc");
}

// NAME=VALUE, as a shell reads a leading assignment.
bool IsAssignment(const std::string& word) {
  size_t equals = word.find('=');
  return equals != std::string::npos && equals > 0 && IsEnvName(word.substr(0, equals));
}

// Whether the program the request names is the program a prefix names. Equal names match;
// otherwise both must have the same final component (so that a multi-call binary such as
// busybox, which acts on the name it was run as, is not taken for another of its names) and
// resolve to the same non-empty path.
bool SameProgram(const std::string& asked, const std::string& allowed,
                 const ApprovalContext& context) {
  if (asked == allowed) return true;
  if (asked.empty() || Basename(asked) != Basename(allowed) || !context.resolve) return false;
  std::string asked_path = context.resolve(asked);
  return !asked_path.empty() && asked_path == context.resolve(allowed);
}

bool Matches(const std::vector<std::string>& prefix, const std::vector<std::string>& argv,
             const ApprovalContext& context) {
  if (prefix.empty() || argv.size() < prefix.size()) return false;
  if (!SameProgram(argv[0], prefix[0], context)) return false;
  for (size_t i = 1; i < prefix.size(); ++i) {
    if (argv[i] != prefix[i]) return false;
  }
  return true;
}

ApprovalDecision DecideArgv(const ApprovalRules& rules, const std::vector<std::string>& argv,
                            const ApprovalContext& context, bool unwrapped) {
  if (argv.empty())
    return Decide(Answer::kDecline, "command-missing", "the command request has an empty argv");
  if (!unwrapped && IsShellWrapper(argv)) {
    Result<std::vector<std::string>> inner = SplitCommandLine(argv[2]);
    if (!inner)
      return Decide(Answer::kDecline, "shell-syntax",
                    "the script of " + ShownArgv(argv) + " is not one plain command (" +
                        inner.error().message() + ")");
    return DecideArgv(rules, *inner, context, /*unwrapped=*/true);
  }
  if (IsShellProgram(argv[0]))
    return Decide(Answer::kDecline, "shell-program",
                  "the command " + ShownArgv(argv) +
                      " runs a shell; only a shell -c or -lc wrapper around one plain command "
                      "is judged",
                  argv);
  if (IsAssignment(argv[0]))
    return Decide(Answer::kDecline, "env-prefix",
                  "the command " + ShownArgv(argv) + " starts with the assignment " +
                      Shown(argv[0]) + ", which could change what the program does",
                  argv);
  if (argv[0].find('/') != std::string::npos && argv[0][0] != '/')
    return Decide(Answer::kDecline, "relative-program",
                  "the command " + ShownArgv(argv) +
                      " runs a program by a relative path, which the workspace could provide",
                  argv);
  for (const std::vector<std::string>& prefix : rules.commands) {
    if (Matches(prefix, argv, context))
      return Decide(
          Answer::kAccept, "command-prefix",
          "the command " + ShownArgv(argv) + " matches the allowed prefix " + ShownArgv(prefix),
          argv);
  }
  if (rules.commands.empty())
    return Decide(
        Answer::kDecline, "no-command-rules",
        "the command " + ShownArgv(argv) + " is not allowed: the policy allows no commands", argv);
  return Decide(Answer::kDecline, "command-not-allowed",
                "the command " + ShownArgv(argv) + " matches no allowed prefix", argv);
}

ApprovalDecision DecideCommandLine(const ApprovalRules& rules, const std::string& line,
                                   const ApprovalContext& context) {
  Result<std::vector<std::string>> argv = SplitCommandLine(line);
  if (!argv)
    return Decide(Answer::kDecline, "shell-syntax",
                  "the command `" + Shown(line) + "` is not one plain command (" +
                      argv.error().message() + ")");
  return DecideArgv(rules, *argv, context, /*unwrapped=*/false);
}

ApprovalDecision DecideCommand(const ApprovalRules& rules, const ApprovalRequest& request,
                               const ApprovalContext& context, const std::string& workspace) {
  if (!request.cwd.empty()) {
    std::string cwd = NormalizePath(workspace, request.cwd);
    if (!IsWithin(workspace, cwd))
      return Decide(Answer::kDecline, "cwd-outside",
                    "the command would run in " + Shown(cwd) + ", outside the workspace");
  }
  if (!request.command_line && !request.argv)
    return Decide(Answer::kDecline, "command-missing", "the command request names no command");
  // Both shapes at once: each must be accepted on its own, so neither can smuggle the other.
  if (request.command_line) {
    ApprovalDecision line = DecideCommandLine(rules, *request.command_line, context);
    if (line.answer == Answer::kDecline || !request.argv) return line;
  }
  return DecideArgv(rules, *request.argv, context, /*unwrapped=*/false);
}

}  // namespace

const char* ApprovalKindName(ApprovalKind kind) {
  switch (kind) {
    case ApprovalKind::kCommand:
      return "command";
    case ApprovalKind::kFileChange:
      return "file-change";
    case ApprovalKind::kPermissions:
      return "permissions";
    case ApprovalKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool IsShellProgram(const std::string& program) {
  if (program.empty() || (program.find('/') != std::string::npos && program[0] != '/'))
    return false;
  std::string_view name = Basename(program);
  return name == "bash" || name == "sh" || name == "zsh" || name == "dash";
}

const char* AnswerName(Answer answer) { return answer == Answer::kAccept ? "accept" : "decline"; }

ApprovalDecision DecideApproval(const ApprovalRules& rules, const ApprovalRequest& request,
                                const ApprovalContext& context) {
  // An unusable workspace contains nothing, so every path and cwd falls outside it.
  std::string workspace = context.workspace.empty() || context.workspace[0] != '/'
                              ? std::string()
                              : NormalizePath("/", context.workspace);
  switch (request.kind) {
    case ApprovalKind::kUnknown:
      return Decide(Answer::kDecline, "unknown-request",
                    "the request " + Shown(request.method) +
                        " is of a kind berth does not know, and unknown requests are declined");
    case ApprovalKind::kPermissions:
      return Decide(Answer::kDecline, "permission-request",
                    "the request " + Shown(request.method) +
                        " asks for more permissions, which berth never grants inside a job");
    case ApprovalKind::kFileChange:
      return DecideFileChange(request, workspace);
    case ApprovalKind::kCommand:
      return DecideCommand(rules, request, context, workspace);
  }
  return Decide(Answer::kDecline, "unknown-request", "the request is of no known kind");
}

}  // namespace berth::policy
