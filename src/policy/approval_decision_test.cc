#include "policy/approval_decision.h"

#include <gtest/gtest.h>

#include <map>

namespace berth::policy {
namespace {

constexpr const char* kWorkspace = "/ws/repo";
constexpr const char* kNpm = "/usr/lib/node_modules/npm/bin/npm-cli.js";

// What the job's PATH and the filesystem would say, for the paths the cases use. `true` and
// `rm` are one multi-call binary, as with busybox.
std::string FakeResolve(const std::string& name_or_path) {
  static const std::map<std::string, std::string> kResolved = {
      {"npm", kNpm},
      {"/usr/bin/npm", kNpm},
      {"/usr/local/bin/npm", kNpm},
      {"/tmp/npm", "/tmp/npm"},
      {"make", "/usr/bin/make"},
      {"/usr/bin/make", "/usr/bin/make"},
      {"lint", "/usr/local/bin/lint"},
      {"/usr/local/bin/lint", "/usr/local/bin/lint"},
      {"true", "/bin/busybox"},
      {"rm", "/bin/busybox"},
      {"/bin/rm", "/bin/busybox"},
      {"/bin/true", "/bin/busybox"},
  };
  auto found = kResolved.find(name_or_path);
  return found == kResolved.end() ? "" : found->second;
}

ApprovalRules Rules() {
  return ApprovalRules{{{"npm", "test"}, {"make", "check"}, {"true"}, {"/usr/local/bin/lint"}}};
}

ApprovalContext Context() { return ApprovalContext{kWorkspace, FakeResolve}; }

ApprovalRequest Line(const std::string& line, const std::string& cwd = "") {
  ApprovalRequest request;
  request.kind = ApprovalKind::kCommand;
  request.method = "item/commandExecution/requestApproval";
  request.command_line = line;
  request.cwd = cwd;
  return request;
}

ApprovalRequest Argv(const std::vector<std::string>& argv, const std::string& cwd = "") {
  ApprovalRequest request;
  request.kind = ApprovalKind::kCommand;
  request.method = "execCommandApproval";
  request.argv = argv;
  request.cwd = cwd;
  return request;
}

ApprovalRequest Both(const std::string& line, const std::vector<std::string>& argv) {
  ApprovalRequest request = Line(line);
  request.argv = argv;
  return request;
}

ApprovalRequest NoCommand() {
  ApprovalRequest request;
  request.kind = ApprovalKind::kCommand;
  return request;
}

ApprovalRequest Files(const std::vector<std::string>& paths, const std::string& cwd = "",
                      const std::string& grant_root = "") {
  ApprovalRequest request;
  request.kind = ApprovalKind::kFileChange;
  request.method = "item/fileChange/requestApproval";
  request.paths = paths;
  request.cwd = cwd;
  request.grant_root = grant_root;
  return request;
}

ApprovalRequest OfKind(ApprovalKind kind, const std::string& method) {
  ApprovalRequest request;
  request.kind = kind;
  request.method = method;
  return request;
}

using Words = std::vector<std::string>;

struct Case {
  const char* name;
  ApprovalRequest request;
  Answer answer;
  std::string rule;
  Words argv;                   // the decision's argv
  std::string reason_has = "";  // a fragment the reason must contain
};

constexpr Answer kAccept = Answer::kAccept;
constexpr Answer kDecline = Answer::kDecline;

const Case kCases[] = {
    // Prefix matching.
    {"extra arguments",
     Line("npm test -- --watch=false"),
     kAccept,
     "command-prefix",
     {"npm", "test", "--", "--watch=false"},
     "`npm test`"},
    {"exact prefix", Line("npm test"), kAccept, "command-prefix", {"npm", "test"}},
    {"other subcommand",
     Line("npm publish"),
     kDecline,
     "command-not-allowed",
     {"npm", "publish"},
     "npm publish"},
    {"longer word", Line("npm testx"), kDecline, "command-not-allowed", {"npm", "testx"}},
    {"shorter than the prefix", Line("npm"), kDecline, "command-not-allowed", {"npm"}},
    {"program-only prefix", Line("true --help"), kAccept, "command-prefix", {"true", "--help"}},
    // Quoting.
    {"double-quoted argument",
     Line("npm test \"a b\""),
     kAccept,
     "command-prefix",
     {"npm", "test", "a b"}},
    {"quoted program", Line("'npm' test"), kAccept, "command-prefix", {"npm", "test"}},
    {"escaped space makes one word",
     Line("npm\\ test"),
     kDecline,
     "command-not-allowed",
     {"npm test"}},
    {"quoted prefix word", Line("npm \"test\""), kAccept, "command-prefix", {"npm", "test"}},
    // Environment prefixes.
    {"env prefix",
     Line("FOO=1 npm test"),
     kDecline,
     "env-prefix",
     {"FOO=1", "npm", "test"},
     "FOO=1"},
    {"LD_PRELOAD prefix",
     Line("LD_PRELOAD=/tmp/evil.so npm test"),
     kDecline,
     "env-prefix",
     {"LD_PRELOAD=/tmp/evil.so", "npm", "test"}},
    {"legacy argv env prefix",
     Argv({"NODE_OPTIONS=--require=x", "npm", "test"}),
     kDecline,
     "env-prefix",
     {"NODE_OPTIONS=--require=x", "npm", "test"}},
    {"assignment as a later argument is fine",
     Line("make check V=1"),
     kAccept,
     "command-prefix",
     {"make", "check", "V=1"}},
    // Program paths.
    {"absolute path to the same binary",
     Line("/usr/bin/npm test"),
     kAccept,
     "command-prefix",
     {"/usr/bin/npm", "test"}},
    {"another absolute path to the same binary",
     Line("/usr/local/bin/npm test"),
     kAccept,
     "command-prefix",
     {"/usr/local/bin/npm", "test"}},
    {"absolute path to a different binary",
     Line("/tmp/npm test"),
     kDecline,
     "command-not-allowed",
     {"/tmp/npm", "test"}},
    {"unresolvable absolute path",
     Line("/nowhere/npm test"),
     kDecline,
     "command-not-allowed",
     {"/nowhere/npm", "test"}},
    {"multi-call binary under another name",
     Line("/bin/rm -rf x"),
     kDecline,
     "command-not-allowed",
     {"/bin/rm", "-rf", "x"}},
    {"multi-call binary under its allowed name",
     Line("/bin/true"),
     kAccept,
     "command-prefix",
     {"/bin/true"}},
    {"bare name for an absolute prefix",
     Line("lint --fix"),
     kAccept,
     "command-prefix",
     {"lint", "--fix"}},
    {"dot-slash program", Line("./npm test"), kDecline, "relative-program", {"./npm", "test"}},
    {"dot-dot program",
     Line("../bin/npm test"),
     kDecline,
     "relative-program",
     {"../bin/npm", "test"}},
    {"node_modules program",
     Line("node_modules/.bin/npm test"),
     kDecline,
     "relative-program",
     {"node_modules/.bin/npm", "test"}},
    // Working directory.
    {"cwd inside", Line("npm test", "/ws/repo/sub"), kAccept, "command-prefix", {"npm", "test"}},
    {"cwd is the workspace",
     Line("npm test", "/ws/repo/"),
     kAccept,
     "command-prefix",
     {"npm", "test"}},
    {"cwd escapes with ..",
     Line("npm test", "/ws/repo/../other"),
     kDecline,
     "cwd-outside",
     {},
     "/ws/other"},
    {"cwd elsewhere", Argv({"npm", "test"}, "/etc"), kDecline, "cwd-outside", {}},
    {"cwd shares a name prefix", Line("npm test", "/ws/repository"), kDecline, "cwd-outside", {}},
    {"cwd .. inside stays inside",
     Line("npm test", "/ws/repo/a/../b"),
     kAccept,
     "command-prefix",
     {"npm", "test"}},
    // Shell syntax.
    {"pipe", Line("npm test | tee log"), kDecline, "shell-syntax", {}, "pipe"},
    {"semicolon", Line("npm test; rm -rf /"), kDecline, "shell-syntax", {}, "';'"},
    {"and-list", Line("npm test && rm x"), kDecline, "shell-syntax", {}, "'&&'"},
    {"or-list", Line("npm test || true"), kDecline, "shell-syntax", {}, "'||'"},
    {"background", Line("npm test &"), kDecline, "shell-syntax", {}, "'&'"},
    {"command substitution", Line("npm test $(id)"), kDecline, "shell-syntax", {}, "'$('"},
    {"backquotes", Line("npm test `id`"), kDecline, "shell-syntax", {}, "'`'"},
    {"output redirection", Line("npm test > out"), kDecline, "shell-syntax", {}, "redirection"},
    {"input redirection", Line("npm test < in"), kDecline, "shell-syntax", {}, "redirection"},
    {"glob", Line("npm test *.js"), kDecline, "shell-syntax", {}, "glob"},
    {"variable", Line("npm test $HOME"), kDecline, "shell-syntax", {}, "variable expansion"},
    {"newline", Line("npm test\nrm -rf /"), kDecline, "shell-syntax", {}, "newline"},
    {"unterminated quote", Line("npm test 'x"), kDecline, "shell-syntax", {}, "unterminated"},
    {"empty line", Line(""), kDecline, "shell-syntax", {}, "empty"},
    // Shell wrappers.
    {"bash -lc allowed inner",
     Argv({"bash", "-lc", "npm test"}),
     kAccept,
     "command-prefix",
     {"npm", "test"}},
    {"absolute sh -c allowed inner",
     Argv({"/bin/sh", "-c", "make check -j2"}),
     kAccept,
     "command-prefix",
     {"make", "check", "-j2"}},
    {"bash -lc disallowed inner",
     Argv({"bash", "-lc", "npm publish"}),
     kDecline,
     "command-not-allowed",
     {"npm", "publish"}},
    {"wrapper with a pipe inside",
     Argv({"bash", "-lc", "npm test | sh"}),
     kDecline,
     "shell-syntax",
     {},
     "pipe"},
    {"wrapper in a command line",
     Line("bash -lc 'npm test'"),
     kAccept,
     "command-prefix",
     {"npm", "test"}},
    {"wrapper inside a wrapper",
     Argv({"bash", "-lc", "bash -lc 'npm test'"}),
     kDecline,
     "shell-program",
     {"bash", "-lc", "npm test"}},
    {"shell running a script",
     Argv({"bash", "scripts/test.sh"}),
     kDecline,
     "shell-program",
     {"bash", "scripts/test.sh"}},
    {"wrapper with an extra argument",
     Argv({"sh", "-c", "npm test", "x"}),
     kDecline,
     "shell-program",
     {"sh", "-c", "npm test", "x"}},
    {"wrapper with env prefix inside",
     Argv({"zsh", "-lc", "FOO=1 npm test"}),
     kDecline,
     "env-prefix",
     {"FOO=1", "npm", "test"}},
    {"dash -c empty script", Argv({"dash", "-c", ""}), kDecline, "shell-syntax", {}, "empty"},
    // Legacy argv and empty strings.
    {"legacy argv",
     Argv({"npm", "test", "--coverage"}),
     kAccept,
     "command-prefix",
     {"npm", "test", "--coverage"}},
    {"legacy argv words are not re-split",
     Argv({"npm", "test; rm -rf /"}),
     kDecline,
     "command-not-allowed",
     {"npm", "test; rm -rf /"}},
    {"legacy argv empty", Argv({}), kDecline, "command-missing", {}},
    {"legacy argv empty program",
     Argv({"", "test"}),
     kDecline,
     "command-not-allowed",
     {"", "test"}},
    {"no command at all", NoCommand(), kDecline, "command-missing", {}},
    {"both shapes agree",
     Both("npm test", {"npm", "test"}),
     kAccept,
     "command-prefix",
     {"npm", "test"}},
    {"both shapes, argv not allowed",
     Both("npm test", {"rm", "-rf", "/"}),
     kDecline,
     "command-not-allowed",
     {"rm", "-rf", "/"}},
    {"both shapes, line not allowed",
     Both("rm -rf /", {"npm", "test"}),
     kDecline,
     "command-not-allowed",
     {"rm", "-rf", "/"}},
    // File changes.
    {"file inside", Files({"src/a.c"}), kAccept, "file-change-inside", {}},
    {"absolute file inside",
     Files({"/ws/repo/src/a.c", "README.md"}),
     kAccept,
     "file-change-inside",
     {}},
    {"file .. escapes",
     Files({"../etc/passwd"}),
     kDecline,
     "file-change-outside",
     {},
     "/ws/etc/passwd"},
    {"file .. through a directory", Files({"src/../../x"}), kDecline, "file-change-outside", {}},
    {"file relative to cwd stays inside",
     Files({"../a.c"}, "/ws/repo/sub"),
     kAccept,
     "file-change-inside",
     {}},
    {"file relative to cwd escapes",
     Files({"../../x"}, "/ws/repo/sub"),
     kDecline,
     "file-change-outside",
     {}},
    {"file shares a name prefix", Files({"/ws/repository/x"}), kDecline, "file-change-outside", {}},
    {"file in .git", Files({".git/hooks/pre-commit"}), kDecline, "file-change-git", {}},
    {"the .git directory itself", Files({"/ws/repo/.git"}), kDecline, "file-change-git", {}},
    {"file in a nested .git", Files({"sub/.git/config"}), kDecline, "file-change-git", {}},
    {".. back into .git", Files({"src/../.git/config"}), kDecline, "file-change-git", {}},
    {".gitignore is not .git",
     Files({".gitignore", ".github/x.yml"}),
     kAccept,
     "file-change-inside",
     {}},
    {"one bad path declines all",
     Files({"src/a.c", "/etc/passwd"}),
     kDecline,
     "file-change-outside",
     {}},
    {"no paths", Files({}), kDecline, "file-change-paths-unknown", {}},
    {"empty path", Files({""}), kDecline, "file-change-paths-unknown", {}},
    {"root grant", Files({"src/a.c"}, "", "/"), kDecline, "root-grant", {}, "/"},
    {"root grant of the workspace", Files({}, "", kWorkspace), kDecline, "root-grant", {}},
    // Other requests.
    {"permissions",
     OfKind(ApprovalKind::kPermissions, "item/permissions/requestApproval"),
     kDecline,
     "permission-request",
     {},
     "item/permissions/requestApproval"},
    {"unknown",
     OfKind(ApprovalKind::kUnknown, "item/tool/requestUserInput"),
     kDecline,
     "unknown-request",
     {},
     "item/tool/requestUserInput"},
};

TEST(DecideApproval, Table) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    ApprovalDecision decision = DecideApproval(Rules(), c.request, Context());
    EXPECT_EQ(AnswerName(decision.answer), std::string(AnswerName(c.answer)));
    EXPECT_EQ(decision.rule, c.rule);
    EXPECT_EQ(decision.argv, c.argv);
    EXPECT_FALSE(decision.reason.empty());
    EXPECT_NE(decision.reason.find(c.reason_has), std::string::npos) << decision.reason;
  }
}

