// End-to-end tests of the shared queue through an outage of its PostgreSQL store
// (docs/workers.md "Store outages"): a cluster of the test's own is stopped (`pg_ctl stop -m
// fast`) while real `berth worker` daemons run jobs, and started again on the same port with
// the same data. Every job must end exactly once, completed, by its first attempt, and land on
// the submitting host. Also on a server of the test's own: how many statements a command sends
// it (StoreRoundTripsE2eTest). Without PostgreSQL binaries the tests are skipped loudly (failed
// when CI=true).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "store/open_store.h"
#include "store/postgres_testing.h"
#include "store/store.h"
#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using store::testing::PostgresServer;

// Up to 20 jobs of the source at once; a lost job would get one more attempt, which the
// tests check never happens.
constexpr char kOutagePolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 20
retry = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
# Runs on the worker, in its sandbox, on the job's commit: what makes the job landable.
[[verify]]
name = "main-exists"
argv = ["sh", "-c", "test -f src/main.c"]
)";

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// Wall-clock ms since the epoch.
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class StoreOutageE2eTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Result<std::unique_ptr<PostgresServer>> server = PostgresServer::Launch();
    if (!server) {
      const std::string why = server.error().ToString();
      if (server.error().cause() != Cause::kNotFound || store::testing::PostgresRequired())
        FAIL() << store::testing::NoPostgresMessage(why);
      GTEST_SKIP() << store::testing::NoPostgresMessage(why);
    }
    server_ = std::move(*server);
    Result<std::string> url = server_->CreateDatabase("berth_outage");
    ASSERT_TRUE(url.has_value()) << url.error().ToString();
    url_ = *url;
  }
  void TearDown() override {
    workers_.clear();  // killed and reaped
    for (const std::string& name : names_) KillProcessesWithArgument(WorkerState(name));
    JobsTest::TearDown();
    server_.reset();
  }
  std::string InitialPolicy() const override { return kOutagePolicy; }

  std::string WorkerState(const std::string& name) const { return root() + "/worker-" + name; }

  RunResult Submitter(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"--store", url_};
    all.insert(all.end(), args.begin(), args.end());
    return Berth(all);
  }

  std::string Queue(const std::string& script, const std::vector<std::string>& script_args) {
    std::vector<std::string> run = {"--store", url_};
    std::vector<std::string> queued =
        RunArgs({"--queue", "--json"}, "implement", script, script_args);
    run.insert(run.end(), queued.begin(), queued.end());
    RunResult result = Berth(run);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    return GetStr(ParseJson(result.out), "id");
  }

  void StartWorker(const std::string& name, int slots) {
    names_.push_back(name);
    std::vector<std::string> argv = {"/bin/sh",
                                     "-c",
                                     "exec \"$@\" >>\"$0\" 2>&1",
                                     root() + "/worker-" + name + ".log",
                                     BERTH_BINARY,
                                     "--state-dir",
                                     WorkerState(name),
                                     "--store",
                                     url_,
                                     "worker",
                                     "--poll",
                                     "200",
                                     "--slots",
                                     std::to_string(slots)};
    EnvVars env = BaseEnv();
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    workers_[name] = std::make_unique<RunningProgram>(StartProgram(argv, env, ws()));
  }
  std::string WorkerLog(const std::string& name) const {
    return ReadText(root() + "/worker-" + name + ".log");
  }

  // A connection of the test's own, opened while the store is up.
  std::unique_ptr<store::Store> OpenDb() const {
    Result<std::unique_ptr<store::Store>> store = store::OpenStore(url_);
    CHECK(store.has_value());
    return std::move(*store);
  }

  int CountIn(store::Store& db, const std::vector<std::string>& ids, store::JobState state) {
    int count = 0;
    for (const std::string& id : ids) {
      Result<std::optional<store::JobRecord>> job = db.GetJob(id);
      if (job && *job && (*job)->state == state) ++count;
    }
    return count;
  }

  // Every job ended once, completed by its first attempt, with its result stored; each lands
  // on the submitting host. Returns each job's agent's end (ms), from the landed file.
  std::map<std::string, int64_t> ExpectEveryJobCompletedOnceAndLands(
      store::Store& db, const std::map<std::string, std::string>& jobs) {
    std::map<std::string, int64_t> done_at;
    for (const auto& entry : jobs) {
      const std::string& id = entry.first;  // a plain reference: lambdas below capture it
      std::optional<store::JobRecord> job = *db.GetJob(id);
      EXPECT_TRUE(job.has_value()) << id;
      if (!job) continue;
      EXPECT_EQ(job->state, store::JobState::kCompleted) << id << ": " << job->state_reason;
      EXPECT_EQ(job->attempt, 1) << id << " ran again: " << job->state_reason;
      EXPECT_EQ(job->requeues, 0) << id;
      // The receipt's event follows the terminal state by a few writes.
      int ends = 0;
      WaitUntil(
          [&] {
            ends = 0;
            Result<std::vector<store::Event>> events = db.ListEvents(id, 0);
            for (const store::Event& event : events ? *events : std::vector<store::Event>())
              ends += event.step == "receipt" && event.detail.rfind("job ended ", 0) == 0 ? 1 : 0;
            return ends > 0;
          },
          kStateWait);
      EXPECT_EQ(ends, 1) << id;
      // Each job's events name the outage its supervisor rode out.
      EXPECT_TRUE(WaitUntil(
          [&] {
            Result<std::vector<store::Event>> events = db.ListEvents(id, 0);
            for (const store::Event& event : events ? *events : std::vector<store::Event>())
              if (event.step == "store" && Contains(event.detail, "unreachable from")) return true;
            return false;
          },
          kStateWait))
          << id << " has no event naming the outage";
      std::optional<store::JobResult> result = *db.GetResult(id);
      EXPECT_TRUE(result.has_value()) << id << " has no stored result";
      if (result) {
        EXPECT_EQ(result->commit, job->commit.value_or("")) << id;
      }
    }
    for (const auto& [id, name] : jobs) {
      RunResult landed = Submitter({"land", id});
      EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
      const std::string text = GitOut({"show", "main:src/outage-" + name + ".c"});
      const size_t eq = text.find("= ");
      EXPECT_NE(eq, std::string::npos) << name << ": " << text;
      if (eq != std::string::npos) done_at[id] = std::stoll(text.substr(eq + 2));
    }
    return done_at;
  }

  std::unique_ptr<PostgresServer> server_;
  std::string url_;
  std::vector<std::string> names_;
  std::map<std::string, std::unique_ptr<RunningProgram>> workers_;
};

