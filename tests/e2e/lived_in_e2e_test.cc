// End-to-end tests against a lived-in home (tests/e2e/lived_in_home.h): every test here gets
// one, whatever BERTH_TEST_HOME says. They prove, from inside each kind of sandbox berth builds
// (`berth sandbox`, a command-provider job, a user-defined provider job, a [[verify]] check),
// that no credential file of a real developer's home is readable except the job's own provider
// state; that the grants a real job needs work on such a machine (caches, a write grant on a
// dot-directory, the home's own Unix socket); and that the bounded-lane grants drive the real
// parts: headless Chromium with `browser`, an HTTP API over a Docker-like socket with `docker`.

#include <pwd.h>
#include <unistd.h>

#include <set>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// Two user providers whose CLI is lived_in_cli.sh: "claudish" owns ~/.claude (and the file
// ~/.claude.json beside it) as the real Claude Code does, "fakecli" owns ~/.fakecli.
std::string ProvidersConfig(const std::string& cli) {
  return R"([providers.claudish]
executable = ")" +
         cli + R"("
version_args = ["--version"]
write_args = ["--write"]
state_dirs = ["~/.claude"]
state_files = ["~/.claude.json"]
auth_files = ["~/.claude/.credentials.json"]
output = "json-lines"
[providers.claudish.fields]
text = "result"

[providers.fakecli]
executable = ")" +
         cli + R"("
version_args = ["--version"]
write_args = ["--write"]
state_dirs = ["~/.fakecli"]
auth_files = ["~/.fakecli/state"]
output = "json-lines"
[providers.fakecli.fields]
text = "result"
)";
}

constexpr char kLivedInPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 2
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[agents.claudish]
capability = "write"
provider = "claudish"
writable = ["src/**"]
[agents.fakecli]
capability = "write"
provider = "fakecli"
writable = ["src/**"]
)";

// A TOML basic string: JSON's escaping is valid TOML for these ASCII paths.
std::string Toml(const std::string& text) { return json(text).dump(); }

std::string TomlArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) out += (out.size() > 1 ? ", " : "") + Toml(item);
  return out + "]";
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The paths a `read-all` report line (in `text`) names as readable; {"<no report>"} when the
// text holds none.
std::set<std::string> ReadablePaths(const std::string& text) {
  size_t at = text.find("read-all ok ");
  if (at == std::string::npos) return {"<no read-all report>"};
  std::string line = text.substr(at, text.find('\n', at) - at);
  std::set<std::string> paths;
  size_t list = line.find(" paths=");
  if (list == std::string::npos) return paths;
  std::string rest = line.substr(list + 7);
  for (size_t start = 0; start <= rest.size();) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    if (comma > start) paths.insert(rest.substr(start, comma - start));
    start = comma + 1;
  }
  return paths;
}

std::optional<std::string> Chromium() {
  std::optional<std::string> chromium = FindInPath("chromium");
  return chromium ? chromium : FindInPath("chromium-browser");
}

// Chromium's own namespace sandbox stays on, except as root where Chromium refuses to start
// it at all (it then needs --no-sandbox; berth's sandbox still holds it).
std::string ChromiumDumpCommand(const std::string& chromium) {
  return "printf '<p id=x>hello-berth</p>\\n' > /tmp/index.html && " + chromium + " --headless" +
         (IsRoot() ? " --no-sandbox" : "") + " --disable-gpu --dump-dom file:///tmp/index.html";
}

// RunJob's expect_exit when the test looks at the job's record instead.
constexpr int kAnyExit = -1;

