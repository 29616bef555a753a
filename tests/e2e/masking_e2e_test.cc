// End-to-end tests of secret masking (PRODUCT.md invariant 3, docs/receipt.md "Masking"): an
// agent that prints its provider key and a passed-through GITHUB_TOKEN on stdout, on stderr,
// in its final answer and into its workspace (tests/fixtures/agents/leak_cli.sh). No clear
// value may appear in `berth logs`, `berth show`, the receipt, the raw output files, the
// checks' logs, or the bytes of the SQLite store and its write-ahead log. And the values of
// the policy's passed variables (`[env] pass`): never stored at all, for a job run here, a
// detached one, or one a worker runs from the queue.

#include <filesystem>
#include <map>
#include <system_error>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kProviderKey[] = "sk-leaky-0123456789abcdef";
constexpr char kGithubToken[] = "ghp_e2eMaskingToken0123456789";

constexpr char kLeakyPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 2
[agents.leaky]
capability = "write"
provider = "leaky"
writable = ["src/**"]
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[env]
pass = ["GITHUB_TOKEN"]
[[verify]]
name = "show-leak"
argv = ["sh", "-c", "cat src/leak.txt 2>/dev/null; echo checked"]
)";

std::string LeakyConfig(const std::string& executable) {
  return R"([providers.leaky]
executable = ")" +
         executable + R"("
version_args = ["--version"]
write_args = ["--write"]
credentials = ["FAKE_API_KEY"]
output = "json-lines"
[providers.leaky.fields]
text = "result"
model = "model"
session = "session"
)";
}

class MaskingTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(PolicyPath(), kLeakyPolicy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "leaky policy"}).exit_code, 0);
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(
        WriteText(home() + "/.config/berth/config.toml", LeakyConfig(Agent("leak_cli.sh"))));
  }

  static EnvVars Secrets() {
    return {{"GIT_CONFIG_NOSYSTEM", "1"},
            {"FAKE_API_KEY", kProviderKey},
            {"GITHUB_TOKEN", kGithubToken}};
  }
  RunResult BerthWithSecrets(const std::vector<std::string>& args) const {
    return Run(args, Secrets());
  }

  // Runs the leaky agent to completion (its check runs too) and returns the job id.
  std::string RunLeakyJob() {
    RunResult run = BerthWithSecrets({"run", "leaky", "-p", "leak everything"});
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    EXPECT_FALSE(Contains(run.out + run.err, kProviderKey)) << run.Describe();
    EXPECT_FALSE(Contains(run.out + run.err, kGithubToken)) << run.Describe();
    const std::string id = NewestJobId();
    // The leak really happened: the agent saw both values and wrote them into its commit.
    EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/leak.txt"}),
              std::string("key ") + kProviderKey + "\ntoken " + kGithubToken);
    return id;
  }

  // Fails the test for every secret value found in `text`, naming `where`.
  static void ExpectNoSecret(const std::string& text, const std::string& where) {
    EXPECT_FALSE(Contains(text, kProviderKey)) << where << " holds the provider key:\n" << text;
    EXPECT_FALSE(Contains(text, kGithubToken)) << where << " holds GITHUB_TOKEN:\n" << text;
    // Nor a long piece of one (a secret split in two must not survive in halves).
    EXPECT_FALSE(Contains(text, std::string(kProviderKey).substr(6))) << where << ":\n" << text;
  }
};

// The bug: `berth logs` printed a provider key that the agent echoed, in clear.
TEST_F(MaskingTest, LogsPrintProviderKeyRegression) {
  const std::string id = RunLeakyJob();
  // Without the caller's secrets in its environment, so that only what was stored is shown.
  RunResult logs = Berth({"logs", id});
  ASSERT_EQ(logs.exit_code, 0) << logs.Describe();
  ExpectNoSecret(logs.out, "berth logs (stdout)");
  ExpectNoSecret(logs.err, "berth logs (stderr)");
  EXPECT_TRUE(Contains(logs.out, "github: ***")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.out, "split: ***")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.err, "stderr key=*** token=***")) << logs.Describe();
  // And with them, as a user would run it.
  RunResult again = BerthWithSecrets({"logs", id});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  ExpectNoSecret(again.out + again.err, "berth logs with the secrets set");
  RunResult show = BerthWithSecrets({"show", id});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  ExpectNoSecret(show.out + show.err, "berth show");
  EXPECT_TRUE(Contains(show.out, "model ***")) << show.Describe();
  RunResult show_json = BerthWithSecrets({"show", id, "--json"});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.Describe();
  ExpectNoSecret(show_json.out, "berth show --json");
}