TEST(DecideApproval, NoRulesDeclinesEveryCommand) {
  ApprovalDecision decision = DecideApproval(ApprovalRules{}, Line("npm test"), Context());
  EXPECT_EQ(decision.answer, Answer::kDecline);
  EXPECT_EQ(decision.rule, "no-command-rules");
  EXPECT_EQ(decision.argv, (Words{"npm", "test"}));
  // File changes do not depend on command rules.
  EXPECT_EQ(DecideApproval(ApprovalRules{}, Files({"a"}), Context()).rule, "file-change-inside");
}

TEST(DecideApproval, WithoutAResolverOnlyEqualNamesMatch) {
  ApprovalContext context{kWorkspace, nullptr};
  EXPECT_EQ(DecideApproval(Rules(), Line("npm test"), context).rule, "command-prefix");
  EXPECT_EQ(DecideApproval(Rules(), Line("/usr/bin/npm test"), context).rule,
            "command-not-allowed");
}

TEST(DecideApproval, AnUnusableWorkspaceContainsNothing) {
  for (const char* workspace : {"", "relative/ws"}) {
    ApprovalContext context{workspace, FakeResolve};
    EXPECT_EQ(DecideApproval(Rules(), Files({"a"}), context).rule, "file-change-outside");
    EXPECT_EQ(DecideApproval(Rules(), Line("npm test", "/ws/repo"), context).rule, "cwd-outside");
  }
}

