// End-to-end tests of the sandbox on a lived-in developer machine: a home with dotfiles,
// toolchains, notes and sockets; HOME, the state directory and the repository under /tmp (as
// in CI containers) or under /var/tmp; cache grants in jobs and checks; grants of existing
// files and sockets. Every promise is shown from inside by sandbox_probe (docs/sandbox.md).
//
// Each test runs twice, with its tree under /var/tmp and under /tmp. A few also need a
// directory that no sandbox makes private: they use one under the user's real home directory
// from the password database (the tests' HOME is elsewhere; that home is hidden, but what the
// tests grant or place inside it shows through), and skip when it is not writable.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {
namespace {

using nlohmann::json;

constexpr char kPath[] = "/usr/local/bin:/usr/bin:/bin";

constexpr char kPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
)";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The probe's report line is one of `expected`.
::testing::AssertionResult ReportsOneOf(const RunResult& result,
                                        std::initializer_list<std::string> expected) {
  std::string line = FirstLine(result.out);
  for (const std::string& candidate : expected)
    if (line == candidate) return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure() << "expected one of:";
  for (const std::string& candidate : expected) failure << " \"" << candidate << "\"";
  return failure << "\n" << result.Describe();
}

::testing::AssertionResult Reports(const RunResult& result, const std::string& expected) {
  return ReportsOneOf(result, {expected});
}

json Parse(const std::string& text) { return json::parse(text, nullptr, false); }

