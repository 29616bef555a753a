// End-to-end tests of the shared queue (docs/workers.md): the real berth binary submits with
// `berth run --queue` against a fresh PostgreSQL database of the test cluster, real `berth
// worker` daemons (each with a state directory of its own, as if on another host) claim and
// run the jobs in their mirrors, and the submitting side lands what they stored. Without
// PostgreSQL the tests are skipped loudly (failed when CI=true), as postgres_testing decides.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "store/open_store.h"
#include "store/postgres_testing.h"
#include "store/store.h"
#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using store::testing::PostgresDatabase;

// Jobs for workers may run several at once; a lost worker's job gets one more attempt.
constexpr char kQueuePolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 8
retry = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
# Runs on the worker, in its sandbox, on the job's commit.
[[verify]]
name = "main-exists"
argv = ["sh", "-c", "test -f src/main.c"]
)";

class WorkersE2eTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(db_);
  }
  void TearDown() override {
    for (pid_t pid : stopped_) kill(pid, SIGCONT);
    workers_.clear();  // killed and reaped
    JobsTest::TearDown();
  }
  std::string InitialPolicy() const override { return kQueuePolicy; }

  const std::string& url() const { return db_->url(); }
  std::string WorkerState(const std::string& name) const { return root() + "/worker-" + name; }

  // `berth --store URL ARGS` as the submitter, in the repository.
  RunResult Submitter(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"--store", url()};
    all.insert(all.end(), args.begin(), args.end());
    return Berth(all);
  }

  // `berth run --queue --json implement -- sh AGENTS/SCRIPT ARGS`: the queued job's id.
  std::string Queue(const std::string& script, const std::vector<std::string>& script_args,
                    const std::vector<std::string>& options = {}) {
    std::vector<std::string> run = {"--store", url()};
    std::vector<std::string> queued =
        RunArgs({"--queue", "--json"}, "implement", script, script_args);
    queued.insert(queued.begin() + 1, options.begin(), options.end());
    run.insert(run.end(), queued.begin(), queued.end());
    RunResult result = Berth(run);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json job = ParseJson(result.out);
    EXPECT_EQ(GetStr(job, "state"), "queued") << result.Describe();
    return GetStr(job, "id");
  }

  std::vector<std::string> WorkerArgs(const std::string& name,
                                      const std::vector<std::string>& options) const {
    std::vector<std::string> args = {"--state-dir", WorkerState(name), "--store", url(),
                                     "worker",      "--poll",          "100"};
    args.insert(args.end(), options.begin(), options.end());
    return args;
  }

  // A worker that drains the queue and exits.
  RunResult DrainWith(const std::string& name, const std::vector<std::string>& options = {}) {
    std::vector<std::string> args = WorkerArgs(name, options);
    args.push_back("--drain");
    return Berth(args);
  }

  // A worker daemon in the background, its output in <root>/worker-NAME.log.
  // `path_first`: a directory put before the PATH (a wrapped git).
  void StartWorker(const std::string& name, const std::vector<std::string>& options = {},
                   const std::string& path_first = "") {
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" >>\"$0\" 2>&1",
                                     root() + "/worker-" + name + ".log", BERTH_BINARY};
    std::vector<std::string> args = WorkerArgs(name, options);
    argv.insert(argv.end(), args.begin(), args.end());
    EnvVars env = BaseEnv();
    if (!path_first.empty())
      for (auto& [key, value] : env)
        if (key == "PATH") value = path_first + ":" + value;
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    workers_[name] = std::make_unique<RunningProgram>(StartProgram(argv, env, ws()));
  }
  std::string WorkerLog(const std::string& name) const {
    return ReadText(root() + "/worker-" + name + ".log");
  }

  json Show(const std::string& id) const {
    RunResult result = Submitter({"show", id, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    return ParseJson(result.out);
  }
  json WaitFor(const std::string& id, const std::function<bool(const json&)>& done,
               const std::string& what, std::chrono::milliseconds limit = kStateWait) const {
    json job;
    bool ok = WaitUntil(
        [&] {
          job = Show(id);
          return done(job);
        },
        limit);
    EXPECT_TRUE(ok) << "job " << id << " never " << what << "; last seen:\n" << job.dump(2);
    return job;
  }

  std::unique_ptr<store::Store> OpenDb() const {
    Result<std::unique_ptr<store::Store>> store = store::OpenStore(url());
    CHECK(store.has_value());
    return std::move(*store);
  }

  // Stops (SIGSTOP) a worker and the job supervisors it started: a host that froze.
  void Freeze(const std::string& name) {
    for (pid_t pid : ProcessesWithArgument(WorkerState(name))) {
      // One that ended since the listing is no longer there to stop.
      if (kill(pid, SIGSTOP) == 0) {
        stopped_.push_back(pid);
      } else {
        EXPECT_EQ(errno, ESRCH) << std::strerror(errno);
      }
    }
  }
  void Thaw() {
    for (pid_t pid : stopped_) kill(pid, SIGCONT);
    stopped_.clear();
  }

  std::unique_ptr<PostgresDatabase> db_;
  std::map<std::string, std::unique_ptr<RunningProgram>> workers_;
  std::vector<pid_t> stopped_;
};

TEST_F(WorkersE2eTest, AWorkerRunsAQueuedJobAndTheSubmitterLandsIt) {
  const std::string id = Queue("edit.sh", {}, {"-p", "fix it from afar"});
  // Nobody owns a queued job: no sweep may take it for stale while it waits.
  json queued = Show(id);
  EXPECT_EQ(GetStr(queued, "state"), "queued");
  EXPECT_EQ(Get(queued, "owner.pid"), 0) << queued.dump(2);

  RunResult worker = DrainWith("a");
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();
  EXPECT_TRUE(Contains(worker.err, "runs as pid")) << worker.Describe();

  json done = Show(id);
  ASSERT_EQ(GetStr(done, "state"), "completed") << done.dump(2);
  const std::string commit = GetStr(done, "commit");
  ASSERT_EQ(commit.size(), 40u) << done.dump(2);
  // The job ran in the worker's own directories; the submitter's repository has no branch.
  EXPECT_TRUE(PathExists(WorkerState("a") + "/jobs/" + id + "-1/receipt.json"));
  EXPECT_FALSE(BranchExists(id));
  EXPECT_FALSE(PathExists(JobDir(id) + "/receipt.json"));

  // The result travelled as a bundle in the store; landing takes it in and lands it.
  RunResult landed = Submitter({"land", id, "--json"});
  ASSERT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "refs/heads/berth/" + id}), commit);
  EXPECT_EQ(GitOut({"show", "main:src/new.c"}), "int added(void) { return 2; }");
  // The prompt travelled with the request.
  EXPECT_EQ(GitOut({"show", "main:src/prompt.txt"}), "fix it from afar");
  EXPECT_TRUE(Get(Show(id), "landed_commit").is_string());

  // The worker's mirror keeps no branch per job (the result is in the store), and once the
  // job is landed a worker's start removes its attempt's directory.
  const std::string mirrors = home() + "/.local/share/berth/mirrors";
  Result<std::vector<std::string>> names = sys::ListDir(mirrors);
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  std::vector<std::string> repos;  // beside each, its lock file
  for (const std::string& name : *names)
    if (sys::TypeOf(mirrors + "/" + name) == sys::FileType::kDirectory) repos.push_back(name);
  ASSERT_EQ(repos.size(), 1u) << mirrors;
  RunResult refs = RunProgram(
      {"/usr/bin/git", "-C", mirrors + "/" + repos.front(), "for-each-ref", "refs/heads/berth/"},
      BaseEnv(), ws());
  EXPECT_EQ(refs.exit_code, 0) << refs.Describe();
  EXPECT_EQ(refs.out, "") << "a job branch was left in the mirror";
  RunResult again = DrainWith("a");
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_FALSE(PathExists(WorkerState("a") + "/jobs/" + id + "-1"));
  EXPECT_TRUE(Contains(again.err, "removed the directories of 1 attempt(s)")) << again.Describe();
}