TEST(DecideApproval, ReasonsEscapeControlCharacters) {
  ApprovalDecision decision = DecideApproval(Rules(), Argv({"npm", "pub\x1b[2Jlish"}), Context());
  EXPECT_EQ(decision.rule, "command-not-allowed");
  EXPECT_EQ(decision.reason.find('\x1b'), std::string::npos) << decision.reason;
}

TEST(DecideApproval, Names) {
  EXPECT_STREQ(ApprovalKindName(ApprovalKind::kCommand), "command");
  EXPECT_STREQ(ApprovalKindName(ApprovalKind::kFileChange), "file-change");
  EXPECT_STREQ(ApprovalKindName(ApprovalKind::kPermissions), "permissions");
  EXPECT_STREQ(ApprovalKindName(ApprovalKind::kUnknown), "unknown");
  EXPECT_STREQ(AnswerName(Answer::kAccept), "accept");
  EXPECT_STREQ(AnswerName(Answer::kDecline), "decline");
}

TEST(IsShellProgram, BareOrAbsolute) {
  for (const char* shell : {"bash", "sh", "zsh", "dash", "/bin/bash", "/usr/bin/zsh"})
    EXPECT_TRUE(IsShellProgram(shell)) << shell;
  for (const char* other : {"", "./bash", "bin/sh", "bashful", "fish", "/bin/shx"})
    EXPECT_FALSE(IsShellProgram(other)) << other;
}

}  // namespace
}  // namespace berth::policy
