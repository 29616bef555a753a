// The SQLite store failing under a job (docs/store.md "When the store fails"): a database
// another process holds locked past the busy timeout, a read-only database, and a state
// directory whose disk fills up. Each is a finding of issue 27: the job's end must not be
// lost, the user must be told what failed and where, and the job's work must be kept.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// A connection of the test's own to the job store, as another process holding it would have.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
      error_ = db_ != nullptr ? sqlite3_errmsg(db_) : "open failed";
    else
      sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  const std::string& error() const { return error_; }
  // Runs `sql`; returns the first column of each row, or "<error: ...>".
  std::vector<std::string> Exec(const std::string& sql) {
    std::vector<std::string> rows;
    char* message = nullptr;
    auto collect = [](void* out, int columns, char** values, char**) {
      if (columns > 0)
        static_cast<std::vector<std::string>*>(out)->push_back(values[0] ? values[0] : "NULL");
      return 0;
    };
    if (sqlite3_exec(db_, sql.c_str(), collect, &rows, &message) != SQLITE_OK)
      rows = {std::string("<error: ") + (message ? message : "?") + ">"};
    sqlite3_free(message);
    return rows;
  }

 private:
  sqlite3* db_ = nullptr;
  std::string error_;
};

class StoreFaultsTest : public JobsTest {
 protected:
  void TearDown() override {
    // A tmpfs mounted over the state directory goes before the tree is removed (the removal
    // never crosses into another filesystem); modes a test took away come back.
    if (mounted_) {
      EXPECT_EQ(::umount2(state().c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
    for (const std::string& path : restore_modes_) ::chmod(path.c_str(), 0700);
    holder_ = RunningProgram();  // killed and reaped: its namespace and tmpfs go with it
    JobsTest::TearDown();
  }

  std::string DbPath() const { return state() + "/berth.db"; }

  // `berth ARGS` as Berth() runs it, but with the state directory read-only: a read-only bind
  // mount of it in a mount namespace of its own when the test runs as root (file modes do not
  // stop root), else modes without write permission on the database and its directory.
  RunResult BerthOnReadOnlyState(const std::vector<std::string>& args) {
    EnvVars env = BaseEnv();
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    std::vector<std::string> argv;
    if (IsRoot()) {
      std::optional<std::string> unshare = FindInPath("unshare");
      if (!unshare) return RunResult{"unshare", -1, "", "no unshare in PATH"};
      argv = {
          *unshare,
          "-m",
          "sh",
          "-c",
          "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\"",
          "sh",
          state(),
          BERTH_BINARY};
    } else {
      for (const std::string& path : {DbPath(), state()}) {
        EXPECT_EQ(::chmod(path.c_str(), path == state() ? 0500 : 0400), 0) << path;
        restore_modes_.push_back(path);
      }
      argv = {BERTH_BINARY};
    }
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result = RunProgram(argv, env, ws());
    if (!IsRoot()) {
      for (const std::string& path : restore_modes_) ::chmod(path.c_str(), 0700);
      ::chmod(DbPath().c_str(), 0600);
      restore_modes_.clear();
    }
    return result;
  }

  // Puts the state directory on a 16 MiB tmpfs. As root it is mounted here and unmounted in
  // TearDown. As another user it is mounted in a user and mount namespace of a process of
  // the test's (`unshare --map-current-user --mount`, which needs no privilege), that every
  // command of OnDisk() enters and whose view Seen() reads through. false after a failure.
  bool MountSmallStateDisk() {
    if (IsRoot()) {
      EXPECT_EQ(::mount("tmpfs", state().c_str(), "tmpfs", 0, "size=16m,mode=0700"), 0)
          << std::strerror(errno);
      mounted_ = !HasFailure();
      return mounted_;
    }
    std::optional<std::string> unshare = FindInPath("unshare");
    std::optional<std::string> nsenter = FindInPath("nsenter");
    if (!unshare || !nsenter) {
      RequireFeature(false, "no unshare or nsenter (util-linux) to mount a tmpfs unprivileged");
      return false;
    }
    nsenter_ = *nsenter;
    holder_ = StartProgram(
        {*unshare, "--map-current-user", "--mount", "--keep-caps", "sh", "-c",
         "mount -t tmpfs -o size=16m,mode=0700 tmpfs \"$1\" && exec sleep 3600", "sh", state()},
        BaseEnv(), ws());
    if (holder_.pid() < 0) return false;
    const std::string mountinfo = "/proc/" + std::to_string(holder_.pid()) + "/mountinfo";
    const bool mounted =
        WaitUntil([&] { return Contains(ReadText(mountinfo), " " + state() + " rw"); }, kStateWait);
    if (!mounted) {
      ADD_FAILURE() << "the tmpfs never appeared in the namespace of pid " << holder_.pid() << ": "
                    << holder_.Wait().Describe();
      return false;
    }
    view_ = "/proc/" + std::to_string(holder_.pid()) + "/root";
    return true;
  }
  // `berth ARGS` where the state directory is the small disk.
  RunResult OnDisk(const std::vector<std::string>& args) const {
    if (view_.empty()) return Berth(args);
    EnvVars env = BaseEnv();
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    std::vector<std::string> argv = {
        nsenter_,    "--preserve-credentials",      "--user",       "--mount",
        "--target",  std::to_string(holder_.pid()), "--wd=" + ws(), "--",
        BERTH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, env, ws());
  }
  // `path` as the commands of OnDisk() see it.
  std::string Seen(const std::string& path) const { return view_ + path; }

  bool mounted_ = false;
  RunningProgram holder_;  // the namespace of the small disk, for an unprivileged run
  std::string nsenter_;
  std::string view_;  // "/proc/PID/root" of the holder, or "" as root
  std::vector<std::string> restore_modes_;
};

// Issue 27: a job that ended while another process held the database's write lock past the
// 5 s busy timeout could not write its end, and was later judged stale with its commit
// unrecorded. Its end is now retried until the lock goes, saying so on stderr.
TEST_F(StoreFaultsTest, AJobEndingOnABusyDatabaseIsRecordedWhenTheLockGoes) {
  ASSERT_EQ(Berth({"ls"}).exit_code, 0);  // the store exists
  // The agent works for 2 s; the lock is taken while it runs and held 9 s, well past the
  // moment the job ends and the 5 s busy timeout of each write.
  RunningProgram run =
      StartBerth({"run", "implement", "--", "sh", "-c", "sleep 2; echo 'int x;' > src/busy.c"});
  std::string id;
  ASSERT_TRUE(WaitUntil(
      [&] {
        json jobs = ListJson();
        if (jobs.empty() || GetStr(jobs[0], "state") != "running") return false;
        id = GetStr(jobs[0], "id");
        return true;
      },
      kStateWait));
  RawDb holder(DbPath());
  ASSERT_EQ(holder.error(), "");
  ASSERT_TRUE(holder.Exec("BEGIN IMMEDIATE").empty());
  const auto locked_at = std::chrono::steady_clock::now();
  // Readers are not held up by a writer (WAL): `berth ls` and `show` answer meanwhile.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  RunResult ls = Berth({"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.Describe();
  EXPECT_TRUE(Contains(ls.out, id)) << ls.Describe();
  RunResult show = Berth({"show", id});
  EXPECT_EQ(show.exit_code, 0) << show.Describe();
  std::this_thread::sleep_until(locked_at + std::chrono::seconds(9));
  ASSERT_TRUE(holder.Exec("ROLLBACK").empty());

  RunResult result = run.Wait();
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "berth: job " + id + ": could not write the job's"))
      << result.Describe();
  EXPECT_TRUE(Contains(result.err, "job store " + DbPath() + " is busy")) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "after the store was busy for")) << result.Describe();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_TRUE(Get(job, "receipt").is_object()) << job.dump(2);
  EXPECT_TRUE(BranchExists(id));
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/busy.c"}), "int x;");
}