// Issue 27, finding 1: a corrupt job row on the shared queue took down every worker that
// claimed it. Now the worker ends it failed, naming the field, and runs the next job.
TEST_F(WorkersE2eTest, AWorkerEndsACorruptJobFailedAndRunsTheNextOne) {
  const std::string good = Queue("edit.sh", {});
  std::unique_ptr<store::Store> db = OpenDb();
  Result<std::optional<store::JobRecord>> read = db->GetJob(good);
  ASSERT_TRUE(read.has_value() && read->has_value());
  // Rows older than the healthy job, so that the worker claims them first.
  auto insert = [&](const std::string& id, const std::string& request, int64_t before) {
    store::JobRecord bad = **read;
    bad.id = id;
    bad.branch = "berth/" + id;
    bad.job_dir = JobDir(id);
    bad.created_at_ms -= before;
    bad.request_json = request;
    Status created = db->CreateJob(bad);
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  };
  json request = ParseJson((*read)->request_json);
  request["deadline_ms"] = "soon";
  insert("badtype", request.dump(), 2000);
  insert("badjson", "this is not JSON {", 1000);

  RunResult worker = DrainWith("a");
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();
  const std::string why =
      "the job's stored request cannot be read: request.deadline_ms must be an integer, not "
      "string";
  EXPECT_TRUE(Contains(worker.err, "job badtype ended failed: " + why)) << worker.Describe();
  json bad = Show("badtype");
  EXPECT_EQ(GetStr(bad, "state"), "failed") << bad.dump(2);
  EXPECT_EQ(GetStr(bad, "state_reason"), why);
  EXPECT_EQ(GetStr(Show("badjson"), "state"), "failed");
  Result<std::vector<store::Event>> events = db->ListEvents("badtype", 0);
  ASSERT_TRUE(events.has_value());
  int failed_events = 0;
  for (const store::Event& e : *events) failed_events += e.step == "failed" && e.detail == why;
  EXPECT_EQ(failed_events, 1);
  // The healthy job behind them ran, and lands from the submitting host.
  EXPECT_EQ(GetStr(Show(good), "state"), "completed");
  RunResult ls = Submitter({"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.Describe();
  RunResult landed = Submitter({"land", good, "--json"});
  EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
}

// A policy with [defaults] run_on = "workers": `berth run` queues without --queue, --here runs
// the job on this host, and what only this host has is refused with the policy named.
class RunOnWorkersE2eTest : public WorkersE2eTest {
 protected:
  std::string InitialPolicy() const override {
    std::string policy = kQueuePolicy;
    const std::string retry = "retry = 1\n";
    policy.replace(policy.find(retry), retry.size(), retry + "run_on = \"workers\"\n");
    return policy;
  }
};

TEST_F(RunOnWorkersE2eTest, RunQueuesByDefaultAndHereRunsItHere) {
  RunResult queued = Submitter(RunArgs({"--json"}, "implement", "edit.sh"));
  ASSERT_EQ(queued.exit_code, 0) << queued.Describe();
  json job = ParseJson(queued.out);
  EXPECT_EQ(GetStr(job, "state"), "queued") << queued.Describe();
  EXPECT_EQ(Get(job, "queue.source"), ws()) << job.dump(2);
  EXPECT_TRUE(Contains(queued.err, "queued for workers")) << queued.Describe();

  RunResult here = Submitter(RunArgs({"--here", "--json"}, "implement", "edit.sh"));
  ASSERT_EQ(here.exit_code, 0) << here.Describe();
  json ran = ParseJson(here.out);
  EXPECT_EQ(GetStr(ran, "state"), "completed") << here.Describe();
  EXPECT_TRUE(PathExists(JobDir(GetStr(ran, "id")) + "/receipt.json"));

  RunResult both = Submitter(RunArgs({"--here", "--queue"}, "implement", "edit.sh"));
  EXPECT_EQ(both.exit_code, 64) << both.Describe();
  RunResult no_wait = Submitter(RunArgs({"--no-wait"}, "implement", "edit.sh"));
  EXPECT_EQ(no_wait.exit_code, 64) << no_wait.Describe();
  EXPECT_TRUE(Contains(no_wait.err, "run_on = \"workers\"")) << no_wait.Describe();
  EXPECT_TRUE(Contains(no_wait.err, "--here")) << no_wait.Describe();
  RunResult uncommitted = Submitter(RunArgs({"--with-uncommitted"}, "implement", "edit.sh"));
  EXPECT_EQ(uncommitted.exit_code, 64) << uncommitted.Describe();
  EXPECT_TRUE(Contains(uncommitted.err, "exist on this host only")) << uncommitted.Describe();
  RunResult uncommitted_here =
      Submitter(RunArgs({"--with-uncommitted", "--here", "--json"}, "implement", "edit.sh"));
  EXPECT_EQ(uncommitted_here.exit_code, 0) << uncommitted_here.Describe();

  // The default store (SQLite, this host's) has no workers of other hosts: refused, and said
  // why; --here still runs.
  RunResult local = Berth(RunArgs({}, "implement", "edit.sh"));
  EXPECT_EQ(local.exit_code, 64) << local.Describe();
  EXPECT_TRUE(Contains(local.err, "on this host only")) << local.Describe();
  EXPECT_TRUE(Contains(local.err, "--here")) << local.Describe();
  RunResult local_here = Berth(RunArgs({"--here", "--json"}, "implement", "edit.sh"));
  EXPECT_EQ(local_here.exit_code, 0) << local_here.Describe();

  // The queued one runs on a worker like any other.
  RunResult worker = DrainWith("a");
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();
  EXPECT_EQ(GetStr(Show(GetStr(job, "id")), "state"), "completed");
}

// A supervisor killed while its job's workspace is prepared (no agent started yet): its worker
// gives the job back to the queue at once, with the reason, and another worker runs it.
TEST_F(WorkersE2eTest, AJobWhoseSupervisorDiedBeforeItStartedGoesBackToTheQueue) {
  // 8,000 files: a first snapshot long enough to be caught in.
  for (int i = 0; i < 8000; ++i) {
    const std::string dir = ws() + "/lib/d" + std::to_string(i / 100);
    if (i % 100 == 0) {
      ASSERT_TRUE(sys::MakeDirs(dir, 0755).has_value());
    }
    ASSERT_TRUE(WriteText(dir + "/f" + std::to_string(i) + ".c", std::to_string(i) + "\n"));
  }
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  // Packed, and no `git gc --auto` in the background pruning loose objects under the mirror's
  // clone.
  ASSERT_EQ(Git({"-c", "gc.auto=0", "commit", "-q", "-m", "a big tree"}).exit_code, 0);
  ASSERT_EQ(Git({"repack", "-adq"}).exit_code, 0);
  ASSERT_EQ(Git({"prune-packed"}).exit_code, 0);
  const std::string id = Queue("edit.sh", {});
  StartWorker("a");
  pid_t supervisor = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::string log = WorkerLog("a");
        const std::string runs = "(attempt 1, agent implement) runs as pid ";
        const size_t at = log.find(runs);
        if (at == std::string::npos) return false;
        supervisor = static_cast<pid_t>(std::atoi(log.c_str() + at + runs.size()));
        return true;
      },
      kStateWait))
      << WorkerLog("a");
  ASSERT_EQ(GetStr(Show(id), "state"), "preparing") << "the job started before the test could "
                                                       "catch it in its workspace step";
  ASSERT_EQ(kill(supervisor, SIGKILL), 0) << std::strerror(errno);
  json back = WaitFor(
      id, [](const json& j) { return GetStr(j, "state") == "queued"; }, "went back to the queue");
  EXPECT_TRUE(Contains(GetStr(back, "state_reason"),
                       "its supervisor ended before the job started (killed by SIGKILL)"))
      << back.dump(2);
  RunResult other = DrainWith("b");
  ASSERT_EQ(other.exit_code, 0) << other.Describe();
  json done = Show(id);
  EXPECT_EQ(GetStr(done, "state"), "completed") << done.dump(2);
  EXPECT_EQ(Get(done, "queue.attempt"), 2) << done.dump(2);
}