// A lived-in home, a git repository and a state directory under GetParam() ("/var/tmp" or
// "/tmp"):
//   ROOT/ws        the repository (policy kPolicy) and the cwd of every run
//   ROOT/home      HOME: .ssh/id_rsa, .gitconfig -> ../dotfiles/gitconfig, .cargo/bin/tool,
//                  notes/secret.txt, .config/berth/ (the user's config, written by tests)
//   ROOT/state     BERTH_STATE_DIR
class HomeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Result<std::string> made = sys::MakeTempDir(GetParam(), "berth-home-e2e-");
    ASSERT_TRUE(made) << made.error().ToString();
    root_ = sys::RealPath(*made).value_or(*made);
    ASSERT_EQ(chmod(root_.c_str(), 0755), 0) << std::strerror(errno);
    ws_ = root_ + "/ws";
    home_ = root_ + "/home";
    state_ = root_ + "/state";
    for (const std::string& dir :
         {ws_ + "/src", home_ + "/.ssh", home_ + "/.cargo/bin", home_ + "/notes",
          home_ + "/.config/berth", root_ + "/dotfiles", state_})
      ASSERT_TRUE(sys::MakeDirs(dir, 0755)) << dir;
    ASSERT_TRUE(WriteText(home_ + "/.ssh/id_rsa", "SECRET-KEY\n", 0600));
    ASSERT_TRUE(WriteText(home_ + "/notes/secret.txt", "NOTES\n"));
    ASSERT_TRUE(WriteText(home_ + "/.cargo/bin/tool", "#!/bin/sh\necho tool\n", 0755));
    ASSERT_TRUE(WriteText(root_ + "/dotfiles/gitconfig", "[user]\n\tname = dotfiles\n"));
    ASSERT_EQ(symlink("../dotfiles/gitconfig", (home_ + "/.gitconfig").c_str()), 0);

    std::optional<std::string> true_path = FindInPath("true");
    ASSERT_TRUE(true_path);
    RunResult probe = Berth({"sandbox", "--", *true_path});
    if (probe.exit_code == 69) {
      RequireFeature(false, "the sandbox is unavailable on this host: " + probe.err);
      return;
    }
    ASSERT_EQ(probe.exit_code, 0) << probe.Describe();
  }

  void TearDown() override {
    for (const std::string& path : cleanup_) (void)sys::RemoveTree(path);
    if (root_.empty()) return;
    (void)MakeTreeRemovable(root_);
    Status removed = sys::RemoveTree(root_);
    EXPECT_TRUE(removed) << removed.error().ToString();
  }

  EnvVars Env() const {
    return {{"PATH", kPath},
            {"HOME", home_},
            {"BERTH_STATE_DIR", state_},
            {"GIT_CONFIG_NOSYSTEM", "1"}};
  }
  RunResult Berth(const std::vector<std::string>& args, EnvVars extra = {}) const {
    std::vector<std::string> argv = {BERTH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    EnvVars env = Env();
    env.insert(env.end(), extra.begin(), extra.end());
    return RunProgram(argv, env, ws_);
  }
  // `berth sandbox BERTH_ARGS -- sandbox_probe OP...`
  RunResult Probe(const std::vector<std::string>& op,
                  const std::vector<std::string>& berth_args = {}) const {
    std::vector<std::string> args = {"sandbox"};
    args.insert(args.end(), berth_args.begin(), berth_args.end());
    args.insert(args.end(), {"--", SANDBOX_PROBE});
    args.insert(args.end(), op.begin(), op.end());
    return Berth(args);
  }
  RunResult ProbeOutside(const std::vector<std::string>& op) const {
    std::vector<std::string> argv = {SANDBOX_PROBE};
    argv.insert(argv.end(), op.begin(), op.end());
    return RunProgram(argv, Env(), ws_);
  }

  RunResult Git(const std::vector<std::string>& args) const {
    std::optional<std::string> git = FindInPath("git");
    std::vector<std::string> argv = {git.value_or("/usr/bin/git")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, Env(), ws_);
  }
  // Makes ws a repository whose policy is kPolicy plus `extra`, committed.
  void MakeRepository(const std::string& extra = "") {
    REQUIRE_FEATURE(FindInPath("git").has_value(), "no git in /usr/local/bin, /usr/bin or /bin");
    ASSERT_TRUE(sys::MakeDirs(ws_ + "/.berth", 0755));
    ASSERT_TRUE(WriteText(ws_ + "/.berth/policy.toml", std::string(kPolicy) + extra));
    ASSERT_TRUE(WriteText(ws_ + "/src/main.c", "int main(void) { return 0; }\n"));
    for (std::vector<std::string> args : {std::vector<std::string>{"init", "-q"},
                                          {"config", "user.name", "e2e"},
                                          {"config", "user.email", "e2e@berth.invalid"},
                                          {"config", "commit.gpgsign", "false"},
                                          {"add", "-A"},
                                          {"commit", "-q", "-m", "base"}})
      ASSERT_EQ(Git(args).exit_code, 0) << Git(args).Describe();
  }
  // `berth run --json implement -- ARGV...`, and the job's receipt.
  json RunJob(const std::vector<std::string>& argv, const std::vector<std::string>& options = {},
              RunResult* run = nullptr) const {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"implement", "--"});
    args.insert(args.end(), argv.begin(), argv.end());
    RunResult result = Berth(args);
    if (run != nullptr) *run = result;
    RunResult ls = Berth({"ls", "--json"});
    json jobs = Parse(ls.out);
    if (!jobs.is_array() || jobs.empty()) return json::object();
    std::string id = jobs[0].value("id", "");
    return Parse(ReadText(state_ + "/jobs/" + id + "/receipt.json"));
  }
  std::string JobStdout(const json& receipt) const {
    return ReadText(state_ + "/jobs/" + receipt["job"].value("id", "") + "/stdout");
  }

  // A fresh directory under the caller's real home (from the password database), which no
  // sandbox of these tests makes private: it is hidden as another home, and what a grant or
  // berth's own mounts place inside it shows through; "" after a loud skip when there is none.
  std::string OutsidePrivateDirs() {
    struct passwd* pw = getpwuid(getuid());
    std::string base = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
    if (base.empty() || base == "/" || Contains(base, "/tmp") || access(base.c_str(), W_OK) != 0) {
      RequireFeature(false,
                     "no writable home directory outside /tmp for uid " + std::to_string(getuid()));
      return "";
    }
    Result<std::string> dir = sys::MakeTempDir(base, ".berth-home-e2e-");
    if (!dir) {
      RequireFeature(false, dir.error().ToString());
      return "";
    }
    std::string real = sys::RealPath(*dir).value_or(*dir);
    chmod(real.c_str(), 0755);
    cleanup_.push_back(real);
    return real;
  }

  std::string root_, ws_, home_, state_;
  std::vector<std::string> cleanup_;
};