class LivedInTest : public JobsTest {
 protected:
  void SetUp() override {
    UseLivedInHome();
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_NE(lived_in(), nullptr);
    ASSERT_TRUE(WriteText(PolicyPath(), kLivedInPolicy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "lived-in policy"}).exit_code, 0);
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                          ProvidersConfig(Agent("lived_in_cli.sh"))));
    ASSERT_TRUE(sys::MakeDirs(home() + "/.fakecli", 0755));
    ASSERT_TRUE(WriteText(home() + "/.fakecli/state", "the user's fakecli state\n"));
    // The control experiment: outside any sandbox every credential file is readable.
    RunResult outside = ProbeOutside(ReadAllOp());
    ASSERT_EQ(ReadablePaths(outside.out), AllCredentials()) << outside.Describe();
  }

  std::vector<std::string> ReadAllOp() const {
    std::vector<std::string> op = {"read-all"};
    for (const std::string& path : lived_in()->CredentialPaths()) op.push_back(path);
    return op;
  }
  // The probe's argv for ReadAllOp(), to run as a job or a check.
  std::vector<std::string> ReadAllArgv() const {
    std::vector<std::string> argv = {SANDBOX_PROBE};
    for (const std::string& word : ReadAllOp()) argv.push_back(word);
    return argv;
  }
  std::set<std::string> AllCredentials() const {
    std::vector<std::string> paths = lived_in()->CredentialPaths();
    return {paths.begin(), paths.end()};
  }
  // The credentials that belong to the provider owning `state_dir` ("~/.claude").
  std::set<std::string> CredentialsOf(const std::string& state_dir) const {
    std::set<std::string> own;
    for (const CredentialFile& file : LivedInCredentials())
      if (file.state_dir == state_dir) own.insert(home() + "/" + file.path);
    return own;
  }
  // No marker secret appears in `text`.
  static void ExpectNoMarker(const std::string& text) {
    for (const CredentialFile& file : LivedInCredentials())
      EXPECT_FALSE(Contains(text, file.marker)) << file.path << "'s secret leaked into:\n" << text;
  }

  // Runs a command-provider job in the foreground with `options` and `argv`; returns its id.
  std::string RunJob(const std::vector<std::string>& options, const std::vector<std::string>& argv,
                     const EnvVars& env = {}, int expect_exit = 0) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"implement", "--"});
    args.insert(args.end(), argv.begin(), argv.end());
    EnvVars full = {{"GIT_CONFIG_NOSYSTEM", "1"}};
    full.insert(full.end(), env.begin(), env.end());
    RunResult run = Run(args, full);
    if (ListJson().empty()) {
      ADD_FAILURE() << "no job was created\n" << run.Describe();
      return "<no job>";
    }
    const std::string id = NewestJobId();
    if (expect_exit != kAnyExit) {
      EXPECT_EQ(run.exit_code, expect_exit) << run.Describe() << "\n" << Summary(id);
    }
    return id;
  }
  // What a failed expectation about job `id` shows: its state, error and output.
  std::string Summary(const std::string& id) const {
    json receipt = ReadReceiptFile(id);
    return "job " + id + " " + GetStr(receipt, "job.state") + ": " +
           GetStr(receipt, "error.message") + "\n--- job output ---\n" + JobOutput(id);
  }
  std::string JobOutput(const std::string& id) const {
    return ReadText(JobDir(id) + "/stdout") + ReadText(JobDir(id) + "/stderr");
  }

  // A provider job whose CLI runs `command` and then overwrites `writes`.
  std::string RunProviderJob(const std::string& agent, const std::vector<std::string>& command,
                             const std::vector<std::string>& writes) {
    RunResult run = Run({"run", agent, "-p", JoinWords(command) + "\n" + JoinWords(writes) + "\n"},
                        {{"GIT_CONFIG_NOSYSTEM", "1"}});
    if (ListJson().empty()) {
      ADD_FAILURE() << "no job was created\n" << run.Describe();
      return "<no job>";
    }
    const std::string id = NewestJobId();
    EXPECT_EQ(run.exit_code, 0) << run.Describe() << "\n" << Summary(id);
    return id;
  }

  // Replaces the policy with kLivedInPolicy plus `checks` and commits it as the new base.
  void UseChecks(const std::string& checks) {
    ASSERT_TRUE(WriteText(PolicyPath(), std::string(kLivedInPolicy) + checks));
    ASSERT_EQ(Git({"commit", "-q", "-am", "checks"}).exit_code, 0);
  }
  // A job that writes src/checked.c and is then verified by the policy's checks; returns the
  // first check's record.
  json RunVerifiedJob(const EnvVars& env = {}) {
    std::string id = RunJob({}, {"sh", "-c", "echo 'int c;' > src/checked.c"}, env, kAnyExit);
    if (id == "<no job>") return json::object();
    json checks = Get(ReadReceiptFile(id), "verification.checks");
    EXPECT_TRUE(checks.is_array() && !checks.empty()) << Summary(id);
    return checks.is_array() && !checks.empty() ? checks[0] : json::object();
  }
};