// A mirror's first clone may take longer than a claim's lease (30 s). It runs beside the
// worker's loop, which renews the claim meanwhile (never a lease longer than one) and runs
// the jobs of its other slots. Here git takes 8 s to clone one of two sources.
TEST_F(WorkersE2eTest, AMirrorsCloneHoldsUpNeitherTheClaimNorTheOtherSlots) {
  const std::string slow_source = root() + "/slow-origin.git";
  RunResult cloned = Git({"clone", "--quiet", "--bare", ws(), slow_source});
  ASSERT_EQ(cloned.exit_code, 0) << cloned.Describe();
  const std::string bin = root() + "/slow-git";
  ASSERT_TRUE(sys::MakeDirs(bin, 0755).has_value());
  ASSERT_TRUE(WriteText(bin + "/git",
                        "#!/bin/sh\ncase \" $* \" in *\" clone \"*slow-origin*) sleep 8 ;; esac\n"
                        "exec /usr/bin/git \"$@\"\n",
                        0755));
  const std::string slow = Queue("edit.sh", {}, {"--source", slow_source});
  const std::string fast = Queue("edit.sh", {});
  StartWorker("a", {"--slots", "2"}, bin);
  std::unique_ptr<store::Store> db = OpenDb();
  // The claim's lease: when it runs out, and how long that is from now, on the store's clock.
  auto lease = [&] {
    Result<std::optional<store::JobRecord>> job = db->GetJob(slow);
    Result<int64_t> now = db->NowMillis();
    CHECK(job.has_value() && job->has_value() && now.has_value());
    return std::make_pair((*job)->lease_expires_at_ms, (*job)->lease_expires_at_ms - *now);
  };
  WaitFor(
      slow, [](const json& j) { return GetStr(j, "state") == "preparing"; }, "was claimed");
  const int64_t first = lease().first;
  // The other slot's job runs to its end while the clone goes on.
  WaitFor(
      fast, [](const json& j) { return GetStr(j, "state") == "completed"; }, "completed");
  ASSERT_FALSE(Contains(WorkerLog("a"), "job " + slow + " (attempt 1")) << WorkerLog("a");
  ASSERT_EQ(GetStr(Show(slow), "state"), "preparing");
  ASSERT_TRUE(WaitUntil([&] { return lease().first > first + 1000; }, seconds(6)))
      << "the claim was not renewed while the mirror was cloned";
  EXPECT_LE(lease().second, 31 * 1000) << "a lease longer than one claim's";
  json done = WaitFor(
      slow, [](const json& j) { return GetStr(j, "state") == "completed"; }, "completed",
      seconds(40));
  EXPECT_EQ(GetStr(done, "state"), "completed");
  EXPECT_TRUE(Contains(WorkerLog("a"), "making its mirror of " + slow_source)) << WorkerLog("a");
}

