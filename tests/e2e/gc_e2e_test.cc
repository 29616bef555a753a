// End-to-end tests of `berth gc`: the real berth binary runs scripted agents against a temp
// git repository, then gc must remove exactly the landed or discarded jobs' workspaces,
// branches and snapshots, and keep everything else (PRODUCT.md invariant 8).
//
// A landed job is made by setting landed_at_ms/landed_commit in the store directly (the
// landing columns stay writable after a job ends), so these tests do not depend on
// `berth land`. Waiting is polling with a deadline. Passes as root and unprivileged.

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kGcPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
)";

// Runs one SQL statement on the state's store (the schema is docs/store.md); "" or the error.
std::string ExecSql(const std::string& db_path, const std::string& sql,
                    std::vector<std::vector<std::string>>* rows = nullptr) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string error = db ? sqlite3_errmsg(db) : "open failed";
    sqlite3_close(db);
    return error;
  }
  sqlite3_busy_timeout(db, 5000);
  auto collect = [](void* out, int n, char** values, char**) -> int {
    auto* table = static_cast<std::vector<std::vector<std::string>>*>(out);
    if (table == nullptr) return 0;
    std::vector<std::string> row;
    for (int i = 0; i < n; ++i) row.emplace_back(values[i] ? values[i] : "NULL");
    table->push_back(std::move(row));
    return 0;
  };
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), collect, rows, &message);
  std::string error = rc == SQLITE_OK ? "" : (message ? message : "sqlite error");
  sqlite3_free(message);
  sqlite3_close(db);
  return error;
}

// The first column of the first row of `sql` on the state's store ("" when none).
std::string ExecSqlValue(const std::string& db_path, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  if (!ExecSql(db_path, sql, &rows).empty() || rows.empty() || rows[0].empty()) return "";
  return rows[0][0];
}

// The jobs fixture's repository with one write agent and no exclusions.
class GcTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kGcPolicy; }

  std::string BranchTip(const std::string& branch) const {
    RunResult r = Git({"rev-parse", "-q", "--verify", "refs/heads/" + branch});
    return r.exit_code == 0 ? TrimRight(r.out) : "";
  }
  std::string Snapshot() const { return state() + "/snapshots/" + base(); }
  std::string Db() const { return state() + "/berth.db"; }
  // `berth run --detach --json implement -- sh SCRIPT ARGS...` and waits until it ends (or,
  // with `until` = "running", until it runs). Returns the id.
  std::string RunJob(const std::string& script, const std::vector<std::string>& script_args = {},
                     const std::string& until = "") {
    std::string id = Detach({}, "implement", script, script_args);
    if (until.empty())
      WaitForEnd(id);
    else
      WaitForState(id, until);
    // sleep.sh has started once it wrote src/pid; only then does the job's directory stop
    // changing.
    if (until == "running" && script == "sleep.sh") {
      EXPECT_TRUE(WaitForWorkspaceFile(JobDir(id), "src/pid", kStateWait))
          << "the agent of job " << id << " never started";
    }
    return id;
  }

  json Gc(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"gc", "--json"};
    all.insert(all.end(), args.begin(), args.end());
    RunResult result = Berth(all);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json report = json::parse(result.out, nullptr, false);
    EXPECT_TRUE(report.is_object()) << result.Describe();
    return report.is_object() ? report : json::object();
  }

  // The ids in report[list], and (for "kept") their reasons.
  static std::map<std::string, std::string> Ids(const json& report, const char* list) {
    std::map<std::string, std::string> ids;
    if (report.contains(list) && report[list].is_array())
      for (const json& j : report[list]) ids[GetStr(j, "id")] = GetStr(j, "why");
    return ids;
  }

  void MarkLanded(const std::string& id, const std::string& commit) {
    std::string error = ExecSql(
        Db(), "UPDATE jobs SET landed_at_ms = " + std::to_string(std::time(nullptr) * 1000LL) +
                  ", landed_commit = '" + commit + "' WHERE id = '" + id + "'");
    ASSERT_EQ(error, "") << "marking a finished job landed in the store";
  }

  // Every path under the state directory (the store's own files excepted) and every ref.
  std::string StateListing() const {
    std::string listing;
    for (const auto& [path, what] : TreeFingerprint(state()))
      if (!path.starts_with("berth.db")) listing += path + " " + what.substr(0, 64) + "\n";
    return listing + GitOut({"for-each-ref", "--format=%(refname) %(objectname)"});
  }
};