// The bug: secret values the agent printed were stored in clear in the job store (events,
// receipt) and the passed-through token in the stored request.
TEST_F(MaskingTest, StoreHoldsSecretInClearRegression) {
  const std::string id = RunLeakyJob();
  json receipt = ReadReceiptFile(id);
  ASSERT_TRUE(receipt.is_object());
  ExpectNoSecret(receipt.dump(), "receipt.json");
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), "done: key *** token ***") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "provider.model.reported"), "***") << receipt.dump(2);
  json checks = Get(receipt, "verification.checks");
  ASSERT_TRUE(checks.is_array() && checks.size() == 1) << receipt.dump(2);
  EXPECT_EQ(GetStr(checks[0], "output_tail"), "key ***\ntoken ***\nchecked\n") << receipt.dump(2);
  ExpectNoSecret(ShowJson(id).dump(), "the store's job record");

  for (const std::string& file : {state() + "/berth.db", state() + "/berth.db-wal"}) {
    if (!PathExists(file)) continue;
    ExpectNoSecret(ReadText(file), file);
  }
  // The store did get the events: the masked model name is there.
  RunResult logs = Berth({"logs", id});
  EXPECT_TRUE(Contains(logs.err, "leaky finished (model ***)")) << logs.Describe();
}

// The bug: the job's raw stdout and stderr files held the secrets in clear.
TEST_F(MaskingTest, RawOutputFilesHoldSecretRegression) {
  const std::string id = RunLeakyJob();
  const std::string out = ReadText(JobDir(id) + "/stdout");
  const std::string err = ReadText(JobDir(id) + "/stderr");
  ExpectNoSecret(out, "the stdout file");
  ExpectNoSecret(err, "the stderr file");
  EXPECT_TRUE(Contains(out, "split: ***\n")) << out;
  EXPECT_TRUE(Contains(err, "stderr key=*** token=***")) << err;
  // The checks' output too: their logs go with the verification's scratch directory, and
  // what stays of them is each check's output tail in the receipt.
  json checks = Get(ShowJson(id), "receipt.verification.checks");
  ASSERT_TRUE(checks.is_array() && checks.size() == 1) << checks.dump(2);
  const std::string tail = GetStr(checks[0], "output_tail");
  ExpectNoSecret(tail, "the check's output tail");
  EXPECT_TRUE(Contains(tail, "key ***\ntoken ***\n")) << tail;
  std::error_code error;
  for (const auto& dir : std::filesystem::directory_iterator(JobDir(id), error))
    EXPECT_NE(dir.path().filename().string().rfind("verify-", 0), 0u) << dir.path();
}