// The worker keeps a supervisor ready (worker/standby.h) and hands it the next job it claims;
// one that dies before it has a job is replaced, and a job claimed meanwhile gets a
// supervisor started for it.
TEST_F(WorkersE2eTest, TheStandbySupervisorRunsTheNextJobAndOneThatDiesIsReplaced) {
  StartWorker("a");
  auto standbys = [&] {
    std::vector<pid_t> mine = ProcessesWithArgument(WorkerState("a"));
    std::vector<pid_t> found;
    for (pid_t pid : ProcessesWithArgument("worker-standby"))
      if (std::find(mine.begin(), mine.end(), pid) != mine.end()) found.push_back(pid);
    return found;
  };
  ASSERT_TRUE(WaitUntil([&] { return standbys().size() == 1; }, kStateWait)) << WorkerLog("a");
  const pid_t first = standbys().front();

  const std::string handed = Queue("edit.sh", {});
  EXPECT_EQ(GetStr(WaitFor(
                       handed, [](const json& j) { return GetStr(j, "state") == "completed"; },
                       "completed"),
                   "state"),
            "completed");
  EXPECT_TRUE(Contains(WorkerLog("a"), "runs as pid " + std::to_string(first) + "\n"))
      << "the job was not handed to the standby " << first << ":\n"
      << WorkerLog("a");
  // Its last line comes after the job's end is recorded.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Contains(ReadText(WorkerState("a") + "/jobs/" + handed + "-1/supervisor.log"),
                        "job " + handed + " completed");
      },
      kStateWait))
      << "the standby's output did not go to the job's log";

  // Its successor, killed before it has a job.
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<pid_t> now = standbys();
        return now.size() == 1 && now.front() != first;
      },
      kStateWait))
      << WorkerLog("a");
  const pid_t second = standbys().front();
  ASSERT_EQ(kill(second, SIGKILL), 0) << std::strerror(errno);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Contains(WorkerLog("a"),
                        "the standby supervisor ended before it had a job (killed by SIGKILL)");
      },
      kStateWait))
      << WorkerLog("a");
  const std::string own = Queue("edit.sh", {});
  EXPECT_EQ(
      GetStr(WaitFor(
                 own, [](const json& j) { return GetStr(j, "state") == "completed"; }, "completed"),
             "state"),
      "completed");
  // A new standby once the worker's pause after a lost one (5 s) has passed.
  EXPECT_TRUE(WaitUntil(
      [&] {
        std::vector<pid_t> now = standbys();
        return now.size() == 1 && now.front() != second;
      },
      seconds(15)))
      << WorkerLog("a");
}