// The finding: four jobs run on a worker, PostgreSQL goes down and comes back, and the job
// that finished meanwhile could not store its output, exited 1 and ended stale, its commit
// never landable. Now its supervisor waits for the store, and every job ends completed.
TEST_F(StoreOutageE2eTest, AJobThatEndsDuringAStoreRestartIsRecorded) {
  const std::string short_token = Token();
  const std::string long_token = Token();
  std::map<std::string, std::string> jobs;  // id -> name
  jobs[Queue("outage.sh", {"4", short_token, "short"})] = "short";
  for (const std::string name : {"long1", "long2", "long3"})
    jobs[Queue("outage.sh", {"25", long_token, name})] = name;
  std::vector<std::string> ids;
  for (const auto& [id, name] : jobs) ids.push_back(id);
  StartWorker("a", 4);
  std::unique_ptr<store::Store> db = OpenDb();
  ASSERT_TRUE(
      WaitUntil([&] { return CountIn(*db, ids, store::JobState::kRunning) == 4; }, seconds(60)))
      << WorkerLog("a");

  ASSERT_TRUE(server_->Stop().has_value());
  const int64_t stopped_at = NowMs();
  // The short job's agent ends while the store is away; its supervisor must wait.
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArgument(short_token).empty(); }, seconds(30)));
  std::this_thread::sleep_for(seconds(2));
  ASSERT_TRUE(server_->Start().has_value());
  const int64_t started_at = NowMs();

  EXPECT_TRUE(
      WaitUntil([&] { return CountIn(*db, ids, store::JobState::kCompleted) == 4; }, seconds(120)))
      << WorkerLog("a");
  std::map<std::string, int64_t> done_at = ExpectEveryJobCompletedOnceAndLands(*db, jobs);
  for (const auto& [id, name] : jobs) {
    if (name != "short") continue;
    EXPECT_GT(done_at[id], stopped_at) << "the short job ended before the outage";
    EXPECT_LT(done_at[id], started_at) << "the short job ended after the outage";
    const std::string log = ReadText(WorkerState("a") + "/jobs/" + id + "-1/supervisor.log");
    EXPECT_TRUE(Contains(log, "unreachable since")) << log;
    EXPECT_TRUE(Contains(log, "reachable again")) << log;
    EXPECT_FALSE(Contains(log, "could not store")) << log;
  }
  // The result kept on the worker's disk until the store had it is gone once it has.
  for (const auto& [id, name] : jobs)
    EXPECT_FALSE(PathExists(WorkerState("a") + "/jobs/" + id + "-1/pending-result.json")) << id;
}