// --- Credentials ----------------------------------------------------------------------------

TEST_F(LivedInTest, SandboxReadsNoCredentialOfALivedInHome) {
  RunResult result = Probe(ReadAllOp());
  EXPECT_EQ(ReadablePaths(result.out), std::set<std::string>{}) << result.Describe();
  ExpectNoMarker(result.out + result.err);
}

TEST_F(LivedInTest, CommandJobReadsNoCredentialOfALivedInHome) {
  std::vector<std::string> argv = ReadAllArgv();
  std::string id = RunJob({}, argv);
  EXPECT_EQ(ReadablePaths(JobOutput(id)), std::set<std::string>{}) << Summary(id);
  ExpectNoMarker(JobOutput(id) + ShowJson(id).dump());
}

TEST_F(LivedInTest, ProviderJobReadsOnlyItsOwnStateCopyOnWrite) {
  const std::string own = home() + "/.claude/.credentials.json";
  const std::string before = ReadText(own);
  std::vector<std::string> command = ReadAllArgv();
  std::string id = RunProviderJob("claudish", command, {own});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
  EXPECT_EQ(ReadablePaths(JobOutput(id)), CredentialsOf("~/.claude")) << Summary(id);
  EXPECT_FALSE(Contains(JobOutput(id), "write " + own + " failed")) << Summary(id);
  // Copy-on-write: the CLI's write stayed in the job.
  EXPECT_EQ(ReadText(own), before);
}

// A CLI installed in the home outside the allowlist (npm's ~/.npm-global, say) is invisible
// inside the deny-by-default home: berth says so at submission, with the setting that fixes
// it, and runs the job once the user extends the allowlist.
TEST_F(LivedInTest, CliInstalledInTheHomeOutsideTheAllowlistIsNamedBeforeTheRun) {
  const std::string bin = home() + "/.npm-global/bin";
  ASSERT_TRUE(sys::MakeDirs(bin, 0755));
  ASSERT_TRUE(WriteText(bin + "/lived-in-cli", ReadText(Agent("lived_in_cli.sh")), 0755));
  const std::string config = home() + "/.config/berth/config.toml";
  ASSERT_TRUE(WriteText(config, ProvidersConfig(bin + "/lived-in-cli")));
  RunResult refused = Run({"run", "fakecli", "-p", "true\n\n"});
  EXPECT_EQ(refused.exit_code, 69) << refused.Describe();
  EXPECT_TRUE(Contains(refused.err, "lies in your home outside what a job can see"))
      << refused.Describe();
  EXPECT_TRUE(Contains(refused.err, "\"~/.npm-global\" to home_allow")) << refused.Describe();
  EXPECT_TRUE(ListJson().empty()) << "a refused preflight records no job";
  ASSERT_TRUE(WriteText(config, ProvidersConfig(bin + "/lived-in-cli") +
                                    "\n[sandbox]\nhome_allow = [\"~/.npm-global\"]\n"));
  std::string id = RunProviderJob("fakecli", {"true"}, {});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
}