TEST_F(GcTest, NeverRemovesTheWorkspaceOrBranchOfAnUnlandedUndiscardedJob) {
  const std::string completed = RunJob("edit.sh");
  const std::string refused = RunJob("outside.sh");
  const std::string failed = RunJob("fail.sh");
  const std::string cancelled = RunJob("sleep.sh", {Token()}, "running");
  ASSERT_EQ(Berth({"cancel", cancelled}).exit_code, 0);
  ASSERT_TRUE(
      WaitUntil([&] { return GetStr(ShowJson(cancelled), "state") == "cancelled"; }, kStateWait));
  const std::string stale = RunJob("sleep.sh", {Token()}, "running");
  json owner = ShowJson(stale)["owner"];
  ASSERT_TRUE(owner.is_object() && owner["pid"].is_number_integer());
  ASSERT_EQ(kill(owner["pid"].get<pid_t>(), SIGKILL), 0) << std::strerror(errno);
  ASSERT_TRUE(WaitUntil([&] { return GetStr(ShowJson(stale), "state") == "stale"; }, kStateWait));
  EXPECT_EQ(GetStr(ShowJson(refused), "state"), "refused");
  EXPECT_EQ(GetStr(ShowJson(failed), "state"), "child-failed");
  const std::string branch_tip = BranchTip("berth/" + completed);
  ASSERT_EQ(branch_tip.size(), 40u);

  json report = Gc({});
  std::map<std::string, std::string> kept = Ids(report, "kept");
  for (const std::string& id : {completed, refused, failed, cancelled, stale}) {
    EXPECT_TRUE(PathExists(JobDir(id))) << id;
    EXPECT_TRUE(kept.count(id) == 1 && kept[id].find("not landed or discarded") == 0)
        << id << ": " << report.dump(2);
  }
  EXPECT_TRUE(Ids(report, "removed").empty()) << report.dump(2);
  EXPECT_EQ(BranchTip("berth/" + completed), branch_tip);
  EXPECT_TRUE(PathExists(Snapshot()));
  EXPECT_EQ(report["freed_bytes"], 0);
  // The human report says the same (one line per kept job with --verbose).
  RunResult human = Berth({"gc", "--verbose"});
  EXPECT_EQ(human.exit_code, 0) << human.Describe();
  EXPECT_NE(human.out.find("kept " + completed + ": not landed or discarded"), std::string::npos)
      << human.Describe();
}