INSTANTIATE_TEST_SUITE_P(Roots, HomeTest, ::testing::Values("/var/tmp", "/tmp"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "/tmp" ? std::string("Tmp") : std::string("VarTmp");
                         });

// --- 1. Cache grants in jobs and checks ------------------------------------------------------

TEST_P(HomeTest, CacheGrantWorksInJobsRegression) {
  ASSERT_NO_FATAL_FAILURE(MakeRepository());
  RunResult run;
  json receipt =
      RunJob({"sh", "-c", "echo cached > \"$npm_config_cache/f\" && echo ok > src/c.txt"},
             {"--grant", "cache:npm"}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_EQ(ReadText(state_ + "/caches/npm/f"), "cached\n");
}

TEST_P(HomeTest, CacheGrantWorksWithAHiddenStateDirRegression) {
  // A state directory outside every private directory is hidden by a tmpfs in jobs; the
  // cache inside it must still be reachable by path.
  const std::string outside = OutsidePrivateDirs();
  if (outside.empty()) return;
  state_ = outside + "/state";
  ASSERT_TRUE(sys::MakeDirs(state_, 0755));
  ASSERT_NO_FATAL_FAILURE(MakeRepository());
  RunResult run;
  json receipt =
      RunJob({"sh", "-c", "echo cached > \"$npm_config_cache/f\" && ! ls " + state_ + " && true"},
             {"--grant", "cache:npm"}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_EQ(ReadText(state_ + "/caches/npm/f"), "cached\n");
}

TEST_P(HomeTest, CacheGrantWorksInChecksRegression) {
  ASSERT_NO_FATAL_FAILURE(
      MakeRepository("[[verify]]\nname = \"go cache\"\ngrants = [\"cache:go\"]\n"
                     "argv = [\"sh\", \"-c\", \"mkdir -p \\\"$GOCACHE\\\" && echo built > "
                     "\\\"$GOCACHE/f\\\"\"]\n"));
  RunResult run;
  json receipt = RunJob({"sh", "-c", "echo 'int x;' > src/x.c"}, {}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_EQ(ReadText(state_ + "/caches/go/build/f"), "built\n") << receipt.dump(2);
}

// --- 2. Grants of paths that exist in the read-only host view --------------------------------

TEST_P(HomeTest, WriteGrantOfAnExistingFileRegression) {
  const std::string outside = OutsidePrivateDirs();
  if (outside.empty()) return;
  const std::string file = outside + "/granted.txt";
  ASSERT_TRUE(WriteText(file, "before\n"));
  EXPECT_TRUE(Reports(Probe({"write", file}, {"--grant", "write:" + file}), "write ok"));
  EXPECT_EQ(ReadText(file), "probe\n");
  EXPECT_TRUE(Reports(Probe({"write", outside + "/other"}, {"--grant", "write:" + file}),
                      "write errno=30 EROFS"));
}

TEST_P(HomeTest, SocketGrantOutsideRunRegression) {
  const std::string outside = OutsidePrivateDirs();
  if (outside.empty()) return;
  const std::string path = outside + "/app.sock";
  Result<BoundSocket> listener = ListenUnix(path);
  ASSERT_TRUE(listener) << listener.error().ToString();
  ASSERT_TRUE(Reports(ProbeOutside({"unix-connect", path}), "unix-connect ok"));
  EXPECT_TRUE(
      Reports(Probe({"unix-connect", path}, {"--grant", "socket:" + path}), "unix-connect ok"));
}

TEST_P(HomeTest, ProviderStateFileIsAPrivateCopyRegression) {
  // As Claude Code's ~/.claude.json: a state file the CLI reads and rewrites. It used to be
  // bound over the read-only view ("create mount point ~/.claude.json: Read-only file system").
  ASSERT_TRUE(WriteText(home_ + "/.statecli.json", "{\"user\": true}\n"));
  ASSERT_TRUE(
      WriteText(home_ + "/.config/berth/config.toml",
                "[providers.statecli]\nexecutable = \"/bin/sh\"\n"
                "write_args = [\"-c\", \"cat \\\"$HOME/.statecli.json\\\" > src/seen.txt && "
                "echo job > \\\"$HOME/.statecli.json\\\" && echo done\"]\n"
                "state_files = [\"~/.statecli.json\"]\noutput = \"plain\"\n"));
  ASSERT_NO_FATAL_FAILURE(
      MakeRepository("[agents.state]\ncapability = \"write\"\nprovider = \"statecli\"\nwritable = "
                     "[\"src/**\"]\n"));
  RunResult run = Berth({"run", "state", "-p", "go"});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  RunResult branches = Git({"branch", "--list", "berth/*", "--format=%(refname:short)"});
  std::string branch = FirstLine(branches.out);
  EXPECT_EQ(Git({"show", branch + ":src/seen.txt"}).out, "{\"user\": true}\n")
      << branches.Describe();
  EXPECT_EQ(ReadText(home_ + "/.statecli.json"), "{\"user\": true}\n") << "the job's write leaked";
}

// --- 3. HOME, state and repository under /tmp -------------------------------------------------

TEST_P(HomeTest, SandboxAndJobsWorkWithEverythingUnderThisRootRegression) {
  EXPECT_TRUE(Reports(Probe({"write", ws_ + "/made-inside"}), "write ok"));
  EXPECT_EQ(ReadText(ws_ + "/made-inside"), "probe\n");
  RunResult secret = Probe({"read", home_ + "/.ssh/id_rsa"});
  EXPECT_TRUE(ReportsOneOf(secret, {"read errno=2 ENOENT", "read errno=13 EACCES"}));
  EXPECT_FALSE(Contains(secret.out, "SECRET")) << secret.Describe();
  // A job: workspace, private git and a write grant all under this root.
  ASSERT_NO_FATAL_FAILURE(MakeRepository());
  ASSERT_TRUE(sys::MakeDirs(root_ + "/granted", 0755));
  RunResult run;
  json receipt = RunJob({"sh", "-c",
                         "echo j > src/j.c && git status --short >/dev/null && "
                         "echo g > " +
                             root_ + "/granted/f"},
                        {"--grant", "write:" + root_ + "/granted"}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_EQ(ReadText(root_ + "/granted/f"), "g\n");
}

// --- 4. The home is deny-by-default ------------------------------------------------------------

// ~/.gitconfig's [include] and [includeIf] targets show too (identity, aliases), nested and
// relative ones included, but only where git's config lives or the allowlist
// reaches: an include of ~/.ssh/config or of any other home file stays hidden.
TEST_P(HomeTest, GitConfigIncludesInsideTheAllowlistShowAndNothingElse) {
  ASSERT_TRUE(sys::MakeDirs(home_ + "/.config/git", 0755));
  ASSERT_TRUE(WriteText(root_ + "/dotfiles/gitconfig",
                        "[user]\n\tname = dotfiles\n"
                        "[include]\n\tpath = ~/.gitconfig.local\n"
                        "[includeIf \"gitdir:/\"]\n\tpath = .config/git/work.inc\n"
                        "[include]\n\tpath = ~/.ssh/config ; a secret\n"
                        "\tpath = \"~/notes/secret.txt\"\n"));
  ASSERT_TRUE(WriteText(home_ + "/.gitconfig.local",
                        "[user]\n\temail = me@example.invalid\n"
                        "[include]\n\tpath = ~/.config/git/deeper.inc\n"));
  ASSERT_TRUE(WriteText(home_ + "/.config/git/work.inc", "[core]\n\teditor = vi\n"));
  ASSERT_TRUE(WriteText(home_ + "/.config/git/deeper.inc", "[alias]\n\tst = status\n"));
  ASSERT_TRUE(WriteText(home_ + "/.config/git/credentials", "https://u:p@example.invalid\n"));
  ASSERT_TRUE(WriteText(home_ + "/.config/git/config", "[include]\n\tpath = credentials\n"));
  ASSERT_TRUE(WriteText(home_ + "/.ssh/config", "Host secret\n"));
  for (const char* shown : {"/.gitconfig.local", "/.config/git/work.inc", "/.config/git/deeper.inc",
                            "/.config/git/config"}) {
    RunResult read = Probe({"read", home_ + shown});
    EXPECT_EQ(FirstLine(read.out).rfind("read ok bytes=", 0), 0u) << shown << read.Describe();
  }
  for (const char* hidden :
       {"/.ssh/config", "/notes/secret.txt", "/.ssh/id_rsa", "/.config/git/credentials"})
    EXPECT_TRUE(Reports(Probe({"read", home_ + hidden}), "read errno=2 ENOENT")) << hidden;
  EXPECT_TRUE(Reports(Probe({"write", home_ + "/.gitconfig.local"}), "write errno=30 EROFS"));
  // git itself, inside the sandbox, sees the included settings.
  std::optional<std::string> git = FindInPath("git");
  ASSERT_TRUE(git);
  RunResult email =
      Berth({"sandbox", "--", *git, "config", "--global", "--includes", "user.email"});
  EXPECT_EQ(email.out, "me@example.invalid\n") << email.Describe();
  RunResult alias = Berth({"sandbox", "--", *git, "config", "--global", "--includes", "alias.st"});
  EXPECT_EQ(alias.out, "status\n") << alias.Describe();
}

TEST_P(HomeTest, HomeShowsOnlyTheToolchainAllowlist) {
  ASSERT_TRUE(Reports(ProbeOutside({"read", home_ + "/notes/secret.txt"}), "read ok bytes=6"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/notes/secret.txt"}), "read errno=2 ENOENT"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/.ssh/id_rsa"}), "read errno=2 ENOENT"));
  // The allowlist, read-only; a dotfile symlinked into a dotfiles repository still reads.
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/.gitconfig"}), "read ok bytes=24"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/.cargo/bin/tool"}), "read ok bytes=20"));
  EXPECT_TRUE(Reports(Probe({"write", home_ + "/.cargo/bin/tool"}), "write errno=30 EROFS"));
  EXPECT_TRUE(Reports(Probe({"ls", home_}), "ls ok entries=.cargo,.gitconfig"));
  // The rest of the home is a private scratch space: writable, never the real one.
  EXPECT_TRUE(Reports(Probe({"write", home_ + "/.bashrc-written"}), "write ok"));
  EXPECT_FALSE(PathExists(home_ + "/.bashrc-written"));
}