// The account's own home from the password database is hidden whole when HOME points
// elsewhere (docs/sandbox.md, "Other homes"): a CLI installed there is named at submission.
TEST_F(LivedInTest, CliInstalledInAnotherHomeIsNamedBeforeTheRun) {
  struct passwd* pw = getpwuid(getuid());
  const std::string other = sys::RealPath(pw != nullptr ? pw->pw_dir : "").value_or("");
  if (other.empty() || other == "/" || access(other.c_str(), W_OK) != 0)
    GTEST_SKIP() << "SKIPPED LOUDLY: uid " << getuid() << " has no writable passwd home";
  const std::string dir = other + "/" + UniqueName("berth-cli");
  RemoveAfterTest(dir);
  ASSERT_TRUE(sys::MakeDirs(dir + "/bin", 0755));
  ASSERT_TRUE(WriteText(dir + "/bin/lived-in-cli", ReadText(Agent("lived_in_cli.sh")), 0755));
  ASSERT_TRUE(
      WriteText(home() + "/.config/berth/config.toml", ProvidersConfig(dir + "/bin/lived-in-cli")));
  RunResult refused = Run({"run", "fakecli", "-p", "true\n\n"});
  EXPECT_EQ(refused.exit_code, 69) << refused.Describe();
  EXPECT_TRUE(Contains(refused.err, "lies in " + other + ", a home other than HOME"))
      << refused.Describe();
  EXPECT_TRUE(ListJson().empty()) << "a refused preflight records no job";
}

TEST_F(LivedInTest, OtherProvidersJobReadsNoCredential) {
  std::vector<std::string> command = ReadAllArgv();
  std::string id = RunProviderJob("fakecli", command, {home() + "/.fakecli/state"});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
  EXPECT_EQ(ReadablePaths(JobOutput(id)), std::set<std::string>{}) << Summary(id);
  EXPECT_EQ(ReadText(home() + "/.fakecli/state"), "the user's fakecli state\n");
}

TEST_F(LivedInTest, CheckReadsNoCredentialOfALivedInHome) {
  std::vector<std::string> argv = ReadAllArgv();
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"read-all\"\nargv = " + TomlArray(argv) + "\n"));
  json check = RunVerifiedJob();
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_EQ(ReadablePaths(GetStr(check, "output_tail")), std::set<std::string>{}) << check.dump(2);
  ExpectNoMarker(check.dump());
}

// Claude Code keeps ~/.claude.json beside ~/.claude; a job of a provider that names it as a
// state file must start when the file exists (every real machine has it), see its content, and
// keep its writes to itself.
TEST_F(LivedInTest, ClaudeJsonPresentRegression) {
  const std::string claude_json = home() + "/.claude.json";
  const std::string settings = home() + "/.claude/settings.json";
  const std::string json_before = ReadText(claude_json);
  const std::string settings_before = ReadText(settings);
  std::string id = RunProviderJob("claudish", {SANDBOX_PROBE, "read-all", claude_json, settings},
                                  {claude_json, settings});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
  EXPECT_EQ(ReadablePaths(JobOutput(id)), (std::set<std::string>{claude_json, settings}))
      << Summary(id);
  EXPECT_FALSE(Contains(JobOutput(id), "failed")) << Summary(id);
  EXPECT_EQ(ReadText(claude_json), json_before);
  EXPECT_EQ(ReadText(settings), settings_before);
}

// The toolchain of a lived-in home works in a job: git reads ~/.gitconfig through its symlink
// into ~/dotfiles, tools in ~/.local/bin and ~/.nvm run, and a tool that writes its cache in
// the home may do so without the write reaching the host.
TEST_F(LivedInTest, ToolchainOfALivedInHomeWorksInAJob) {
  const std::string command =
      "git config --global user.name && \"$HOME/.local/bin/devtool\" && "
      "\"$HOME/.nvm/versions/node/v20.11.0/bin/node\" && mkdir -p \"$HOME/.cache/pip\" && "
      "echo job > \"$HOME/.cache/pip/job-wrote\" && echo toolchain-ok";
  std::string id = RunJob({}, {"sh", "-c", command});
  const std::string out = ReadText(JobDir(id) + "/stdout");
  EXPECT_TRUE(Contains(out, "Dev Eloper\ndevtool 1.0\nv20.11.0\ntoolchain-ok")) << Summary(id);
  EXPECT_FALSE(PathExists(home() + "/.cache/pip/job-wrote"));
}

