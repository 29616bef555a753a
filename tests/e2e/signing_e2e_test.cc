// End-to-end tests of signed lands (docs/landing.md, "Signing"): with `commit.gpgsign = true`
// in the user's git config, the commit `berth land` puts on their branch is signed by their own
// signing program with their key, as `git commit` would sign it, and `git verify-commit`
// accepts it. Real gpg with a key made by the test in its own GNUPGHOME, real ssh-keygen with
// a key made by the test and verified through gpg.ssh.allowedSignersFile. A signing program
// that fails stops the land with its words and leaves the repository as it was.
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/strings.h"
#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using nlohmann::json;

constexpr char kPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]

[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
)";

// The jobs fixture's repository (its identity "berth e2e <e2e@berth.invalid>"), a GNUPGHOME
// of the test's own, and berth and git both run with it.
class SigningTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kPolicy; }

  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    gnupg_ = root() + "/gnupg";
    ASSERT_TRUE(sys::MakeDirs(gnupg_, 0700));
    tmp_ = root() + "/tmp";
    ASSERT_TRUE(sys::MakeDirs(tmp_, 0700));
  }

  void TearDown() override {
    // The gpg-agent that signing started lives on past the test: ended by its own tool.
    if (started_agent_)
      if (std::optional<std::string> gpgconf = FindInPath("gpgconf"))
        RunProgram({*gpgconf, "--kill", "gpg-agent"}, Env(), ws());
    JobsTest::TearDown();
  }

  EnvVars Env() const {
    return {{"PATH", kPath}, {"HOME", home()}, {"GNUPGHOME", gnupg_}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  }
  RunResult BerthSigning(const std::vector<std::string>& args) const {
    EnvVars env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GNUPGHOME", gnupg_}, {"TMPDIR", tmp_}};
    if (!agent_socket_.empty()) env.emplace_back("SSH_AUTH_SOCK", agent_socket_);
    return Run(args, env);
  }
  RunResult GitSigning(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {*FindInPath("git")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, Env(), ws());
  }
  void Config(const std::string& key, const std::string& value) {
    ASSERT_EQ(Git({"config", key, value}).exit_code, 0);
  }

  // A passphrase-less OpenPGP key for the repository's identity, made in the test's GNUPGHOME.
  void MakeGpgKey() {
    std::optional<std::string> gpg = FindInPath("gpg");
    REQUIRE_FEATURE(gpg.has_value(), "no gpg in /usr/local/bin, /usr/bin or /bin");
    started_agent_ = true;
    RunResult made = RunProgram({*gpg, "--batch", "--passphrase", "", "--quick-gen-key",
                                 "berth e2e <e2e@berth.invalid>", "ed25519", "sign", "never"},
                                Env(), ws());
    ASSERT_EQ(made.exit_code, 0) << made.Describe();
  }

  // A passphrase-less ed25519 key at HOME/.ssh/berth_signing, and an allowed-signers file
  // that git verifies it with (gpg.ssh.allowedSignersFile).
  void MakeSshKey() {
    std::optional<std::string> keygen = FindInPath("ssh-keygen");
    REQUIRE_FEATURE(keygen.has_value(), "no ssh-keygen in /usr/local/bin, /usr/bin or /bin");
    EXPECT_TRUE(sys::MakeDirs(home() + "/.ssh", 0700));
    const std::string key = home() + "/.ssh/berth_signing";
    RunResult made =
        RunProgram({*keygen, "-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", key}, Env(), ws());
    EXPECT_EQ(made.exit_code, 0) << made.Describe();
    std::string pub = TrimRight(ReadText(key + ".pub"));
    EXPECT_TRUE(WriteText(root() + "/allowed_signers", "e2e@berth.invalid " + pub + "\n"));
    Config("gpg.ssh.allowedSignersFile", root() + "/allowed_signers");
  }

  // Runs an agent script (the edit agent by default) to completion; returns the job id.
  std::string RunJob(const std::string& script = "edit.sh",
                     const std::vector<std::string>& args = {}) {
    RunResult run = BerthSigning(RunArgs({"--json"}, "implement", script, args));
    json job = json::parse(run.out, nullptr, false);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), "completed") << run.Describe();
    return job.value("id", "<no id>");
  }

  json Land(const std::string& id, int expected_exit, RunResult* ran = nullptr) {
    RunResult land = BerthSigning({"land", "--json", id});
    EXPECT_EQ(land.exit_code, expected_exit) << land.Describe();
    if (ran != nullptr) *ran = land;
    json result = json::parse(land.out, nullptr, false);
    return result.is_object() ? result : json::object();
  }

  // What a land could change: HEAD, the refs, the index, the journal, the checkout's files.
  std::map<std::string, std::string> RepoState() const {
    std::map<std::string, std::string> state;
    for (const auto& [path, what] : TreeFingerprint(ws()))
      if (!path.starts_with(".git/") && path != ".git") state["file " + path] = what;
    state["HEAD"] = ReadText(ws() + "/.git/HEAD");
    state["index"] = ReadText(ws() + "/.git/index");
    state["refs"] = Git({"for-each-ref", "--format=%(refname) %(objectname)"}).out;
    state["journal"] = PathExists(ws() + "/.git/berth-land.json") ? "present" : "absent";
    return state;
  }

  // A stand-in signing program: a shell script at ROOT/NAME.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = root() + "/" + name;
    EXPECT_TRUE(WriteText(path, "#!/bin/sh\n" + body, 0755));
    return path;
  }

  std::string gnupg_;
  std::string tmp_;           // berth's TMPDIR
  std::string agent_socket_;  // an ssh-agent's, once started
  bool started_agent_ = false;
};