// Issue 27 §3 on the shared store: the values of the policy's passed variables never reach
// PostgreSQL (a dump of every table's data) nor any file of the worker's state directory; the
// job sees the worker's values, not the submitter's. (masking_e2e_test's
// PassedVariableValuesAreNeverStored covers local, detached and queued jobs on SQLite.)
TEST_F(WorkersE2eTest, PassedVariableValuesAreNeverStoredInTheSharedStore) {
  std::string policy = kQueuePolicy;
  policy += "[env]\npass = [\"DATABASE_URL\"]\n";
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "pass DATABASE_URL"}).exit_code, 0);
  const std::string submitter_url = "postgres://u:PW-pg-submit-2d7e91c4@host/db";
  const std::string worker_url = "postgres://u:PW-pg-worker-6a0f38b5@host/db";
  RunResult hash = RunProgram({"/bin/sh", "-c", "printf '%s' \"$V\" | sha256sum | cut -d' ' -f1"},
                              {{"PATH", kPath}, {"V", worker_url}}, ws());
  ASSERT_EQ(hash.exit_code, 0) << hash.Describe();

  std::vector<std::string> args = {"--store", url()};
  std::vector<std::string> run = RunArgs({"--queue", "--json"}, "implement", "env_check.sh",
                                         {"DATABASE_URL=" + TrimRight(hash.out)});
  args.insert(args.end(), run.begin(), run.end());
  RunResult queued = Run(args, {{"GIT_CONFIG_NOSYSTEM", "1"}, {"DATABASE_URL", submitter_url}});
  ASSERT_EQ(queued.exit_code, 0) << queued.Describe();
  const std::string id = GetStr(ParseJson(queued.out), "id");
  EXPECT_EQ(Get(ParseJson(queued.out), "worker_env"), json({"DATABASE_URL"})) << queued.Describe();

  std::vector<std::string> worker = WorkerArgs("a", {"--drain"});
  RunResult drained = Run(worker, {{"GIT_CONFIG_NOSYSTEM", "1"}, {"DATABASE_URL", worker_url}});
  ASSERT_EQ(drained.exit_code, 0) << drained.Describe();
  json done = Show(id);
  EXPECT_EQ(GetStr(done, "state"), "completed") << done.dump(2) << drained.Describe();

  std::optional<std::string> pg_dump;
  for (const std::string& version : sys::ListDir("/usr/lib/postgresql").value_or({}))
    if (PathExists("/usr/lib/postgresql/" + version + "/bin/pg_dump"))
      pg_dump = "/usr/lib/postgresql/" + version + "/bin/pg_dump";
  ASSERT_TRUE(pg_dump.has_value()) << "no pg_dump beside the test cluster's binaries";
  RunResult dump = RunProgram({*pg_dump, "--data-only", "--dbname", url()}, BaseEnv(), ws());
  ASSERT_EQ(dump.exit_code, 0) << dump.Describe();
  EXPECT_TRUE(Contains(dump.out, id)) << "the dump misses the job";
  std::vector<std::pair<std::string, std::string>> texts = {
      {"the PostgreSQL store", dump.out},
      {"berth run --queue", queued.out + queued.err},
      {"the worker's output", drained.out + drained.err}};
  Status opened = MakeTreeRemovable(WorkerState("a"));  // overlayfs's work dirs, for the scan
  ASSERT_TRUE(opened) << opened.error().ToString();
  for (const auto& [path, entry] : TreeFingerprint(WorkerState("a")))
    texts.emplace_back(WorkerState("a") + "/" + path, entry);
  for (const auto& [where, text] : texts)
    for (const char* password : {"PW-pg-submit-2d7e91c4", "PW-pg-worker-6a0f38b5"})
      EXPECT_FALSE(Contains(text, password)) << where << " holds " << password;
}