// The lived-in ~/.gitconfig keeps part of its settings in ~/.gitconfig.local through an
// [include]: a job's git sees them (the included file is shown read-only), and nothing else
// of the home comes with it.
TEST_F(LivedInTest, GitSeesTheSettingsOfAnIncludedConfigInAJob) {
  const std::string command =
      "git config --global --includes pull.rebase && git config --global --includes core.editor "
      "&& cat \"$HOME/.gitconfig.local\" > /dev/null && echo include-ok; "
      "test -e \"$HOME/.ssh\" && echo ssh-visible; exit 0";
  std::string id = RunJob({}, {"sh", "-c", command});
  const std::string out = ReadText(JobDir(id) + "/stdout");
  EXPECT_TRUE(Contains(out, "true\nvi\ninclude-ok")) << Summary(id);
  EXPECT_FALSE(Contains(out, "ssh-visible")) << Summary(id);
}

// --- Grants a real job needs ----------------------------------------------------------------

// npm and go with berth's shared caches: npm also reads ~/.npmrc, which berth hides.
constexpr char kCacheCommand[] =
    "npm_config_update_notifier=false npm cache verify && test -n \"$GOCACHE\" && "
    "mkdir -p \"$GOCACHE\" && echo cached > \"$GOCACHE/berth-probe\"";

TEST_F(LivedInTest, CacheGrantInJobRegression) {
  std::optional<std::string> npm = FindInPath("npm");
  REQUIRE_FEATURE(npm.has_value(), "npm is not installed");
  std::string id =
      RunJob({"--grant", "cache:npm", "--grant", "cache:go"}, {"sh", "-c", kCacheCommand});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
  EXPECT_EQ(ReadText(state() + "/caches/go/build/berth-probe"), "cached\n") << Summary(id);
  EXPECT_TRUE(PathExists(state() + "/caches/npm")) << Summary(id);
}

TEST_F(LivedInTest, CacheGrantInCheckRegression) {
  std::optional<std::string> npm = FindInPath("npm");
  REQUIRE_FEATURE(npm.has_value(), "npm is not installed");
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"caches\"\ngrants = [\"cache:npm\", "
                "\"cache:go\"]\nargv = [\"sh\", \"-c\", " +
                Toml(kCacheCommand) + "]\n"));
  json check = RunVerifiedJob();
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_EQ(ReadText(state() + "/caches/go/build/berth-probe"), "cached\n") << check.dump(2);
}

// A job granted write:~/.agents writes there and the write reaches the host directory; every
// other dot-directory stays out of reach.
TEST_F(LivedInTest, WriteGrantOnADotDirReachesTheHost) {
  const std::string skill = home() + "/.agents/skills/new/SKILL.md";
  const std::string codex_config = home() + "/.codex/config.toml";
  const std::string codex_before = ReadText(codex_config);
  const std::string bashrc_before = ReadText(home() + "/.bashrc");
  std::string command =
      "mkdir -p \"$HOME/.agents/skills/new\" && echo from-the-job > \"$HOME/"
      ".agents/skills/new/SKILL.md\" && { echo x > \"$HOME/.codex/config.toml\"; "
      "echo x > \"$HOME/.bashrc\"; " +
      JoinWords(ReadAllArgv()) + "; }";
  std::string id = RunJob({"--grant", "write:~/.agents"}, {"sh", "-c", command});
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed") << Summary(id);
  EXPECT_EQ(ReadText(skill), "from-the-job\n") << Summary(id);
  EXPECT_EQ(ReadablePaths(JobOutput(id)), std::set<std::string>{}) << Summary(id);
  EXPECT_EQ(ReadText(codex_config), codex_before);
  EXPECT_EQ(ReadText(home() + "/.bashrc"), bashrc_before);
}