// With output_limit, the head is written as it comes and the tail at the end: a secret in
// either, or on the boundary, is masked; the elided count is still stated.
TEST_F(MaskingTest, BoundedOutputMasksHeadAndTail) {
  std::string policy = kLeakyPolicy;
  policy.replace(policy.find("max_concurrent_jobs = 2"), 23,
                 "max_concurrent_jobs = 2\noutput_limit = \"4KiB\"");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "small output limit"}).exit_code, 0);
  RunResult run = BerthWithSecrets(
      {"run", "implement", "--", "sh", "-c",
       "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
       "echo \"$i $GITHUB_TOKEN padding padding padding padding padding padding padding\"; done; "
       "head -c 20000 /dev/zero | tr '\\0' x; echo; "
       "for i in 1 2 3 4 5 6 7 8 9 10; do echo \"tail $i $GITHUB_TOKEN\"; done"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  const std::string out = ReadText(JobDir(id) + "/stdout");
  ExpectNoSecret(out, "the bounded stdout file");
  EXPECT_TRUE(Contains(out, "1 *** padding")) << out;
  EXPECT_TRUE(Contains(out, "tail 10 ***")) << out;
  EXPECT_TRUE(Contains(out, " bytes elided]")) << out;
  EXPECT_LE(out.size(), 4096u + 64u) << out;
}

// --- Passed variables ([env] pass): their values are never stored (issue 27 §3) ----------

// Every value is unique to this suite, so that a byte scan finds only a leak. The submitter
// and the worker have different values: a queued job must see the worker's.
constexpr char kSubmitterUrl[] = "postgres://u:PW-submit-7f3a9c1e@host/db";
constexpr char kWorkerUrl[] = "postgres://u:PW-worker-5b2d8e04@host/db";
constexpr char kSubmitterPlain[] = "plain-submit-4e71c9d2";
constexpr char kWorkerPlain[] = "plain-worker-a18f3b60";
constexpr char kSubmitterOnly[] = "only-submitter-93c0e5f7";

// The check proves that checks get the passed values too: it compares what it sees of
// PLAIN_SETTING with the hash the agent wrote (env_check.sh).
constexpr char kPassPolicy[] = R"POL(version = 1
[defaults]
max_concurrent_jobs = 2
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[env]
pass = ["DATABASE_URL", "PLAIN_SETTING", "SUBMITTER_ONLY"]
[[verify]]
name = "sees-plain-setting"
argv = ["sh", "-c", "test -n \"${PLAIN_SETTING+set}\" && test \"$(printf '%s' \"$PLAIN_SETTING\" | sha256sum | cut -d' ' -f1)\" = \"$(cat src/plain.sha256)\""]
)POL";

class PassedVariablesTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kPassPolicy; }

  static EnvVars SubmitterEnv() {
    return {{"GIT_CONFIG_NOSYSTEM", "1"},
            {"DATABASE_URL", kSubmitterUrl},
            {"PLAIN_SETTING", kSubmitterPlain},
            {"SUBMITTER_ONLY", kSubmitterOnly}};
  }
  // The worker lacks SUBMITTER_ONLY: the job sees it unset.
  static EnvVars WorkerEnv() {
    return {{"GIT_CONFIG_NOSYSTEM", "1"},
            {"DATABASE_URL", kWorkerUrl},
            {"PLAIN_SETTING", kWorkerPlain}};
  }

  // The sha256 of `value` in hex, as env_check.sh computes it.
  std::string Sha256(const std::string& value) const {
    RunResult r = RunProgram({"/bin/sh", "-c", "printf '%s' \"$V\" | sha256sum | cut -d' ' -f1"},
                             {{"PATH", kPath}, {"V", value}}, ws());
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return TrimRight(r.out);
  }

  // env_check.sh's arguments for a job that must see `url`, `plain` and `only` (null: unset).
  std::vector<std::string> Expect(const char* url, const char* plain, const char* only) const {
    return {"DATABASE_URL=" + Sha256(url), "PLAIN_SETTING=" + Sha256(plain),
            std::string("SUBMITTER_ONLY=") + (only == nullptr ? "unset" : Sha256(only))};
  }

  // The job completed (its agent saw what it had to, its check too), and its stored output
  // shows the URL it printed with the password masked by its supervisor. `berth logs` runs
  // without the values, so that it cannot mask them itself.
  void ExpectCompletedAndMasked(const std::string& id) const {
    json job = ShowJson(id);
    EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
    RunResult logs = Berth({"logs", id});
    EXPECT_EQ(logs.exit_code, 0) << logs.Describe();
    EXPECT_TRUE(Contains(logs.out, "url: postgres://u:***@host/db")) << logs.Describe();
  }

  // Fails for each passed value found in `text`.
  static void ExpectNoValue(const std::string& text, const std::string& where) {
    for (const char* value : {"PW-submit-7f3a9c1e", "PW-worker-5b2d8e04", kSubmitterPlain,
                              kWorkerPlain, kSubmitterOnly})
      EXPECT_FALSE(Contains(text, value)) << where << " holds " << value;
  }
};