TEST_F(WorkersE2eTest, LogsOnTheSubmittingHostShowTheWorkersOutput) {
  // 6 MB: more than the store keeps live (4 MiB) and at the end (1 MiB) together.
  const std::string spew = Queue("spew.sh", {"6000000"});
  const std::string fail = Queue("fail.sh", {});
  RunResult worker = DrainWith("a");
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();

  // Bounded: the end of the output, and how much of it stays on the worker.
  RunResult spewed = Submitter({"logs", spew});
  ASSERT_EQ(spewed.exit_code, 0) << spewed.err;
  EXPECT_TRUE(Contains(spewed.out, "END-OF-OUTPUT")) << spewed.out.substr(0, 200);
  EXPECT_LE(spewed.out.size(), (5u << 20) + 4096);
  EXPECT_TRUE(Contains(spewed.err, "stay on the worker")) << spewed.err;

  json failed = Show(fail);
  EXPECT_EQ(GetStr(failed, "state"), "child-failed") << failed.dump(2);
  RunResult logs = Submitter({"logs", fail});
  EXPECT_EQ(logs.exit_code, 0) << logs.Describe();
  EXPECT_TRUE(Contains(logs.err, "fail.sh: giving up")) << logs.Describe();
  // -f on an ended job prints the same and returns.
  RunResult followed = Submitter({"logs", "-f", fail});
  EXPECT_TRUE(Contains(followed.err, "fail.sh: giving up")) << followed.Describe();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `berth logs -f` on the submitting host shows the worker's output while the job runs, not
// only when it ended, and each line once.
TEST_F(WorkersE2eTest, LogsFollowShowsTheWorkersOutputWhileTheJobRuns) {
  const std::string token = Token();
  const std::string id = Queue("talk.sh", {token});
  StartWorker("a");
  const std::string followed = root() + "/followed.log";
  RunningProgram follow = StartProgram({"/bin/sh", "-c", "exec \"$@\" >>\"$0\" 2>&1", followed,
                                        BERTH_BINARY, "--store", url(), "logs", "-f", id},
                                       BaseEnv(), ws());
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::string seen = ReadText(followed);
        return Contains(seen, "FIRST-LINE") && Contains(seen, "FIRST-ERROR");
      },
      kStateWait))
      << ReadText(followed) << WorkerLog("a");
  // The agent is still in its sleep: the lines came while the job runs.
  EXPECT_EQ(GetStr(Show(id), "state"), "running");
  EXPECT_FALSE(Contains(ReadText(followed), "LAST-LINE"));
  // Another host's plain `berth logs` shows what is there so far, and returns.
  RunResult so_far = Submitter({"logs", id});
  EXPECT_EQ(so_far.exit_code, 0) << so_far.Describe();
  EXPECT_TRUE(Contains(so_far.out, "FIRST-LINE")) << so_far.Describe();
  EXPECT_TRUE(Contains(so_far.err, "FIRST-ERROR")) << so_far.Describe();

  ASSERT_GE(KillProcessesWithArgument("60." + token), 1);
  RunResult ended = follow.Wait();
  EXPECT_EQ(ended.exit_code, 0) << ended.Describe();
  const std::string all = ReadText(followed);
  for (const char* line : {"FIRST-LINE", "FIRST-ERROR", "LAST-LINE", "LAST-ERROR"})
    EXPECT_EQ(Count(all, line), 1u) << line << " in:\n" << all;
  EXPECT_LT(all.find("FIRST-LINE"), all.find("LAST-LINE")) << all;
  EXPECT_FALSE(Contains(all, "stay on the worker")) << all;
  // The receipt's event follows the terminal state by a few store writes, so logs -f may end
  // before it; a later `berth logs` shows it.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Contains(Submitter({"logs", id}).err, "job ended completed");
      },
      kStateWait));
  EXPECT_EQ(GetStr(Show(id), "state"), "completed");
  // After the end, the same lines once each.
  RunResult after = Submitter({"logs", id});
  EXPECT_EQ(Count(after.out, "FIRST-LINE") + Count(after.out, "LAST-LINE"), 2u) << after.Describe();
}

TEST_F(WorkersE2eTest, AJobNoWorkerCanRunStaysQueuedWithTheReason) {
  const std::string id = Queue("edit.sh", {}, {"--source", root() + "/no-such-repository"});
  RunResult worker = DrainWith("a");
  ASSERT_EQ(worker.exit_code, 0) << worker.Describe();
  json job = Show(id);
  EXPECT_EQ(GetStr(job, "state"), "queued") << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "cannot run it")) << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "no-such-repository")) << job.dump(2);
}

TEST_F(WorkersE2eTest, QueueRefusesWhatOnlyThisHostHas) {
  RunResult uncommitted =
      Submitter(RunArgs({"--queue", "--with-uncommitted"}, "implement", "edit.sh"));
  EXPECT_EQ(uncommitted.exit_code, 64) << uncommitted.Describe();
  EXPECT_TRUE(Contains(uncommitted.err, "exist on this host only")) << uncommitted.Describe();
  RunResult no_wait = Submitter(RunArgs({"--queue", "--no-wait"}, "implement", "edit.sh"));
  EXPECT_EQ(no_wait.exit_code, 64) << no_wait.Describe();
  RunResult source = Submitter(RunArgs({"--source", "/srv/x"}, "implement", "edit.sh"));
  EXPECT_EQ(source.exit_code, 64) << source.Describe();
}

TEST_F(WorkersE2eTest, CancelReachesTheWorkerWithinSeconds) {
  const std::string token = Token();
  const std::string id = Queue("sleep.sh", {token});
  StartWorker("a");
  WaitFor(
      id, [](const json& j) { return GetStr(j, "state") == "running"; }, "ran");
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArgument(token).size() >= 1; }, kStateWait));
  const auto asked = std::chrono::steady_clock::now();
  RunResult cancelled = Submitter({"cancel", id});
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.Describe();
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArgument(token).empty(); }, seconds(10)))
      << "the agent still runs after the cancel";
  EXPECT_LT(std::chrono::steady_clock::now() - asked, seconds(10));
  EXPECT_EQ(GetStr(Show(id), "state"), "cancelled");
}