// Issue 27 (nothing stops on a busy store): `berth ls` on a database another process holds
// locked, with a job for its stale sweep to mark, still lists (WAL lets it read; the sweep's
// write waits out the busy timeout and is left to the next command), and the first command
// once the lock goes marks the job.
TEST_F(StoreFaultsTest, ListingOnABusyDatabaseWorksWhenTheStaleSweepCannotWrite) {
  const std::string id = StartSleepingJob(Token());
  std::optional<int64_t> supervisor = GetInt(ShowJson(id), "owner.pid");
  ASSERT_TRUE(supervisor.has_value());
  const std::string cmdline = ReadText("/proc/" + std::to_string(*supervisor) + "/cmdline");
  ASSERT_TRUE(Contains(cmdline, "supervise") && Contains(cmdline, state())) << cmdline;

  RawDb holder(DbPath());
  ASSERT_EQ(holder.error(), "");
  ASSERT_TRUE(holder.Exec("BEGIN IMMEDIATE").empty());
  ASSERT_EQ(::kill(static_cast<pid_t>(*supervisor), SIGKILL), 0) << std::strerror(errno);
  ASSERT_TRUE(
      WaitUntil([&] { return !PathExists("/proc/" + std::to_string(*supervisor)); }, kStateWait));
  RunResult ls = Berth({"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.Describe();
  EXPECT_TRUE(Contains(ls.out, id)) << ls.Describe();
  ASSERT_TRUE(holder.Exec("ROLLBACK").empty());

  json job = WaitForState(id, "stale");
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "workspace kept")) << job.dump(2);
}