TEST_F(GcTest, DiscardRemovesExactlyThatJobAndLeavesAnAuditEntry) {
  const std::string first = RunJob("edit.sh");
  const std::string second = RunJob("edit.sh");
  const std::string live = RunJob("sleep.sh", {Token()}, "running");
  ASSERT_FALSE(BranchTip("berth/" + first).empty());

  // A live job cannot be discarded, and the refusal changes nothing.
  const std::string before = StateListing();
  RunResult refused = Berth({"gc", "--discard", first, "--discard", live});
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  EXPECT_NE(refused.err.find("still running"), std::string::npos) << refused.Describe();
  EXPECT_EQ(StateListing(), before);

  json report = Gc({"--discard", first.substr(0, 11)});
  EXPECT_FALSE(PathExists(JobDir(first)));
  EXPECT_EQ(BranchTip("berth/" + first), "");
  EXPECT_FALSE(PathExists(Snapshot() + "/users/" + first));
  EXPECT_TRUE(PathExists(JobDir(second)));
  EXPECT_FALSE(BranchTip("berth/" + second).empty());
  EXPECT_TRUE(PathExists(JobDir(live)));
  EXPECT_TRUE(PathExists(Snapshot()));  // the other jobs still use it
  EXPECT_EQ(Ids(report, "removed").count(first), 1u) << report.dump(2);
  EXPECT_GT(report["freed_bytes"].get<int64_t>(), 0);

  std::vector<std::vector<std::string>> audit;
  ASSERT_EQ(ExecSql(Db(), "SELECT job_id, action, detail_json FROM audit", &audit), "");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0][0], first);
  EXPECT_EQ(audit[0][1], "discard");
  json detail = json::parse(audit[0][2], nullptr, false);
  EXPECT_EQ(GetStr(detail, "job"), first);
  EXPECT_FALSE(GetStr(detail, "by").empty());
  EXPECT_FALSE(GetStr(detail, "at").empty());
  // The record and its audit entry survive gc.
  EXPECT_EQ(GetStr(ShowJson(first), "state"), "completed");
  Gc({});
  audit.clear();
  ASSERT_EQ(ExecSql(Db(), "SELECT job_id FROM audit", &audit), "");
  EXPECT_EQ(audit.size(), 1u);
}

TEST_F(GcTest, ADiscardedJobWhoseBranchMovedKeepsTheBranch) {
  const std::string id = RunJob("edit.sh");
  ASSERT_FALSE(BranchTip("berth/" + id).empty());
  ASSERT_EQ(Git({"branch", "-f", "berth/" + id, base()}).exit_code, 0);
  json report = Gc({"--discard", id});
  EXPECT_FALSE(PathExists(JobDir(id)));
  EXPECT_EQ(BranchTip("berth/" + id), base());
  ASSERT_TRUE(report["kept_branches"].is_array() && report["kept_branches"].size() == 1)
      << report.dump(2);
  EXPECT_EQ(GetStr(report["kept_branches"][0], "branch"), "berth/" + id);
}

TEST_F(GcTest, ASnapshotGoesOnlyWithItsLastUserAndLandedJobsAreRemoved) {
  const std::string first = RunJob("edit.sh");
  const std::string second = RunJob("edit.sh");
  ASSERT_TRUE(PathExists(Snapshot() + "/users/" + first));
  ASSERT_TRUE(PathExists(Snapshot() + "/users/" + second));
  const std::string commit = GetStr(ShowJson(first), "commit");
  MarkLanded(first, commit);
  if (HasFatalFailure()) return;

  json report = Gc({});
  EXPECT_FALSE(PathExists(JobDir(first)));
  EXPECT_EQ(BranchTip("berth/" + first), "");
  EXPECT_EQ(Ids(report, "removed")[first], "landed") << report.dump(2);
  EXPECT_TRUE(PathExists(Snapshot()));  // the second job keeps it
  EXPECT_TRUE(report["removed_snapshots"].empty()) << report.dump(2);

  report = Gc({"--discard", second});
  EXPECT_FALSE(PathExists(JobDir(second)));
  EXPECT_FALSE(PathExists(Snapshot()));
  EXPECT_EQ(report["removed_snapshots"], json::array({base()})) << report.dump(2);
  EXPECT_GT(report["freed_bytes"].get<int64_t>(), 0);

  // A new job on the same base rebuilds the snapshot.
  const std::string third = RunJob("edit.sh");
  EXPECT_EQ(GetStr(ShowJson(third), "state"), "completed");
  EXPECT_TRUE(PathExists(Snapshot() + "/users/" + third));
}

