// End-to-end tests of the job store on PostgreSQL: the real berth binary runs jobs against a
// fresh database of the test cluster (src/store/postgres_testing.h), chosen by --store,
// BERTH_STORE or the user config's `store`, and the tests read the database directly with
// store::OpenStore to see where each job landed. Without PostgreSQL the tests are skipped
// loudly (failed when CI=true), as postgres_testing decides.
//
// Each test gets the jobs fixture's repository, HOME and state directory; the SQLite file
// <state dir>/berth.db must never appear, since nothing here asks for it.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/job_record.h"
#include "store/open_store.h"
#include "store/postgres_testing.h"
#include "store/store.h"
#include "sys/fs.h"
#include "sys/unique_fd.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using store::testing::PostgresDatabase;

// How a berth run is told its store: options before the subcommand, and environment.
struct StoreChoice {
  std::vector<std::string> global_args;
  EnvVars env;
};

StoreChoice ByFlag(const std::string& url) { return {{"--store", url}, {}}; }
StoreChoice ByEnv(const std::string& url) { return {{}, {{"BERTH_STORE", url}}}; }

class StoreE2eTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(db_);
  }

  const std::string& url() const { return db_->url(); }
  std::string SqlitePath() const { return state() + "/berth.db"; }

  RunResult BerthWith(const StoreChoice& choice, const std::vector<std::string>& args) const {
    std::vector<std::string> all = choice.global_args;
    all.insert(all.end(), args.begin(), args.end());
    EnvVars env = {{"GIT_CONFIG_NOSYSTEM", "1"}};
    env.insert(env.end(), choice.env.begin(), choice.env.end());
    return Run(all, env);
  }

  json ShowJsonWith(const StoreChoice& choice, const std::string& id) const {
    RunResult result = BerthWith(choice, {"show", id, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json job = ParseJson(result.out);
    EXPECT_TRUE(job.is_object()) << result.Describe();
    return job.is_object() ? job : json::object();
  }

  json ListJsonWith(const StoreChoice& choice) const {
    RunResult result = BerthWith(choice, {"ls", "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json jobs = ParseJson(result.out);
    EXPECT_TRUE(jobs.is_array()) << result.Describe();
    return jobs.is_array() ? jobs : json::array();
  }

  // `berth run implement -- sh edit.sh` through `choice`, which must complete; its job id.
  std::string RunEditJob(const StoreChoice& choice) const {
    RunResult run = BerthWith(choice, RunArgs({"--json"}, "implement", "edit.sh"));
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    return GetStr(job, "id");
  }

  void WriteUserConfig(const std::string& text) const {
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml", text));
  }

  // The ids of every job in the database at `location`, opened as berth opens it.
  static std::vector<std::string> JobIdsIn(const std::string& location) {
    Result<std::unique_ptr<store::Store>> opened = store::OpenStore(location);
    EXPECT_TRUE(opened) << opened.error().ToString();
    if (!opened) return {"<cannot open " + location + ">"};
    Result<std::vector<store::JobRecord>> jobs = (*opened)->ListJobs("", false, 0);
    EXPECT_TRUE(jobs) << jobs.error().ToString();
    std::vector<std::string> ids;
    if (jobs)
      for (const store::JobRecord& job : *jobs) ids.push_back(job.id);
    return ids;
  }

  // A fresh database of its own; null (after recording a failure) when none can be had.
  static std::unique_ptr<PostgresDatabase> AnotherDatabase() {
    Result<std::unique_ptr<PostgresDatabase>> db = PostgresDatabase::Create();
    EXPECT_TRUE(db) << db.error().ToString();
    return db ? std::move(*db) : nullptr;
  }

 private:
  std::unique_ptr<PostgresDatabase> db_;
};

// --- 1. A job on PostgreSQL, shown by ls and show, with nothing in SQLite ------------------

TEST_F(StoreE2eTest, RunWithStoreFlagKeepsTheJobInPostgres) {
  const std::string id = RunEditJob(ByFlag(url()));
  ASSERT_TRUE(!id.empty() && !id.starts_with("<")) << id;

  json jobs = ListJsonWith(ByFlag(url()));
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump(2);
  EXPECT_EQ(GetStr(jobs[0], "id"), id);
  EXPECT_EQ(GetStr(jobs[0], "state"), "completed") << jobs.dump(2);

  json job = ShowJsonWith(ByFlag(url()), id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string commit = GetStr(job, "commit");
  ASSERT_TRUE(IsHex(commit, 40)) << job.dump(2);
  EXPECT_EQ(GitOut({"rev-parse", "refs/heads/berth/" + id}), commit);
  EXPECT_EQ(GetStr(job, "receipt.job.state"), "completed") << job.dump(2);

  // Nothing went to the default SQLite store.
  EXPECT_FALSE(PathExists(SqlitePath()));

  // The database itself has the job, its commit, its receipt and its events.
  Result<std::unique_ptr<store::Store>> db = store::OpenStore(url());
  ASSERT_TRUE(db) << db.error().ToString();
  Result<std::optional<store::JobRecord>> record = (*db)->GetJob(id);
  ASSERT_TRUE(record) << record.error().ToString();
  ASSERT_TRUE(record->has_value()) << "job " << id << " is not in " << url();
  const store::JobRecord& stored = **record;
  EXPECT_EQ(stored.state, store::JobState::kCompleted) << stored.state_reason;
  EXPECT_EQ(stored.commit.value_or("<none>"), commit);
  EXPECT_EQ(stored.exit_code.value_or(-1), 0);
  EXPECT_EQ(stored.base, base());
  EXPECT_TRUE(stored.receipt_json.has_value());
  Result<std::vector<store::Event>> events = (*db)->ListEvents(id, 0);
  ASSERT_TRUE(events) << events.error().ToString();
  std::vector<std::string> steps;
  for (const store::Event& event : *events) steps.push_back(event.step);
  EXPECT_GE(steps.size(), 3u);
  EXPECT_NE(std::find(steps.begin(), steps.end(), "queued"), steps.end())
      << ::testing::PrintToString(steps);
  EXPECT_NE(std::find(steps.begin(), steps.end(), "agent"), steps.end())
      << ::testing::PrintToString(steps);

  // And the default store does not know the job: berth without --store opens SQLite afresh.
  RunResult show_default = Berth({"show", id, "--json"});
  EXPECT_NE(show_default.exit_code, 0) << show_default.Describe();
}

// --- 2. BERTH_STORE and the config, and which one wins --------------------------------------

TEST_F(StoreE2eTest, BerthStoreInTheEnvironmentSelectsPostgres) {
  const std::string id = RunEditJob(ByEnv(url()));
  EXPECT_EQ(GetStr(ShowJsonWith(ByEnv(url()), id), "state"), "completed");
  EXPECT_EQ(JobIdsIn(url()), std::vector<std::string>{id});
  EXPECT_FALSE(PathExists(SqlitePath()));
}

TEST_F(StoreE2eTest, StoreInTheUserConfigSelectsPostgres) {
  WriteUserConfig("store = \"" + url() + "\"\n");
  const StoreChoice config_only = {{}, {}};
  const std::string id = RunEditJob(config_only);
  EXPECT_EQ(GetStr(ShowJsonWith(config_only, id), "state"), "completed");
  EXPECT_EQ(JobIdsIn(url()), std::vector<std::string>{id});
  EXPECT_FALSE(PathExists(SqlitePath()));
}

TEST_F(StoreE2eTest, StoreFlagWinsOverBerthStoreWhichWinsOverTheConfig) {
  std::unique_ptr<PostgresDatabase> env_db = AnotherDatabase();
  std::unique_ptr<PostgresDatabase> flag_db = AnotherDatabase();
  ASSERT_TRUE(env_db && flag_db);
  const std::string& config_url = url();
  WriteUserConfig("store = \"" + config_url + "\"\n");

  const std::string by_config = RunEditJob({{}, {}});
  const std::string by_env = RunEditJob(ByEnv(env_db->url()));
  const StoreChoice all_three = {{"--store", flag_db->url()}, {{"BERTH_STORE", env_db->url()}}};
  const std::string by_flag = RunEditJob(all_three);

  EXPECT_EQ(JobIdsIn(config_url), std::vector<std::string>{by_config});
  EXPECT_EQ(JobIdsIn(env_db->url()), std::vector<std::string>{by_env});
  EXPECT_EQ(JobIdsIn(flag_db->url()), std::vector<std::string>{by_flag});
  EXPECT_FALSE(PathExists(SqlitePath()));

  // berth's own listing follows the same order of precedence.
  json listed = ListJsonWith(all_three);
  ASSERT_EQ(listed.size(), 1u) << listed.dump(2);
  EXPECT_EQ(GetStr(listed[0], "id"), by_flag);
  listed = ListJsonWith(ByEnv(env_db->url()));
  ASSERT_EQ(listed.size(), 1u) << listed.dump(2);
  EXPECT_EQ(GetStr(listed[0], "id"), by_env);
}

// --- 3. A detached job: the supervisor gets the store ---------------------------------------

class StoreDetachTest : public StoreE2eTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(StoreDetachTest, DetachedJobEndsInPostgres) {
  const std::string how = GetParam();
  if (how == "config") WriteUserConfig("store = \"" + url() + "\"\n");
  const StoreChoice choice = how == "flag"  ? ByFlag(url())
                             : how == "env" ? ByEnv(url())
                                            : StoreChoice{};
  RunResult detached = BerthWith(choice, RunArgs({"--detach", "--json"}, "implement", "edit.sh"));
  ASSERT_EQ(detached.exit_code, 0) << detached.Describe();
  const std::string id = GetStr(ParseJson(detached.out), "id");

  // Read the database directly: the supervisor, not this process, ends the job.
  Result<std::unique_ptr<store::Store>> db = store::OpenStore(url());
  ASSERT_TRUE(db) << db.error().ToString();
  std::optional<store::JobRecord> last;
  bool ended = WaitUntil(
      [&] {
        Result<std::optional<store::JobRecord>> now = (*db)->GetJob(id);
        if (!now || !now->has_value()) return false;
        last = **now;
        return store::IsTerminal(last->state) && last->receipt_json.has_value();
      },
      kStateWait);
  ASSERT_TRUE(ended) << "job " << id << " never ended in " << url() << "; last state "
                     << (last ? store::JobStateName(last->state) : "<not found>") << "\n"
                     << ReadText(JobDir(id) + "/supervisor.log");
  EXPECT_EQ(last->state, store::JobState::kCompleted) << last->state_reason << "\n"
                                                      << ReadText(JobDir(id) + "/supervisor.log");
  EXPECT_TRUE(IsHex(last->commit.value_or(""), 40));
  EXPECT_EQ(GetStr(ShowJsonWith(choice, id), "state"), "completed");
  EXPECT_FALSE(PathExists(SqlitePath()));
}

INSTANTIATE_TEST_SUITE_P(Selections, StoreDetachTest, ::testing::Values("flag", "env", "config"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// --- 4. An unreachable store: exit 69, a message that names it, never the password ----------

constexpr char kPassword[] = "s3cret-pw";

// A loopback TCP port that refuses connections while this object lives: bound, never listening.
struct ClosedPort {
  sys::UniqueFd fd;
  int port = 0;
};

ClosedPort BindClosedPort() {
  ClosedPort closed;
  closed.fd = sys::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(closed.fd.valid()) << std::strerror(errno);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(closed.fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0)
      << std::strerror(errno);
  socklen_t length = sizeof(address);
  EXPECT_EQ(::getsockname(closed.fd.get(), reinterpret_cast<sockaddr*>(&address), &length), 0)
      << std::strerror(errno);
  closed.port = ntohs(address.sin_port);
  return closed;
}

TEST_F(StoreE2eTest, UnreachableStoreExitsUnavailableWithoutThePassword) {
  ClosedPort closed = BindClosedPort();
  ASSERT_NE(closed.port, 0);
  const std::string port = std::to_string(closed.port);
  const std::string bad_url =
      "postgresql://berth:" + std::string(kPassword) + "@127.0.0.1:" + port + "/x";

  struct Attempt {
    std::string what;
    StoreChoice choice;
    std::vector<std::string> args;
  };
  const std::vector<std::string> run = RunArgs({}, "implement", "edit.sh");
  const std::vector<std::string> run_json = RunArgs({"--json"}, "implement", "edit.sh");
  const std::vector<Attempt> attempts = {
      {"--store, run", ByFlag(bad_url), run},
      {"--store, run --json", ByFlag(bad_url), run_json},
      {"--store, run --detach", ByFlag(bad_url), RunArgs({"--detach"}, "implement", "edit.sh")},
      {"--store, ls", ByFlag(bad_url), {"ls"}},
      {"--store, ls --json", ByFlag(bad_url), {"ls", "--json"}},
      {"BERTH_STORE, run", ByEnv(bad_url), run},
      {"BERTH_STORE, show", ByEnv(bad_url), {"show", "abc"}},
  };
  for (const Attempt& attempt : attempts) {
    SCOPED_TRACE(attempt.what);
    // At once, instead of after a command's wait for a store that is away (30 s; the outage
    // suite covers the wait).
    StoreChoice choice = attempt.choice;
    choice.env.emplace_back("BERTH_STORE_WAIT", "0");
    RunResult result = BerthWith(choice, attempt.args);
    EXPECT_EQ(result.exit_code, 69) << result.Describe();
    const std::string printed = result.out + result.err;
    EXPECT_TRUE(Contains(printed, "cannot connect to job store")) << result.Describe();
    EXPECT_TRUE(Contains(printed, "postgresql://berth@127.0.0.1:" + port + "/x"))
        << result.Describe();
    EXPECT_FALSE(Contains(printed, kPassword)) << result.Describe();
  }

  WriteUserConfig("store = \"" + bad_url + "\"\n");
  RunResult by_config = BerthWith({}, run);
  EXPECT_EQ(by_config.exit_code, 69) << by_config.Describe();
  EXPECT_TRUE(Contains(by_config.err, "cannot connect to job store")) << by_config.Describe();
  EXPECT_FALSE(Contains(by_config.out + by_config.err, kPassword)) << by_config.Describe();

  // No fallback: the default SQLite store was not created instead. And no job was begun: the
  // store opens beside the repository's work, and a job's directory comes after it.
  EXPECT_FALSE(PathExists(SqlitePath()));
  EXPECT_TRUE(sys::ListDir(state() + "/jobs").value_or(std::vector<std::string>{}).empty());
}

// `berth doctor` opens the PostgreSQL store as every command does: a working one is `ok` with
// its schema and newest job; an unreachable one is `blocked`, fails the doctor, and is named
// without its password.
TEST_F(StoreE2eTest, DoctorReportsAWorkingAndAnUnreachablePostgresStore) {
  const std::string id = RunEditJob(ByFlag(url()));
  ASSERT_FALSE(id.empty());
  auto store_item = [](const json& report) {
    for (const json& item : report["items"])
      if (item.value("section", "") == "store") return item;
    return json::object();
  };

  RunResult working = BerthWith(ByFlag(url()), {"doctor", "--json"});
  json report = ParseJson(working.out);
  ASSERT_TRUE(report.is_object()) << working.Describe();
  json item = store_item(report);
  EXPECT_EQ(item.value("name", ""), "postgresql") << report.dump(2);
  EXPECT_EQ(item.value("status", ""), "ok") << report.dump(2);
  const std::string detail = item.value("detail", "");
  EXPECT_TRUE(Contains(detail, "connected")) << detail;
  EXPECT_TRUE(Contains(detail, "schema version")) << detail;
  EXPECT_TRUE(Contains(detail, id)) << detail;
  EXPECT_EQ(report["store"].value("kind", ""), "postgresql") << report.dump(2);
  EXPECT_EQ(report["store"].value("ok", false), true) << report.dump(2);

  ClosedPort closed = BindClosedPort();
  ASSERT_NE(closed.port, 0);
  const std::string port = std::to_string(closed.port);
  RunResult unreachable =
      BerthWith(ByEnv("postgresql://berth:" + std::string(kPassword) + "@127.0.0.1:" + port + "/x"),
                {"doctor", "--json"});
  EXPECT_EQ(unreachable.exit_code, 69) << unreachable.Describe();
  json failed = ParseJson(unreachable.out);
  ASSERT_TRUE(failed.is_object()) << unreachable.Describe();
  json blocked = store_item(failed);
  EXPECT_EQ(blocked.value("status", ""), "blocked") << failed.dump(2);
  EXPECT_TRUE(Contains(blocked.value("detail", ""), "postgresql://berth@127.0.0.1:" + port + "/x"))
      << failed.dump(2);
  EXPECT_FALSE(blocked.value("fix", json()).is_null()) << failed.dump(2);
  EXPECT_EQ(failed["store"].value("ok", true), false) << failed.dump(2);
  EXPECT_EQ(failed.value("ok", true), false) << failed.dump(2);
  EXPECT_FALSE(Contains(unreachable.out + unreachable.err, kPassword)) << unreachable.Describe();
}

// The bug: a usage error quoted the URL CLI11 could not place, password and all.
TEST_F(StoreE2eTest, AUsageErrorNeverShowsThePassword) {
  const std::string url = "postgresql://berth:" + std::string(kPassword) + "@127.0.0.1:1/x";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"version", url},
        std::vector<std::string>{"cancel", "--json", "a", "b", url}}) {
    RunResult result = Berth(args);
    EXPECT_EQ(result.exit_code, 64) << result.Describe();
    EXPECT_TRUE(Contains(result.out + result.err, "postgresql://berth@127.0.0.1:1/x"))
        << result.Describe();
    EXPECT_FALSE(Contains(result.out + result.err, kPassword)) << result.Describe();
  }
}

// --store (and --state-dir) work after the subcommand too, for berth lane as well.
TEST_F(StoreE2eTest, StoreAfterTheSubcommandSelectsPostgres) {
  RunResult ran = Berth(RunArgs({"--store", url(), "--json"}, "implement", "edit.sh"));
  ASSERT_EQ(ran.exit_code, 0) << ran.Describe();
  const std::string id = GetStr(ParseJson(ran.out), "id");
  RunResult listed = Berth({"ls", "--json", "--store", url()});
  ASSERT_EQ(listed.exit_code, 0) << listed.Describe();
  EXPECT_TRUE(Contains(listed.out, id)) << listed.Describe();
  EXPECT_FALSE(PathExists(SqlitePath()));
}

}  // namespace
}  // namespace berth::e2e