// A worker whose host froze past its lease loses the job: the rescuer gives it to the queue
// (retry = 1), another worker runs it to the end, and every write the frozen one makes when
// it wakes is refused and logged. The job ends once and lands once.
TEST_F(WorkersE2eTest, AFrozenWorkersJobIsRunByAnotherAndItsLateWritesAreRefused) {
  const std::string token = Token();
  const std::string id = Queue("slow.sh", {"4", token, "once"});
  StartWorker("a");
  WaitFor(
      id, [](const json& j) { return GetStr(j, "state") == "running"; }, "ran");
  Freeze("a");
  // Worker b sweeps: once a's lease (30 s) runs out, b requeues the job and runs attempt 2.
  StartWorker("b");
  json done = WaitFor(
      id, [](const json& j) { return GetStr(j, "state") == "completed"; }, "completed on b",
      seconds(75));
  EXPECT_EQ(GetInt(done, "queue.attempt"), 2) << done.dump(2);
  Thaw();
  // a's supervisor wakes, finds the job gone and stops; its late writes are refused.
  const std::string a_log = WorkerState("a") + "/jobs/" + id + "-1/supervisor.log";
  EXPECT_TRUE(
      WaitUntil([&] { return Contains(ReadText(a_log), "refused a late write"); }, seconds(20)))
      << ReadText(a_log);
  json after = Show(id);
  EXPECT_EQ(GetStr(after, "state"), "completed");
  EXPECT_EQ(GetInt(after, "queue.attempt"), 2);
  std::unique_ptr<store::Store> db = OpenDb();
  std::optional<store::JobResult> result = *db->GetResult(id);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->attempt, 2);
  RunResult landed = Submitter({"land", id});
  ASSERT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_EQ(GitOut({"show", "main:src/slow-once.c"}), "int slow(void) { return 0; }");
}

// The issue's proof at scale: two submitters queue 200 jobs, three workers run them; one
// worker is killed (SIGKILL, with its job supervisors) mid-job and another frozen (SIGSTOP)
// past its lease. Every job ends exactly once, completed, none runs to completion twice, the
// frozen worker's late writes are refused and logged, and every job lands on its submitter's
// repository.
class WorkersChaosE2eTest : public WorkersE2eTest {
 protected:
  std::string InitialPolicy() const override {
    std::string policy = kQueuePolicy;
    // Lost at most twice (killed, then frozen): every job must still complete.
    const std::string once = "retry = 1";
    policy.replace(policy.find(once), once.size(), "retry = 2");
    return policy;
  }

  // The second submitter: a clone of the repository with a state directory of its own.
  RunResult Second(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {BERTH_BINARY, "--store", url()};
    argv.insert(argv.end(), args.begin(), args.end());
    EnvVars env = BaseEnv();
    env.emplace_back("BERTH_STATE_DIR", root() + "/state-second");
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    return RunProgram(argv, env, second_);
  }

  // The live jobs that worker NAME's processes own now, as the store records their owners:
  // a supervisor started for its job (`berth worker-job`), the standby that was handed one,
  // or the worker itself while the job's mirror is made.
  std::set<std::string> HeldBy(store::Store& db, const std::string& name) const {
    const std::vector<pid_t> pids = ProcessesWithArgument(WorkerState(name));
    std::set<std::string> ids;
    Result<std::vector<store::JobRecord>> live = db.ListJobs("", true, 0);
    if (!live) return ids;
    for (const store::JobRecord& job : *live)
      if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(job.owner.pid)) != pids.end())
        ids.insert(job.id);
    return ids;
  }

  std::string second_;
};