TEST_F(SigningTest, GpgSignedLandPassesVerifyCommitWithTheDefaultKeyOfTheUsersIdentity) {
  MakeGpgKey();
  if (HasFatalFailure() || IsSkipped()) return;
  // No user.signingkey: git signs with the key of the committer's identity, the user's.
  Config("commit.gpgsign", "true");
  const std::string id = RunJob();
  json landed = Land(id, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(landed["signed"], "openpgp") << landed.dump(2);
  const std::string head = GitOut({"rev-parse", "HEAD"});
  EXPECT_EQ(landed.value("new", ""), head);
  RunResult verified = GitSigning({"verify-commit", "-v", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();
  EXPECT_TRUE(Contains(verified.err, "Good signature")) << verified.Describe();
  EXPECT_EQ(TrimRight(GitSigning({"log", "-1", "--format=%G? %GS"}).out),
            "G berth e2e <e2e@berth.invalid>");
  // The signature sits in the gpgsig header as git writes it: no line of one space after it.
  const std::string object = GitOut({"cat-file", "commit", "HEAD"});
  EXPECT_TRUE(Contains(object, "\ngpgsig -----BEGIN PGP SIGNATURE-----\n")) << object;
  EXPECT_TRUE(Contains(object, "\n -----END PGP SIGNATURE-----\n\n")) << object;
  // Signed, and otherwise the land it always was: the user's, berth's, the job's trailer.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae> / %cn"}),
            "berth e2e <e2e@berth.invalid> / berth");
  EXPECT_TRUE(Contains(GitOut({"log", "-1", "--format=%B"}), "Berth-Job: " + id));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), base());
}