// The target: a 60 s outage under 20 running jobs on two workers. Every job completes exactly
// once (no stale, no second attempt, none lost), some of them finished while the store was
// away, every result lands from the submitting host, and the workers and a command said
// clearly that the store was away.
TEST_F(StoreOutageE2eTest, AStoreOutageOf60sUnder20JobsLosesNothing) {
  constexpr int kJobs = 20;
  const std::string token = Token();
  std::map<std::string, std::string> jobs;
  for (int i = 0; i < kJobs; ++i) {
    // Half end during the outage, half after it.
    const std::string name = (i % 2 == 0 ? "s" : "l") + std::to_string(i);
    jobs[Queue("outage.sh", {i % 2 == 0 ? "15" : "75", token, name})] = name;
  }
  std::vector<std::string> ids;
  for (const auto& [id, name] : jobs) ids.push_back(id);
  StartWorker("a", kJobs / 2);
  StartWorker("b", kJobs / 2);
  std::unique_ptr<store::Store> db = OpenDb();
  ASSERT_TRUE(WaitUntil([&] { return CountIn(*db, ids, store::JobState::kRunning) == kJobs; },
                        seconds(120)))
      << WorkerLog("a") << WorkerLog("b");

  ASSERT_TRUE(server_->Stop().has_value());
  const int64_t stopped_at = NowMs();
  // A one-shot command says what is wrong and gives up after its wait, naming the store.
  RunResult show = Submitter({"show", ids.front()});
  EXPECT_EQ(show.exit_code, 69) << show.Describe();
  EXPECT_TRUE(Contains(show.err, "unreachable since")) << show.Describe();
  EXPECT_TRUE(Contains(show.err, "unreachable for")) << show.Describe();
  const int64_t remaining = 60'000 - (NowMs() - stopped_at);
  if (remaining > 0) std::this_thread::sleep_for(milliseconds(remaining));
  ASSERT_TRUE(server_->Start().has_value());
  const int64_t started_at = NowMs();

  EXPECT_TRUE(WaitUntil(
      [&] {
        Result<std::vector<store::JobRecord>> live = db->ListJobs("", true, 0);
        return live && live->empty();
      },
      seconds(180)))
      << "jobs still live\n"
      << WorkerLog("a") << WorkerLog("b");
  EXPECT_EQ(CountIn(*db, ids, store::JobState::kCompleted), kJobs);
  EXPECT_EQ(CountIn(*db, ids, store::JobState::kStale), 0);
  std::map<std::string, int64_t> done_at = ExpectEveryJobCompletedOnceAndLands(*db, jobs);
  int during = 0;
  for (const auto& [id, at] : done_at) during += at > stopped_at && at < started_at ? 1 : 0;
  EXPECT_GE(during, 1) << "no job ended while the store was away";
  for (const std::string name : {"a", "b"}) {
    const std::string log = WorkerLog(name);
    EXPECT_TRUE(Contains(log, "unreachable since")) << log;
    EXPECT_TRUE(Contains(log, "reachable again")) << log;
    // One line for the outage, not one per round.
    EXPECT_LE(Count(log, "unreachable since"), 2u) << log;
  }
}

// Every statement is a round trip a command waits for, on a server that may be across a
// network (docs/store.md "Round trips"). The server logs each statement of berth's sessions;
// `berth run --queue` must stay at three and `berth ls` at four (they were 13 and 9).
class StoreRoundTripsE2eTest : public StoreOutageE2eTest {
 protected:
  // Statements the server has logged so far: a simple query ("statement:") or an execution of
  // an extended one ("execute <unnamed>:").
  size_t LoggedStatements() const {
    Result<std::string> log = server_->Log();
    EXPECT_TRUE(log.has_value()) << log.error().ToString();
    return log ? Count(*log, "LOG:  statement: ") + Count(*log, "LOG:  execute ") : 0;
  }
};

TEST_F(StoreRoundTripsE2eTest, RunQueueAndLsSendThreeAndFourStatements) {
  // The first command migrates the new database; the count is of a database in use.
  ASSERT_EQ(Submitter({"ls"}).exit_code, 0);
  ASSERT_TRUE(server_->LogStatementsOf("berth_outage").has_value());
  size_t before = LoggedStatements();
  const std::string id = Queue("outage.sh", {"1", Token(), "one"});
  ASSERT_FALSE(id.empty());
  // Opening (settings, schema version and clock at once), the sweep's owned jobs (none: no
  // clock to ask), the job with its first event.
  EXPECT_EQ(LoggedStatements() - before, 3u) << *server_->Log();
  before = LoggedStatements();
  RunResult listed = Submitter({"ls"});
  EXPECT_EQ(listed.exit_code, 0) << listed.Describe();
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.Describe();
  // Opening, the sweep's owned jobs, the listing, the queue's positions.
  EXPECT_EQ(LoggedStatements() - before, 4u) << *server_->Log();
}

}  // namespace
}  // namespace berth::e2e