TEST_F(WorkersChaosE2eTest, EveryJobEndsOnceAndLandsThoughWorkersDieAndFreeze) {
  constexpr int kPerSubmitter = 100;
  second_ = root() + "/second";
  ASSERT_EQ(Git({"clone", "-q", ws(), second_}).exit_code, 0);
  // id -> the file its agent adds. Every tenth job takes 3 s, so that the workers hold live
  // jobs long enough to be caught holding them.
  std::map<std::string, std::string> first_jobs;
  std::map<std::string, std::string> second_jobs;
  const std::string token = Token();
  auto agent = [&](const std::string& name, int i) {
    return i % 10 == 0
               ? std::pair<std::string, std::vector<std::string>>{"slow.sh", {"3", token, name}}
               : std::pair<std::string, std::vector<std::string>>{"stamp.sh", {name}};
  };
  auto file_of = [](const std::string& name, int i) {
    return (i % 10 == 0 ? "src/slow-" : "src/stamp-") + name + ".c";
  };
  for (int i = 0; i < kPerSubmitter; ++i) {
    const std::string a = "a" + std::to_string(i);
    auto [a_script, a_args] = agent(a, i);
    first_jobs[Queue(a_script, a_args)] = file_of(a, i);
    const std::string b = "b" + std::to_string(i);
    auto [b_script, b_args] = agent(b, i);
    RunResult queued = Second(RunArgs({"--queue", "--json"}, "implement", b_script, b_args));
    ASSERT_EQ(queued.exit_code, 0) << queued.Describe();
    second_jobs[GetStr(ParseJson(queued.out), "id")] = file_of(b, i);
  }
  for (const char* name : {"a", "b", "c"}) StartWorker(name, {"--slots", "2"});

  // a dies mid-job, its supervisors and sandboxes with it.
  std::unique_ptr<store::Store> db = OpenDb();
  ASSERT_TRUE(WaitUntil([&] { return !HeldBy(*db, "a").empty(); }, kStateWait));
  for (pid_t pid : ProcessesWithArgument(WorkerState("a"))) kill(pid, SIGKILL);
  // b freezes mid-job: stopped while it holds a job that is running. c's sweeps give that
  // job to the queue once its lease runs out. The job may be one a's death gave to the
  // queue already: what counts is a requeue after the freeze.
  auto running = [&](const std::set<std::string>& ids) {
    std::map<std::string, int> live;  // id -> its requeues so far
    for (const std::string& id : ids) {
      Result<std::optional<store::JobRecord>> job = db->GetJob(id);
      if (job && *job && (*job)->state == store::JobState::kRunning) live[id] = (*job)->requeues;
    }
    return live;
  };
  std::map<std::string, int> frozen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (running(HeldBy(*db, "b")).empty()) return false;
        Freeze("b");
        frozen = running(HeldBy(*db, "b"));
        if (!frozen.empty()) return true;
        Thaw();  // it finished the job meanwhile: catch it at the next one
        return false;
      },
      seconds(60)))
      << "worker b never held a running job";
  EXPECT_TRUE(WaitUntil(
      [&] {
        for (const auto& [id, requeues] : frozen) {
          Result<std::optional<store::JobRecord>> job = db->GetJob(id);
          if (!job || !*job || (*job)->requeues <= requeues) return false;
        }
        return true;
      },
      seconds(90)))
      << "the frozen worker's jobs were never requeued";
  Thaw();

  // Every job ends, completed.
  std::map<std::string, std::string> all = first_jobs;
  all.insert(second_jobs.begin(), second_jobs.end());
  ASSERT_EQ(all.size(), 2u * kPerSubmitter);
  EXPECT_TRUE(WaitUntil(
      [&] {
        Result<std::vector<store::JobRecord>> live = db->ListJobs("", true, 0);
        return live && live->empty();
      },
      seconds(240)))
      << "jobs still live at the end";
  int requeues = 0;
  for (const auto& [id, file] : all) {
    std::optional<store::JobRecord> job = *db->GetJob(id);
    ASSERT_TRUE(job.has_value());
    EXPECT_EQ(job->state, store::JobState::kCompleted) << id << ": " << job->state_reason;
    requeues += job->requeues;
    // Completed once: one end recorded, by the attempt that holds the job.
    int ends = 0;
    Result<std::vector<store::Event>> events = db->ListEvents(id, 0);
    ASSERT_TRUE(events.has_value());
    for (const store::Event& event : *events)
      ends += event.step == "receipt" && event.detail.rfind("job ended ", 0) == 0 ? 1 : 0;
    EXPECT_EQ(ends, 1) << id;
    std::optional<store::JobResult> result = *db->GetResult(id);
    ASSERT_TRUE(result.has_value()) << id;
    EXPECT_EQ(result->commit, job->commit.value_or("")) << id;
  }
  EXPECT_GE(requeues, 2) << "the killed and the frozen worker did not both lose a job";
  // The frozen worker's supervisors woke to refusals, and said so. The other workers may
  // have ended every job before the thawed supervisors wrote anything: wait for them.
  auto frozen_logs = [&] {
    std::map<std::string, std::string> logs;
    for (const auto& [id, requeued] : frozen) {
      std::optional<store::JobRecord> job = *db->GetJob(id);
      for (int attempt = 1; job && attempt <= job->attempt; ++attempt) {
        const std::string log =
            WorkerState("b") + "/jobs/" + id + "-" + std::to_string(attempt) + "/supervisor.log";
        logs[log] = ReadText(log);
      }
    }
    return logs;
  };
  auto refused_logs = [&] {
    int refused = 0;
    for (const auto& [path, text] : frozen_logs())
      refused += Contains(text, "refused a late write") ? 1 : 0;
    return refused;
  };
  if (!WaitUntil([&] { return refused_logs() >= 1; }, seconds(20))) {
    std::string said;
    for (const auto& [path, text] : frozen_logs()) said += "--- " + path + "\n" + text;
    for (const auto& [id, requeued] : frozen) {
      Result<std::vector<store::Event>> events = db->ListEvents(id, 0);
      for (const store::Event& event : events ? *events : std::vector<store::Event>())
        said += id + " " + event.step + ": " + event.detail + "\n";
    }
    ADD_FAILURE() << "no late write of the frozen worker was refused and logged\n" << said;
  }

  // Each submitter lands its jobs.
  for (const auto& [id, file] : first_jobs) {
    RunResult landed = Submitter({"land", id});
    ASSERT_EQ(landed.exit_code, 0) << landed.Describe();
  }
  for (const auto& [id, file] : second_jobs) {
    RunResult landed = Second({"land", id});
    ASSERT_EQ(landed.exit_code, 0) << landed.Describe();
  }
  const std::string first_files = GitOut({"ls-tree", "--name-only", "main", "src/"});
  for (const auto& [id, file] : first_jobs) EXPECT_TRUE(Contains(first_files, file)) << file;
  RunResult second_tree =
      RunProgram({*FindInPath("git"), "-C", second_, "ls-tree", "--name-only", "main", "src/"},
                 {{"PATH", kPath}, {"HOME", home()}}, second_);
  for (const auto& [id, file] : second_jobs) EXPECT_TRUE(Contains(second_tree.out, file)) << file;
}

}  // namespace
}  // namespace berth::e2e