// The same grant on a check: a check that verifies an agent's skills may write the dot-dir
// on the host; what it writes elsewhere in the home lands in its private home and is gone.
TEST_F(LivedInTest, WriteGrantOnADotDirWorksInACheck) {
  const std::string skill = home() + "/.agents/skills/checked/SKILL.md";
  const std::string bashrc_before = ReadText(home() + "/.bashrc");
  const std::string command =
      "mkdir -p \"$HOME/.agents/skills/checked\" && echo from-the-check > \"$HOME/"
      ".agents/skills/checked/SKILL.md\" && echo x > \"$HOME/.bashrc.berth\"";
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"skills\"\ngrants = [\"write:~/.agents\"]\nargv = "
                "[\"sh\", \"-c\", " +
                Toml(command) + "]\n"));
  json check = RunVerifiedJob();
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_EQ(ReadText(skill), "from-the-check\n") << check.dump(2);
  EXPECT_FALSE(PathExists(home() + "/.bashrc.berth")) << "a write outside the grant got out";
  EXPECT_EQ(ReadText(home() + "/.bashrc"), bashrc_before);
}

// --- The home's own Unix socket -------------------------------------------------------------

TEST_F(LivedInTest, HomeSocketIsUnreachableWithoutAGrant) {
  const UnixHttpServer& socket = lived_in()->socket();
  ASSERT_TRUE(Contains(ProbeOutside({"unix-connect", socket.path()}).out, "unix-connect ok"));
  ASSERT_TRUE(WaitUntil([&] { return socket.connections() == 1; }, kStateWait));
  RunResult result = Probe({"unix-connect", socket.path()});
  EXPECT_FALSE(Contains(result.out, "unix-connect ok")) << result.Describe();
  std::vector<std::string> argv = {SANDBOX_PROBE, "unix-connect", socket.path()};
  std::string id = RunJob({}, argv, {}, kAnyExit);
  EXPECT_FALSE(Contains(JobOutput(id), "unix-connect ok")) << Summary(id);
  EXPECT_EQ(socket.connections(), 1);
}

// A socket granted by path works where it lives, in the home and not under /run.
TEST_F(LivedInTest, HostSocketOutsideRunRegression) {
  const UnixHttpServer& socket = lived_in()->socket();
  RunResult result = Probe({"unix-connect", socket.path()}, {"--grant", "socket:" + socket.path()});
  EXPECT_TRUE(Contains(result.out, "unix-connect ok")) << result.Describe();
  std::optional<std::string> curl = FindInPath("curl");
  REQUIRE_FEATURE(curl.has_value(), "curl is not installed");
  std::string id = RunJob({"--grant", "socket:" + socket.path()},
                          {*curl, "-sS", "--unix-socket", socket.path(), "http://devtool/status"});
  EXPECT_TRUE(Contains(JobOutput(id), "hello-from-the-home-socket GET /status")) << Summary(id);
}

// --- A HOME, state and repository under /tmp ------------------------------------------------

class LivedInUnderTmpTest : public LivedInTest {
 protected:
  void SetUp() override {
    UseRootUnder("/tmp");
    LivedInTest::SetUp();
  }
};

TEST_F(LivedInUnderTmpTest, HomeUnderTmpRegression) {
  ASSERT_EQ(root().rfind("/tmp/", 0), 0u) << root();
  RunResult pwd = Probe({"pwd"});
  EXPECT_TRUE(Contains(pwd.out, "pwd ok path=" + ws())) << pwd.Describe();
  RunResult probe = Probe(ReadAllOp());
  EXPECT_EQ(ReadablePaths(probe.out), std::set<std::string>{}) << probe.Describe();
  std::string id = RunJob({}, {"sh", "-c", "echo 'int t;' > src/tmp.c"});
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << Summary(id);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/tmp.c"}), "int t;");
}

// --- Bounded-lane grants with the real parts -------------------------------------------------