TEST_F(GcTest, DryRunChangesNothing) {
  const std::string landed = RunJob("edit.sh");
  const std::string kept = RunJob("fail.sh");
  const std::string discarded = RunJob("edit.sh");
  MarkLanded(landed, GetStr(ShowJson(landed), "commit"));
  if (HasFatalFailure()) return;
  ASSERT_TRUE(sys::MakeDirs(state() + "/jobs/orphandir1", 0700));
  const std::string before = StateListing();

  json dry = Gc({"--dry-run", "--discard", discarded});
  EXPECT_EQ(dry["dry_run"], true);
  EXPECT_EQ(StateListing(), before);
  std::vector<std::vector<std::string>> audit;
  ASSERT_EQ(ExecSql(Db(), "SELECT job_id FROM audit", &audit), "");
  EXPECT_TRUE(audit.empty());
  EXPECT_EQ(Ids(dry, "removed").size(), 2u) << dry.dump(2);

  json real = Gc({"--discard", discarded});
  EXPECT_EQ(Ids(real, "removed"), Ids(dry, "removed"));
  EXPECT_EQ(real["removed_snapshots"], dry["removed_snapshots"]);
  EXPECT_EQ(real["freed_bytes"], dry["freed_bytes"]);
  EXPECT_TRUE(PathExists(JobDir(kept)));
}

// Issue 30: `gc --dry-run` predicted 1 snapshot where the real run removed 2: a snapshot
// stacked on another still stood on disk during the dry run, so the one below it counted as
// needed. The dry run's figures are the real run's.
TEST_F(GcTest, DryRunPredictsExactlyWhatGcRemovesRegression) {
  const std::string landed = RunJob("edit.sh");
  const std::string discarded = RunJob("edit.sh");
  // A second commit: its first job derives a snapshot stacked on the base's.
  ASSERT_TRUE(WriteText(ws() + "/README.md", "readme, changed\n"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "second"}).exit_code, 0);
  const std::string second = GitOut({"rev-parse", "HEAD"});
  const std::string stacked = RunJob("edit.sh");
  ASSERT_EQ(GetStr(ShowJson(stacked), "base"), second);
  ASSERT_TRUE(PathExists(state() + "/snapshots/" + second + "/users/" + stacked));
  MarkLanded(landed, GetStr(ShowJson(landed), "commit"));
  if (HasFatalFailure()) return;
  const std::string before = StateListing();

  json dry = Gc({"--dry-run", "--discard", discarded, "--discard", stacked});
  EXPECT_EQ(StateListing(), before);
  json real = Gc({"--discard", discarded, "--discard", stacked});
  std::set<std::string> dry_snapshots(dry["removed_snapshots"].begin(),
                                      dry["removed_snapshots"].end());
  std::set<std::string> real_snapshots(real["removed_snapshots"].begin(),
                                       real["removed_snapshots"].end());
  EXPECT_EQ(real_snapshots, (std::set<std::string>{base(), second})) << real.dump(2);
  EXPECT_EQ(dry_snapshots, real_snapshots) << dry.dump(2);
  EXPECT_EQ(Ids(dry, "removed"), Ids(real, "removed"));
  EXPECT_EQ(Ids(real, "removed").size(), 3u) << real.dump(2);
  EXPECT_EQ(dry["freed_bytes"], real["freed_bytes"]);
  EXPECT_FALSE(PathExists(Snapshot()));
}

// Issue 30: gc printed a "kept" line for each of ~80 jobs and never said how to let one go.
// One summary line names the kinds and the commands; --verbose lists them.
TEST_F(GcTest, KeptJobsAreOneSummaryLineNamingTheCommandsRegression) {
  const std::string first = RunJob("edit.sh");
  const std::string second = RunJob("fail.sh");
  RunResult gc = Berth({"gc"});
  ASSERT_EQ(gc.exit_code, 0) << gc.Describe();
  EXPECT_FALSE(Contains(gc.out, "kept " + first)) << gc.out;
  EXPECT_TRUE(Contains(gc.out, "kept 2 job(s): 2 not landed or discarded")) << gc.out;
  EXPECT_TRUE(Contains(gc.out, "berth gc --discard JOB")) << gc.out;
  EXPECT_TRUE(Contains(gc.out, "berth land JOB")) << gc.out;

  RunResult verbose = Berth({"gc", "--verbose"});
  ASSERT_EQ(verbose.exit_code, 0) << verbose.Describe();
  EXPECT_TRUE(Contains(verbose.out, "kept " + first + ": not landed or discarded")) << verbose.out;
  EXPECT_TRUE(Contains(verbose.out, "kept " + second + ": not landed or discarded")) << verbose.out;

  json report = Gc({});
  ASSERT_EQ(report["kept"].size(), 2u) << report.dump(2);
  EXPECT_EQ(GetStr(report["kept"][0], "kept_for"), "unlanded") << report.dump(2);
}