TEST_F(SigningTest, SshSignedLandPassesVerifyCommitWithAKeyFileUnderHome) {
  MakeSshKey();
  if (HasFatalFailure() || IsSkipped()) return;
  Config("commit.gpgsign", "true");
  Config("gpg.format", "ssh");
  Config("user.signingkey", "~/.ssh/berth_signing");  // expanded as git does
  const std::string id = RunJob();
  // The human output says so.
  RunResult landed = BerthSigning({"land", id});
  EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_TRUE(Contains(landed.out, ", signed (ssh)")) << landed.Describe();
  RunResult verified = GitSigning({"verify-commit", "-v", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();
  EXPECT_TRUE(Contains(verified.err, "Good \"git\" signature for e2e@berth.invalid"))
      << verified.Describe();
  EXPECT_TRUE(Contains(GitOut({"cat-file", "commit", "HEAD"}), "-----BEGIN SSH SIGNATURE-----"));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  // The payload's temporary directory is gone.
  Result<std::vector<std::string>> left = sys::ListDir(tmp_);
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_TRUE(left->empty()) << left->front();
}

// A literal public key (user.signingkey = "key::ssh-ed25519 ..."): the private half is in the
// user's ssh-agent only, and ssh-keygen -U asks the agent to sign.
TEST_F(SigningTest, SshLiteralKeyIsSignedByTheUsersAgent) {
  MakeSshKey();
  if (HasFatalFailure() || IsSkipped()) return;
  std::optional<std::string> agent = FindInPath("ssh-agent");
  std::optional<std::string> add = FindInPath("ssh-add");
  REQUIRE_FEATURE(agent && add, "no ssh-agent or ssh-add in /usr/local/bin, /usr/bin or /bin");
  agent_socket_ = root() + "/agent.sock";
  RunningProgram running = StartProgram({*agent, "-D", "-a", agent_socket_}, Env(), ws());
  ASSERT_TRUE(WaitUntil([&] { return PathExists(agent_socket_); }, std::chrono::seconds(20)));
  EnvVars with_agent = Env();
  with_agent.emplace_back("SSH_AUTH_SOCK", agent_socket_);
  const std::string key = home() + "/.ssh/berth_signing";
  RunResult added = RunProgram({*add, key}, with_agent, ws());
  ASSERT_EQ(added.exit_code, 0) << added.Describe();
  const std::string pub = TrimRight(ReadText(key + ".pub"));
  // The private key leaves the disk: only the agent can sign now.
  ASSERT_EQ(::unlink(key.c_str()), 0);
  Config("commit.gpgsign", "true");
  Config("gpg.format", "ssh");
  Config("user.signingkey", "key::" + pub);
  const std::string id = RunJob();
  json landed = Land(id, 0);
  EXPECT_EQ(landed["signed"], "ssh") << landed.dump(2);
  RunResult verified = GitSigning({"verify-commit", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();
  Result<std::vector<std::string>> left = sys::ListDir(tmp_);
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_TRUE(left->empty());
}

TEST_F(SigningTest, SigningOffLandsAnUnsignedCommitAsBefore) {
  // The fixture's commit.gpgsign = false, with a signing program that would fail if run.
  Config("gpg.program", Script("never-run", "echo ran >&2\nexit 9\n"));
  const std::string id = RunJob();
  json landed = Land(id, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_TRUE(landed["signed"].is_null()) << landed.dump(2);
  EXPECT_FALSE(Contains(GitOut({"cat-file", "commit", "HEAD"}), "gpgsig"));
  EXPECT_NE(GitSigning({"verify-commit", "HEAD"}).exit_code, 0);
}

TEST_F(SigningTest, FailingSigningProgramStopsTheLandWithItsWordsAndChangesNothing) {
  Config("commit.gpgsign", "true");
  Config("user.signingkey", "DEADBEEF");
  const std::string program = Script(
      "broken-gpg", "cat >/dev/null\necho 'gpg: signing failed: No secret key' >&2\nexit 2\n");
  Config("gpg.program", program);
  const std::string id = RunJob();
  ASSERT_TRUE(WriteText(ws() + "/README.md", "the user's uncommitted edit\n"));
  const auto before = RepoState();
  RunResult ran;
  Land(id, 69, &ran);
  EXPECT_TRUE(Contains(ran.err, program + " --status-fd=2 -bsau DEADBEEF")) << ran.Describe();
  EXPECT_TRUE(Contains(ran.err, "exited with 2")) << ran.Describe();
  EXPECT_TRUE(Contains(ran.err, "gpg: signing failed: No secret key")) << ran.Describe();
  EXPECT_TRUE(Contains(ran.err, "commit.gpgsign false")) << ran.Describe();
  EXPECT_EQ(RepoState(), before);
  json shown = ShowJson(id);
  EXPECT_TRUE(shown["landed_commit"].is_null()) << shown.dump(2);

  // A program that exits 0 without gpg's SIG_CREATED status has not signed anything.
  Config("gpg.program", Script("silent-gpg", "cat >/dev/null\necho 'not a signature'\n"));
  Land(id, 69, &ran);
  EXPECT_TRUE(Contains(ran.err, "no SIG_CREATED")) << ran.Describe();
  EXPECT_EQ(RepoState(), before);

  // A program that is not there is named before anything else happens.
  Config("gpg.program", root() + "/no-such-gpg");
  Land(id, 69, &ran);
  EXPECT_TRUE(Contains(ran.err, "no-such-gpg")) << ran.Describe();
  EXPECT_EQ(RepoState(), before);

  // ssh: ssh-keygen's own refusal of a missing key file.
  if (FindInPath("ssh-keygen")) {
    Config("gpg.format", "ssh");
    Config("gpg.program", "gpg");
    Config("user.signingkey", root() + "/no-such-key");
    Land(id, 69, &ran);
    EXPECT_TRUE(Contains(ran.err, "-Y sign -n git -f " + root() + "/no-such-key"))
        << ran.Describe();
    EXPECT_EQ(RepoState(), before);
    // ssh without user.signingkey has no key to sign with, which --dry-run reports too.
    ASSERT_EQ(Git({"config", "--unset", "user.signingkey"}).exit_code, 0);
    RunResult dry = BerthSigning({"land", "--dry-run", id});
    EXPECT_EQ(dry.exit_code, 69) << dry.Describe();
    EXPECT_TRUE(Contains(dry.err, "user.signingkey is not set")) << dry.Describe();
    EXPECT_EQ(RepoState(), before);
  }

  // Nothing was recorded: with signing turned off the same job lands.
  Config("commit.gpgsign", "false");
  json landed = Land(id, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
}

// Auto-land signs as `berth land` does, with the environment of the `berth run` that landed;
// a signer that fails leaves the job completed and unlanded, with the reason in its events.
TEST_F(SigningTest, AutoLandSignsTooAndASigningFailureLeavesTheJobToLandByHand) {
  MakeSshKey();
  if (HasFatalFailure() || IsSkipped()) return;
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kPolicy) + "\n[landing]\nauto = true\n"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "auto-land"}).exit_code, 0);
  const std::string start = GitOut({"rev-parse", "HEAD"});
  Config("commit.gpgsign", "true");
  Config("gpg.format", "ssh");
  Config("user.signingkey", "~/.ssh/berth_signing");
  const std::string id = RunJob();
  const std::string head = GitOut({"rev-parse", "HEAD"});
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), start);
  EXPECT_EQ(GetStr(ShowJson(id), "landed_commit"), head);
  RunResult verified = GitSigning({"verify-commit", "HEAD"});
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();

  Config("gpg.ssh.program",
         Script("broken-ssh", "echo 'sign_and_send_pubkey: no agent' >&2\nexit 1\n"));
  const std::string second = RunJob("copy.sh", {"src/main.c", "src/copy.c"});
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), head);
  json shown = ShowJson(second);
  EXPECT_EQ(GetStr(shown, "state"), "completed") << shown.dump(2);
  EXPECT_TRUE(shown["landed_commit"].is_null()) << shown.dump(2);
  RunResult logs = BerthSigning({"logs", second, "--json"});
  bool event = false;
  for (const std::string& line : Split(logs.out, '\n')) {
    json e = json::parse(line, nullptr, false);
    if (e.is_object() && e.value("step", "") == "land" &&
        Contains(e.value("detail", ""), "auto-land failed") &&
        Contains(e.value("detail", ""), "sign_and_send_pubkey: no agent"))
      event = true;
  }
  EXPECT_TRUE(event) << logs.Describe();
}

}  // namespace
}  // namespace berth::e2e