// Issue 27: a database berth could not write made SQLite fall back to reading it without a
// word; a job then started and could record nothing. The store is refused at once, naming the
// file and what to do, and no job is created.
TEST_F(StoreFaultsTest, AReadOnlyStoreRefusesTheJobWithTheFile) {
  ASSERT_EQ(Berth({"ls"}).exit_code, 0);  // the store exists
  ASSERT_TRUE(PathExists(DbPath()));

  RunResult run =
      BerthOnReadOnlyState({"run", "implement", "--", "sh", "-c", "echo ran > src/ran.c"});
  EXPECT_EQ(run.exit_code, 71) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "job store " + DbPath() + " is read-only")) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "writable")) << run.Describe();
  EXPECT_FALSE(Contains(run.err, "Abort")) << run.Describe();

  RunResult ls = BerthOnReadOnlyState({"ls"});
  EXPECT_EQ(ls.exit_code, 71) << ls.Describe();
  EXPECT_TRUE(Contains(ls.err, "job store " + DbPath() + " is read-only")) << ls.Describe();

  // Writable again: no job was ever created, so no agent ran.
  EXPECT_TRUE(ListJson().empty()) << Berth({"ls"}).Describe();
}

// Issue 27: an agent filling the state directory's disk (where its workspace, its output and
// the store live) left a job that could not record its end, and a workspace whose files were
// cut short. The job now ends failed naming the disk, nothing of it is collected, its
// workspace is kept, and the store stays whole and usable.
TEST_F(StoreFaultsTest, AFullStateDiskEndsTheJobNamingTheDiskAndKeepsItsWork) {
  if (!MountSmallStateDisk()) return;

  RunResult run = OnDisk({"run", "implement", "--", "sh", "-c",
                          "echo 'int kept;' > src/kept.c; head -c 100000000 /dev/zero > src/big; "
                          "echo written $?; sleep 1"});
  EXPECT_EQ(run.exit_code, 1) << run.Describe();
  RunResult listed = OnDisk({"ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.Describe();
  json jobs = ParseJson(listed.out);
  ASSERT_TRUE(jobs.is_array() && jobs.size() == 1) << listed.Describe();
  const std::string id = GetStr(jobs[0], "id");
  RunResult shown = OnDisk({"show", id, "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.Describe();
  json job = ParseJson(shown.out);
  EXPECT_EQ(GetStr(job, "state"), "failed") << job.dump(2);
  const std::string reason = GetStr(job, "state_reason");
  EXPECT_TRUE(Contains(
      reason, "no space left on device on the filesystem of the state directory " + state()))
      << reason;
  EXPECT_TRUE(Contains(reason, "workspace kept at " + JobDir(id))) << reason;
  EXPECT_TRUE(Get(job, "commit").is_null()) << job.dump(2);
  EXPECT_FALSE(BranchExists(id));
  EXPECT_EQ(GetStr(job, "receipt.error.cause"), "disk-full") << job.dump(2);
  // The receipt file is whole JSON (written beside and renamed), and says the same.
  json receipt = ParseJson(ReadText(Seen(JobDir(id) + "/receipt.json")));
  EXPECT_EQ(GetStr(receipt, "job.state"), "failed") << receipt.dump(2);
  // The workspace is kept with what the agent wrote.
  const std::string workspace =
      Seen(JobDir(id) + (GetStr(receipt, "workspace.backend") == "copy" ? "/copy" : "/upper"));
  EXPECT_EQ(ReadText(workspace + "/src/kept.c"), "int kept;\n");
  // The room kept for the job's end is given back.
  EXPECT_FALSE(PathExists(Seen(JobDir(id) + "/end-reserve")));

  // The store is whole and every command works on it.
  {
    // SQLite resolves the /proc/PID/root link of an unprivileged run to the host's view:
    // the check reads a copy of the files the commands left (a WAL too, if any).
    const std::string copy = root() + "/db-copy";
    ASSERT_TRUE(sys::MakeDirs(copy, 0700));
    for (const char* name : {"berth.db", "berth.db-wal"}) {
      if (Result<std::string> bytes = sys::ReadFile(Seen(state() + "/" + name))) {
        ASSERT_TRUE(WriteText(copy + "/" + name, *bytes, 0600));
      }
    }
    RawDb db(copy + "/berth.db");
    ASSERT_EQ(db.error(), "");
    EXPECT_EQ(db.Exec("PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  }
  RunResult land = OnDisk({"land", id});
  EXPECT_NE(land.exit_code, 0) << land.Describe();
  EXPECT_LT(land.exit_code, 128) << land.Describe();
  RunResult gc = OnDisk({"gc", "--dry-run"});
  EXPECT_EQ(gc.exit_code, 0) << gc.Describe();
  // No temporary file of a half-written record is left to be taken for one.
  for (const std::string& name :
       sys::ListDir(Seen(JobDir(id))).value_or(std::vector<std::string>{}))
    EXPECT_FALSE(Contains(name, ".tmp-")) << name;

  // With space freed, the next job runs and commits as usual.
  ASSERT_EQ(::unlink((workspace + "/src/big").c_str()), 0) << std::strerror(errno);
  RunResult next = OnDisk({"run", "implement", "--", "sh", "-c", "echo 'int y;' > src/next.c"});
  EXPECT_EQ(next.exit_code, 0) << next.Describe();
}

}  // namespace
}  // namespace berth::e2e