TEST_F(GcTest, OrphansAreReportedAndKeptUnlessTheirWorkIsLanded) {
  const std::string id = RunJob("edit.sh");  // makes the repository known to the store
  // An orphan job directory, an orphan branch with unlanded work, and one already in main.
  ASSERT_TRUE(sys::MakeDirs(state() + "/jobs/zzzzorphan001/upper", 0700));
  ASSERT_TRUE(WriteText(state() + "/jobs/zzzzorphan001/upper/f", "data\n"));
  ASSERT_EQ(Git({"checkout", "-q", "-b", "side"}).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/src/side.c", "side\n"));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "side"}).exit_code, 0);
  ASSERT_EQ(Git({"branch", "berth/orphanwork"}).exit_code, 0);
  ASSERT_EQ(Git({"checkout", "-q", "main"}).exit_code, 0);
  ASSERT_EQ(Git({"branch", "berth/orphanlanded", base()}).exit_code, 0);
  const std::string work_tip = BranchTip("berth/orphanwork");

  json report = Gc({});
  std::map<std::string, json> orphans;
  for (const json& o : report["orphans"]) orphans[GetStr(o, "name")] = o;
  ASSERT_EQ(orphans.count(state() + "/jobs/zzzzorphan001"), 1u) << report.dump(2);
  EXPECT_EQ(orphans[state() + "/jobs/zzzzorphan001"]["removed"], false);
  ASSERT_EQ(orphans.count("berth/orphanwork"), 1u) << report.dump(2);
  EXPECT_EQ(orphans["berth/orphanwork"]["removed"], false);
  ASSERT_EQ(orphans.count("berth/orphanlanded"), 1u) << report.dump(2);
  EXPECT_EQ(orphans["berth/orphanlanded"]["removed"], true);
  EXPECT_TRUE(PathExists(state() + "/jobs/zzzzorphan001/upper/f"));
  EXPECT_EQ(BranchTip("berth/orphanwork"), work_tip);
  EXPECT_EQ(BranchTip("berth/orphanlanded"), "");
  EXPECT_TRUE(PathExists(JobDir(id)));

  // An explicit discard by branch name removes the orphan branch.
  Gc({"--discard", "berth/orphanwork"});
  EXPECT_EQ(BranchTip("berth/orphanwork"), "");
  EXPECT_TRUE(PathExists(state() + "/jobs/zzzzorphan001"));
}

// --- Issue 27, finding 1: one corrupt job row stopped every berth process ------------------

// The gc fixture's policy, with unverified jobs landable (it declares no checks).
class CorruptRowTest : public GcTest {
 protected:
  std::string InitialPolicy() const override {
    return std::string(kGcPolicy) + "[landing]\nallow_unverified = true\n";
  }
  // A queued job `id` beside the healthy job `from`, whose stored request is `request`: what
  // a bug, a manual edit or a newer berth could leave in the store.
  void InsertJob(const std::string& id, const std::string& from, const std::string& request) {
    std::string quoted;
    for (char c : request) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    const std::string error = ExecSql(
        Db(),
        "INSERT INTO jobs (id, repo, agent, provider, state, base, branch, job_dir, backend, "
        "policy_hash, request_json, created_at_ms) SELECT '" +
            id + "', repo, agent, provider, 'queued', base, 'berth/" + id + "', job_dir || '-" +
            id + "', backend, policy_hash, '" + quoted +
            "', created_at_ms + 1 FROM jobs WHERE id = '" + from + "'");
    ASSERT_EQ(error, "") << "inserting the corrupt row " << id;
  }
  std::vector<std::vector<std::string>> Events(const std::string& id) const {
    std::vector<std::vector<std::string>> rows;
    EXPECT_EQ(ExecSql(Db(), "SELECT step, detail FROM events WHERE job_id = '" + id + "'", &rows),
              "");
    return rows;
  }
};

TEST_F(CorruptRowTest, CorruptJobRowEndsFailedAndEveryCommandKeepsWorking) {
  const std::string good = RunJob("edit.sh");
  ASSERT_EQ(GetStr(ShowJson(good), "state"), "completed");
  json request =
      ParseJson(ExecSqlValue(Db(), "SELECT request_json FROM jobs WHERE id = '" + good + "'"));
  ASSERT_TRUE(request.is_object());
  request["deadline_ms"] = "soon";
  InsertJob("badtype", good, request.dump());
  InsertJob("badjson", good, "this is not JSON {");
  InsertJob("badshape", good, R"({"argv": 5})");

  // ls lists every job, and the first reader ends each corrupt one failed.
  RunResult ls = Berth({"ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.Describe();
  for (const std::string& id :
       {good, std::string("badtype"), std::string("badjson"), std::string("badshape")})
    EXPECT_TRUE(Contains(ls.out, id)) << ls.Describe();
  RunResult ls_json = Berth({"ls", "--json"});
  ASSERT_EQ(ls_json.exit_code, 0) << ls_json.Describe();
  const std::string why =
      "the job's stored request cannot be read: request.deadline_ms must be an integer, not "
      "string";
  json bad = ShowJson("badtype");
  EXPECT_EQ(GetStr(bad, "state"), "failed") << bad.dump(2);
  EXPECT_EQ(GetStr(bad, "state_reason"), why);
  EXPECT_EQ(GetStr(bad, "record_error"), why);
  EXPECT_EQ(GetStr(ShowJson("badjson"), "state"), "failed");
  EXPECT_TRUE(Contains(GetStr(ShowJson("badjson"), "record_error"), "request is not JSON"));
  EXPECT_EQ(GetStr(ShowJson("badshape"), "state"), "failed");
  EXPECT_TRUE(Get(ShowJson(good), "record_error").is_null());

  // One event, naming the field, however many readers met the job.
  EXPECT_EQ(Events("badtype"), (std::vector<std::vector<std::string>>{{"failed", why}}));
  EXPECT_EQ(Events("badjson").size(), 1u);

  // show prints what it can and the error; the healthy job shows as before.
  RunResult show = Berth({"show", "badtype"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_TRUE(Contains(show.out, "error    " + why)) << show.Describe();
  RunResult show_good = Berth({"show", good});
  ASSERT_EQ(show_good.exit_code, 0) << show_good.Describe();
  EXPECT_FALSE(Contains(show_good.out, "error    ")) << show_good.Describe();

  // land refuses the corrupt job with the error and lands the healthy one.
  RunResult refused = Berth({"land", "badtype"});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_TRUE(Contains(refused.err, why)) << refused.Describe();
  RunResult landed = Berth({"land", good});
  EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_FALSE(
      ExecSqlValue(Db(), "SELECT landed_commit FROM jobs WHERE id = '" + good + "'").empty());

  // gc --discard takes the corrupt jobs like any failed job.
  json report = Gc({"--discard", "badtype", "--discard", "badjson", "--discard", "badshape"});
  EXPECT_TRUE(report.is_object()) << report.dump(2);
  EXPECT_EQ(ExecSqlValue(Db(), "SELECT COUNT(*) FROM audit WHERE action = 'discard'"), "3");
}

}  // namespace
}  // namespace berth::e2e