// The bug: DATABASE_URL=postgres://u:PASSWORD@host/db, passed with [env] pass, was stored in
// clear in the job's request (env_values) in berth.db. After a job run here, a detached one
// and a queued one that a worker ran, no file under the test's tree (the submitter's state
// directory with berth.db and its -wal, the worker's, the worker's mirror and log, the
// repository) holds any passed value, and each job saw the values it had to.
TEST_F(PassedVariablesTest, PassedVariableValuesAreNeverStored) {
  const EnvVars submitter = SubmitterEnv();
  std::vector<std::string> runs;

  RunResult here = Run(RunArgs({"--json"}, "implement", "env_check.sh",
                               Expect(kSubmitterUrl, kSubmitterPlain, kSubmitterOnly)),
                       submitter);
  ASSERT_EQ(here.exit_code, 0) << here.Describe();
  const std::string here_id = GetStr(ParseJson(here.out), "id");
  runs.push_back(here.out + here.err);

  // The detached supervisor has no request values to read: it inherits the caller's
  // environment.
  RunResult detached = Run(RunArgs({"--detach", "--json"}, "implement", "env_check.sh",
                                   Expect(kSubmitterUrl, kSubmitterPlain, kSubmitterOnly)),
                           submitter);
  ASSERT_EQ(detached.exit_code, 0) << detached.Describe();
  const std::string detached_id = GetStr(ParseJson(detached.out), "id");
  runs.push_back(detached.out + detached.err);
  WaitForEnd(detached_id);

  // Queued on this host's SQLite store; the submitter is told what the worker must provide.
  RunResult queued = Run(RunArgs({"--queue", "--json"}, "implement", "env_check.sh",
                                 Expect(kWorkerUrl, kWorkerPlain, nullptr)),
                         submitter);
  ASSERT_EQ(queued.exit_code, 0) << queued.Describe();
  json queued_job = ParseJson(queued.out);
  const std::string queued_id = GetStr(queued_job, "id");
  EXPECT_EQ(Get(queued_job, "worker_env"),
            json({"DATABASE_URL", "PLAIN_SETTING", "SUBMITTER_ONLY"}))
      << queued.Describe();
  EXPECT_TRUE(Contains(queued.err,
                       "the worker must provide DATABASE_URL, PLAIN_SETTING, SUBMITTER_ONLY in "
                       "its environment"))
      << queued.Describe();
  runs.push_back(queued.out + queued.err);
  RunResult worker = Run({"--state-dir", root() + "/worker-a", "--store", state() + "/berth.db",
                          "worker", "--poll", "100", "--drain"},
                         WorkerEnv());
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();
  runs.push_back(worker.out + worker.err);

  ExpectCompletedAndMasked(here_id);
  ExpectCompletedAndMasked(detached_id);
  ExpectCompletedAndMasked(queued_id);
  for (const std::string& output : runs) ExpectNoValue(output, "berth's output");
  for (const std::string& id : {here_id, detached_id, queued_id})
    ExpectNoValue(ShowJson(id).dump(), "berth show " + id);

  // Every byte of every file under the test's tree: the stores (with their -wal), the job
  // directories (request copies, receipts, stdout, stderr, supervisor.log, workspaces), the
  // worker's state directory and mirror.
  ASSERT_TRUE(WaitUntilNoProcessWithArgument(state(), kLeftoverWait));
  Status opened = MakeTreeRemovable(root());  // overlayfs leaves work dirs the owner cannot read
  ASSERT_TRUE(opened) << opened.error().ToString();
  const std::map<std::string, std::string> files = TreeFingerprint(root());
  EXPECT_TRUE(files.count("state/berth.db") == 1) << "the scan missed the store";
  EXPECT_TRUE(files.count("worker-a/jobs/" + queued_id + "-1/receipt.json") == 1)
      << "the scan missed the worker's job";
  for (const auto& [path, entry] : files) {
    // overlayfs's own scratch in its work dir ("work/incompat/volatile/dirty", an empty file
    // of mode 0 the kernel creates): berth never writes there, and an unprivileged owner may
    // not open it.
    if (Contains(path, "/work/incompat/volatile/") && Contains(entry, "<unreadable:")) continue;
    EXPECT_FALSE(Contains(entry, "<unreadable:") || Contains(path, "<list>"))
        << path << " could not be scanned: " << entry;
    ExpectNoValue(entry, path);
  }
}

}  // namespace
}  // namespace berth::e2e