TEST_F(LivedInTest, BrowserGrantRunsHeadlessChromiumInAJob) {
  std::optional<std::string> chromium = Chromium();
  REQUIRE_FEATURE(chromium.has_value(), "chromium is not installed (scripts/install-deps)");
  std::string id = RunJob({"--grant", "browser"}, {"sh", "-c", ChromiumDumpCommand(*chromium)});
  EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stdout"), "hello-berth")) << Summary(id);
  // The control: without the grant Chromium cannot build its sandbox. (As root it runs
  // without one, so only the unprivileged run can tell the grant's part.)
  if (!IsRoot()) {
    std::string denied = RunJob({}, {"sh", "-c", ChromiumDumpCommand(*chromium)}, {}, kAnyExit);
    EXPECT_FALSE(Contains(ReadText(JobDir(denied) + "/stdout"), "hello-berth")) << Summary(denied);
  }
}

TEST_F(LivedInTest, BrowserGrantRunsHeadlessChromiumInACheck) {
  std::optional<std::string> chromium = Chromium();
  REQUIRE_FEATURE(chromium.has_value(), "chromium is not installed (scripts/install-deps)");
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"browser\"\ngrants = [\"browser\"]\n"
                "argv = [\"sh\", \"-c\", " +
                Toml(ChromiumDumpCommand(*chromium)) + "]\n"));
  json check = RunVerifiedJob();
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "output_tail"), "hello-berth")) << check.dump(2);
}

// A Docker-like daemon: HTTP over a Unix socket outside the home, found through DOCKER_HOST.
class DockerSocketTest : public LivedInTest {
 protected:
  void SetUp() override {
    LivedInTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> curl = FindInPath("curl");
    REQUIRE_FEATURE(curl.has_value(), "curl is not installed");
    curl_ = *curl;
    Result<std::unique_ptr<UnixHttpServer>> server =
        UnixHttpServer::Start(root() + "/docker.sock", "fake-dockerd");
    ASSERT_TRUE(server) << server.error().ToString();
    docker_ = std::move(*server);
  }
  void TearDown() override {
    docker_.reset();
    LivedInTest::TearDown();
  }
  EnvVars DockerEnv() const { return {{"DOCKER_HOST", "unix://" + docker_->path()}}; }
  std::vector<std::string> PingArgv() const {
    return {curl_, "-sS", "--unix-socket", docker_->path(), "http://docker/_ping"};
  }

  std::string curl_;
  std::unique_ptr<UnixHttpServer> docker_;
};

// Without the grant the daemon is out of reach, though its socket sits in a directory the
// sandbox shows read-only.
TEST_F(DockerSocketTest, DockerSocketIsUnreachableWithoutTheGrant) {
  std::string id = RunJob({}, PingArgv(), DockerEnv(), kAnyExit);
  EXPECT_FALSE(Contains(JobOutput(id), "fake-dockerd")) << Summary(id);
  RunResult probe = Probe({"unix-connect", docker_->path()});
  EXPECT_FALSE(Contains(probe.out, "unix-connect ok")) << probe.Describe();
  EXPECT_EQ(docker_->connections(), 0);
}

TEST_F(DockerSocketTest, DockerGrantReachesTheDaemonAndIsRootEquivalent) {
  std::string id = RunJob({"--grant", "docker"}, PingArgv(), DockerEnv());
  EXPECT_TRUE(Contains(JobOutput(id), "fake-dockerd GET /_ping")) << Summary(id);
  json grants = Get(ReadReceiptFile(id), "sandbox.grants");
  bool root_equivalent = false;
  if (grants.is_array())
    for (const json& g : grants)
      root_equivalent |= GetStr(g, "grant") == "docker" && Get(g, "root_equivalent") == true;
  EXPECT_TRUE(root_equivalent) << grants.dump(2);
  EXPECT_TRUE(Contains(ReadReceiptFile(id).dump(), "root-equivalent")) << grants.dump(2);
}

TEST_F(DockerSocketTest, DockerGrantReachesTheDaemonInACheck) {
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"docker\"\ngrants = [\"docker\"]\n"
                "argv = " +
                TomlArray(PingArgv()) + "\n"));
  json check = RunVerifiedJob(DockerEnv());
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "output_tail"), "fake-dockerd GET /_ping")) << check.dump(2);
}

}  // namespace
}  // namespace berth::e2e