TEST_P(HomeTest, HomeAllowInTheUserConfigAndReadGrantsShowMore) {
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/notes/secret.txt"}, {"--grant", "read:~/notes"}),
                      "read ok bytes=6"));
  EXPECT_TRUE(Reports(Probe({"write", home_ + "/notes/new"}, {"--grant", "read:~/notes"}),
                      "write errno=30 EROFS"));
  ASSERT_TRUE(
      WriteText(home_ + "/.config/berth/config.toml", "[sandbox]\nhome_allow = [\"~/notes\"]\n"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/notes/secret.txt"}), "read ok bytes=6"));
}

TEST_P(HomeTest, WriteAndSocketGrantsUnderTheHomeShowThroughThePrivateHome) {
  EXPECT_TRUE(
      Reports(Probe({"write", home_ + "/notes/new"}, {"--grant", "write:~/notes"}), "write ok"));
  EXPECT_EQ(ReadText(home_ + "/notes/new"), "probe\n");
  Result<BoundSocket> listener = ListenUnix(home_ + "/agent.sock");
  ASSERT_TRUE(listener) << listener.error().ToString();
  EXPECT_TRUE(
      Reports(Probe({"unix-connect", home_ + "/agent.sock"}, {"--grant", "socket:~/agent.sock"}),
              "unix-connect ok"));
}

TEST_P(HomeTest, JobAgentsAndChecksSeeOnlyTheAllowlist) {
  ASSERT_NO_FATAL_FAILURE(MakeRepository(
      "[[verify]]\nname = \"notes\"\nexpect_exit = 1\nargv = [\"" + std::string(SANDBOX_PROBE) +
      "\", \"read\", \"" + home_ + "/notes/secret.txt\"]\n"));
  RunResult run;
  json receipt = RunJob({"sh", "-c",
                         std::string(SANDBOX_PROBE) + " read " + home_ + "/notes/secret.txt; " +
                             SANDBOX_PROBE + " read " + home_ + "/.gitconfig; echo x > src/x.c"},
                        {}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  const std::string out = JobStdout(receipt);
  EXPECT_TRUE(Contains(out, "read errno=2 ENOENT")) << out;
  EXPECT_TRUE(Contains(out, "read ok bytes=24")) << out;
  json check = receipt["verification"]["checks"][0];
  EXPECT_TRUE(Contains(check.value("output_tail", ""), "read errno=2 ENOENT")) << check.dump(2);
}

TEST_P(HomeTest, LandlockTierKeepsTheHomeUnreadableExceptTheAllowlist) {
  const std::vector<std::string> landlock = {"--tier", "landlock", "--allow-weaker"};
  REQUIRE_FEATURE(LandlockAbi() > 0, "Landlock is unavailable");
  EXPECT_TRUE(
      Reports(Probe({"read", home_ + "/notes/secret.txt"}, landlock), "read errno=13 EACCES"));
  EXPECT_TRUE(Reports(Probe({"ls", home_}, landlock), "ls errno=13 EACCES"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/.gitconfig"}, landlock), "read ok bytes=24"));
  EXPECT_TRUE(Reports(Probe({"read", home_ + "/.cargo/bin/tool"}, landlock), "read ok bytes=20"));
}

TEST_P(HomeTest, DoctorListsWhatAJobSeesOfTheHome) {
  RunResult doctor = Berth({"doctor", "--json"});
  json report = Parse(doctor.out);
  ASSERT_TRUE(report.is_object()) << doctor.Describe();
  EXPECT_EQ(report["home"]["visible"], json::array({"~/.gitconfig", "~/.cargo/bin"}))
      << report["home"].dump();
  EXPECT_EQ(report["home"]["extend_with"], "sandbox.home_allow");
  RunResult human = Berth({"doctor"});
  EXPECT_TRUE(Contains(human.out + human.err, "~/.gitconfig, ~/.cargo/bin")) << human.Describe();
  EXPECT_TRUE(Contains(human.out + human.err, "home_allow")) << human.Describe();
}

// --- 5. Host Unix sockets ---------------------------------------------------------------------

TEST_P(HomeTest, HostUnixSocketsAreUnreachableWithoutAGrant) {
  std::vector<std::string> paths = {ws_ + "/dev.sock", home_ + "/agent.sock",
                                    root_ + "/beside.sock"};
  const std::string outside = OutsidePrivateDirs();
  if (!outside.empty()) paths.push_back(outside + "/host.sock");
  std::vector<BoundSocket> listeners;
  for (const std::string& path : paths) {
    Result<BoundSocket> listener = ListenUnix(path);
    ASSERT_TRUE(listener) << listener.error().ToString();
    listeners.push_back(std::move(*listener));
    ASSERT_TRUE(Reports(ProbeOutside({"unix-connect", path}), "unix-connect ok"));
  }
  for (const std::string& path : paths) {
    EXPECT_TRUE(ReportsOneOf(Probe({"unix-connect", path}),
                             {"unix-connect errno=111 ECONNREFUSED", "unix-connect errno=13 EACCES",
                              "unix-connect errno=2 ENOENT"}))
        << path;
  }
  // A granted one is reachable, the others stay masked.
  EXPECT_TRUE(Reports(
      Probe({"unix-connect", ws_ + "/dev.sock"}, {"--grant", "socket:" + ws_ + "/dev.sock"}),
      "unix-connect ok"));
  if (!outside.empty()) {
    EXPECT_TRUE(ReportsOneOf(
        Probe({"unix-connect", outside + "/host.sock"}, {"--grant", "socket:" + ws_ + "/dev.sock"}),
        {"unix-connect errno=111 ECONNREFUSED", "unix-connect errno=13 EACCES"}));
  }
}

TEST_P(HomeTest, ConnectsToMaskedHostSocketsAreCountedWithTheirPath) {
  const std::string path = ws_ + "/dev.sock";
  Result<BoundSocket> listener = ListenUnix(path);
  ASSERT_TRUE(listener) << listener.error().ToString();
  ASSERT_TRUE(Reports(ProbeOutside({"unix-connect", path}), "unix-connect ok"));
  // Twice by its absolute path: refused by the mask, counted twice.
  RunResult twice = Probe({"unix-connect", path, "2"}, {"-v"});
  EXPECT_TRUE(
      ReportsOneOf(twice, {"unix-connect errno=111 ECONNREFUSED", "unix-connect errno=13 EACCES"}));
  EXPECT_TRUE(Contains(twice.err, "denied a connect to the host socket " + path + " (2 times)"))
      << twice.Describe();
  // Relative to the working directory (the workspace), three times.
  RunResult relative = Probe({"unix-connect", "dev.sock", "3"}, {"-v"});
  EXPECT_TRUE(ReportsOneOf(
      relative, {"unix-connect errno=111 ECONNREFUSED", "unix-connect errno=13 EACCES"}));
  EXPECT_TRUE(Contains(relative.err, "denied a connect to the host socket " + path + " (3 times)"))
      << relative.Describe();
  // With the browser grant (no user-namespace refusal to notify) connects are still counted.
  RunResult browser = Probe({"unix-connect", path, "2"}, {"-v", "--grant", "browser"});
  EXPECT_TRUE(ReportsOneOf(
      browser, {"unix-connect errno=111 ECONNREFUSED", "unix-connect errno=13 EACCES"}));
  EXPECT_TRUE(Contains(browser.err, "denied a connect to the host socket " + path + " (2 times)"))
      << browser.Describe();
  // A granted socket connects and is not counted; nor is a path that names no host socket.
  RunResult granted = Probe({"unix-connect", path, "2"}, {"-v", "--grant", "socket:" + path});
  EXPECT_TRUE(Reports(granted, "unix-connect ok"));
  EXPECT_FALSE(Contains(granted.err, "denied a connect")) << granted.Describe();
  RunResult missing = Probe({"unix-connect", "/tmp/nothing.sock"}, {"-v"});
  EXPECT_TRUE(Reports(missing, "unix-connect errno=2 ENOENT"));
  EXPECT_FALSE(Contains(missing.err, "denied a connect")) << missing.Describe();
}

TEST_P(HomeTest, JobsRecordConnectsToMaskedHostSocketsInTheReceiptAndEvents) {
  ASSERT_NO_FATAL_FAILURE(MakeRepository());
  const std::string outside = OutsidePrivateDirs();
  if (outside.empty()) return;
  const std::string path = outside + "/host.sock";
  Result<BoundSocket> listener = ListenUnix(path);
  ASSERT_TRUE(listener) << listener.error().ToString();
  // The caller's real home is hidden from jobs as a whole (docs/sandbox.md, "Other homes"):
  // the read: grant shows the directory again, and with it the socket the mask must cover.
  RunResult run;
  json receipt = RunJob(
      {"sh", "-c", std::string(SANDBOX_PROBE) + " unix-connect " + path + " 2; echo x > src/x.c"},
      {"--grant", "read:" + outside}, &run);
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  const std::string out = JobStdout(receipt);
  EXPECT_TRUE(Contains(out, "unix-connect errno=111 ECONNREFUSED") ||
              Contains(out, "unix-connect errno=13 EACCES"))
      << out;
  json expected = json::array({{{"path", path}, {"count", 2}}});
  EXPECT_EQ(receipt["sandbox"]["denied_sockets"], expected) << receipt.dump(2);
  RunResult show = Berth({"show", receipt["job"].value("id", "")});
  EXPECT_TRUE(Contains(show.out, "denied a connect to the host socket " + path + " (2 times)"))
      << show.Describe();
}

}  // namespace
}  // namespace berth::e2e
