// The shared queue's costs (bench/queue, docs/workers.md), in one run:
//   1. claims per second: N jobs for workers, K processes claiming until the queue is empty,
//      on PostgreSQL (a throwaway cluster, or BERTH_TEST_POSTGRES_URL) and on SQLite;
//   2. the end-to-end overhead per job, job by job and alternating: a `berth run` on the
//      SQLite store, then a `berth run --queue` to PostgreSQL that a resident `berth worker`
//      runs (submission to the job's end in the store: claim, mirror, bundle included), with
//      the pairwise difference, and `berth run --queue` alone: the warm case;
//   3. `berth ls` on the PostgreSQL store against the SQLite one, alternating, each holding
//      the same jobs;
//   4. the cold case: the first job of each path, on a state dir that has no snapshot yet and
//      for the worker no mirror either (its `git clone --no-checkout` of the source), next to
//      a plain `git clone --no-checkout` of the same repository.
// Figures are medians with the min-max range. A gtest binary only for its PostgreSQL cluster
// fixture (src/store/postgres_testing.h); it is not a test and no ctest runs it. Configured by
// the environment, which bench/queue sets:
//   QUEUE_BENCH_JOBS (default 2000), QUEUE_BENCH_CLAIMERS (4), QUEUE_BENCH_E2E_JOBS (20),
//   QUEUE_BENCH_FILES (files in the repository besides src/main.c, default 0), BERTH (the
//   berth binary), TMPDIR (where its files go, default /var/tmp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "store/job_record.h"
#include "store/open_store.h"
#include "store/postgres_testing.h"
#include "store/store.h"
#include "sys/atomic_file.h"
#include "sys/command.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

// Where the benchmark's files go: $TMPDIR, else /var/tmp (a disk, as a state dir is).
std::string TempRoot() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir == '/' ? tmpdir : "/var/tmp";
}

// The store at `location`; the benchmark cannot go on without it.
std::unique_ptr<store::Store> MustOpen(const std::string& location) {
  Result<std::unique_ptr<store::Store>> store = store::OpenStore(location);
  CHECK(store.has_value());
  return std::move(*store);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

store::JobRecord ForWorkers(int i) {
  store::JobRecord job;
  char id[14];
  std::snprintf(id, sizeof id, "q%012d", i);
  job.id = id;
  job.repo = "/srv/app";
  job.agent = "implement";
  job.provider = "command";
  job.base = std::string(40, 'a');
  job.branch = std::string("berth/") + id;
  job.created_at_ms = 1000 + i;
  job.job_dir = std::string("/state/jobs/") + id;
  job.backend = "overlay";
  job.policy_hash = std::string(64, 'b');
  job.request_json = "{}";
  job.source = "/srv/git/app.git";
  return job;
}

// Claims per second with `claimers` processes on the store at `location`.
double ClaimRate(const std::string& location, int jobs, int claimers) {
  {
    std::unique_ptr<store::Store> store = MustOpen(location);
    for (int i = 0; i < jobs; ++i) CHECK(store->CreateJob(ForWorkers(i)).has_value());
  }
  int start[2];
  CHECK(::pipe(start) == 0);
  std::vector<pid_t> children;
  for (int c = 0; c < claimers; ++c) {
    pid_t pid = ::fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      ::close(start[1]);
      std::unique_ptr<store::Store> store = MustOpen(location);
      char byte;
      if (::read(start[0], &byte, 1) != 0) ::_exit(2);
      store::ClaimRequest request;
      request.worker_id = "bench-" + std::to_string(c);
      request.owner = store::Owner{"bench", 1000 + c, 1};
      for (;;) {
        Result<std::optional<store::JobRecord>> claimed = store->ClaimJob(request);
        if (!claimed && claimed.error().cause() == Cause::kBusy) continue;
        if (!claimed) ::_exit(3);
        if (!claimed->has_value()) break;
      }
      store.reset();
      ::_exit(0);
    }
    children.push_back(pid);
  }
  const auto begin = std::chrono::steady_clock::now();
  ::close(start[1]);
  for (pid_t pid : children) {
    int status = 0;
    CHECK(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double seconds = Seconds(begin);
  ::close(start[0]);
  std::unique_ptr<store::Store> store = MustOpen(location);
  Result<std::vector<store::JobRecord>> all = store->ListJobs("", false, 0);
  CHECK(all.has_value());
  int claimed = 0;
  for (const store::JobRecord& job : *all) claimed += job.attempt == 1 ? 1 : 0;
  CHECK(claimed == jobs);  // each exactly once
  return jobs / seconds;
}

TEST(QueueBench, ClaimsPerSecond) {
  const int jobs = EnvInt("QUEUE_BENCH_JOBS", 2000);
  const int claimers = EnvInt("QUEUE_BENCH_CLAIMERS", 4);
  std::unique_ptr<store::testing::PostgresDatabase> db;
  BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(db);
  const double pg = ClaimRate(db->url(), jobs, claimers);
  Result<std::string> dir = sys::MakeTempDir(TempRoot(), "queue-bench-");
  ASSERT_TRUE(dir.has_value());
  const double sqlite = ClaimRate(*dir + "/berth.db", jobs, claimers);
  static_cast<void>(sys::RemoveTree(*dir));
  std::printf("claims: %d jobs, %d claimers\n", jobs, claimers);
  std::printf("  postgresql  %8.0f claims/s\n", pg);
  std::printf("  sqlite      %8.0f claims/s\n", sqlite);
  std::printf("target: >= 200 claims/s on PostgreSQL: %s\n", pg >= 200 ? "MET" : "NOT MET");
}

struct Env {
  std::vector<std::pair<std::string, std::string>> vars;
};

sys::CommandResult RunOrSay(const std::vector<std::string>& argv, const Env& env,
                            const std::string& cwd) {
  Result<sys::CommandResult> result = sys::RunCommand(argv, env.vars, cwd, 10 * 60 * 1000);
  CHECK(result.has_value());
  if (result->status.signaled || result->status.code != 0)
    std::fprintf(stderr, "failed: %s\n%s\n", argv[0].c_str(), result->output.c_str());
  return *result;
}

// Milliseconds of each run, and how they are summarised: median, min and max.
struct Series {
  std::vector<double> ms;
  double Median() const {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty()) return 0;
    const size_t mid = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
  double Min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
  double Max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

void PrintSeries(const char* name, const Series& series, const char* unit = "ms") {
  std::printf("  %-44s %8.1f %s  (%.1f-%.1f, %zu runs)\n", name, series.Median(), unit,
              series.Min(), series.Max(), series.ms.size());
}

void PrintRatio(const char* name, const Series& series) {
  std::printf("  %-44s %8.2fx     (%.2f-%.2f, %zu pairs)\n", name, series.Median(), series.Min(),
              series.Max(), series.ms.size());
}

// The milliseconds `argv` takes; the benchmark stops when it fails.
double TimeCommand(const std::vector<std::string>& argv, const Env& env, const std::string& cwd,
                   std::string* output = nullptr) {
  const auto begin = std::chrono::steady_clock::now();
  sys::CommandResult result = RunOrSay(argv, env, cwd);
  const double ms = Seconds(begin) * 1000;
  CHECK(!result.status.signaled && result.status.code == 0);
  if (output != nullptr) *output = result.output;
  return ms;
}

// `berth worker` running in the background until Stop.
class ResidentWorker {
 public:
  ResidentWorker(const std::vector<std::string>& argv, const Env& env, const std::string& log) {
    std::vector<std::string> environment;
    for (const auto& [name, value] : env.vars) environment.push_back(name + "=" + value);
    std::fflush(nullptr);  // or the child's freopen writes what this process printed so far
    pid_ = ::fork();
    CHECK(pid_ >= 0);
    if (pid_ == 0) {
      FILE* out = std::freopen(log.c_str(), "w", stdout);
      if (out == nullptr || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      std::vector<char*> envp;
      for (const std::string& var : environment) envp.push_back(const_cast<char*>(var.c_str()));
      envp.push_back(nullptr);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
  }
  ~ResidentWorker() { Stop(); }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// The id in `berth run --queue`'s "berth: job ID is queued for workers" line.
std::string QueuedJobId(const std::string& output) {
  const std::string marker = "job ";
  size_t at = output.find(marker);
  CHECK(at != std::string::npos);
  at += marker.size();
  return output.substr(at, output.find(' ', at) - at);
}

// Waits, reading the store every millisecond, until job `id` ended; false when it failed.
bool AwaitEnd(store::Store& store, const std::string& id) {
  for (;;) {
    Result<std::optional<store::JobRecord>> job = store.GetJob(id);
    CHECK(job.has_value());
    if (job->has_value() && store::IsTerminal((*job)->state))
      return (*job)->state == store::JobState::kCompleted;
    ::usleep(1000);
  }
}

TEST(QueueBench, EndToEndOverheadPerJob) {
  const char* berth_env = std::getenv("BERTH");
  ASSERT_NE(berth_env, nullptr) << "set BERTH to the berth binary";
  const std::string berth = berth_env;
  const char* floor_env = std::getenv("PG_FLOOR");
  ASSERT_NE(floor_env, nullptr) << "set PG_FLOOR to the pg_floor binary";
  const std::string floor = floor_env;
  const int jobs = EnvInt("QUEUE_BENCH_E2E_JOBS", 20);
  std::unique_ptr<store::testing::PostgresDatabase> db;
  BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(db);

  Result<std::string> dir = sys::MakeTempDir(TempRoot(), "queue-bench-e2e-");
  ASSERT_TRUE(dir.has_value());
  const std::string repo = *dir + "/repo";
  const std::string home = *dir + "/home";
  ASSERT_TRUE(sys::MakeDirs(repo + "/.berth", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(repo + "/src", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(home, 0700).has_value());
  Env env{{{"PATH", "/usr/local/bin:/usr/bin:/bin"},
           {"HOME", home},
           {"GIT_CONFIG_NOSYSTEM", "1"},
           {"BERTH_STATE_DIR", *dir + "/state"}}};
  ASSERT_TRUE(sys::WriteFileAtomic(repo + "/.berth/policy.toml",
                                   "version = 1\n[defaults]\nmax_concurrent_jobs = 8\n"
                                   "[landing]\nallow_unverified = true\n"
                                   "[agents.implement]\ncapability = \"write\"\n"
                                   "provider = \"command\"\nwritable = [\"src/**\"]\n",
                                   0644)
                  .has_value());
  ASSERT_TRUE(sys::WriteFileAtomic(repo + "/src/main.c", "int main(void) { return 0; }\n", 0644)
                  .has_value());
  // A bigger tree for the cold case: 100 files per directory, about 1 KiB each.
  const int files = EnvInt("QUEUE_BENCH_FILES", 0);
  for (int i = 0; i < files; ++i) {
    const std::string dir = repo + "/lib/d" + std::to_string(i / 100);
    if (i % 100 == 0) {
      ASSERT_TRUE(sys::MakeDirs(dir, 0755).has_value());
    }
    std::string text;
    for (int line = 0; line < 16; ++line)
      text += "int f" + std::to_string(i) + "_" + std::to_string(line) + "(void) { return " +
              std::to_string(i * 16 + line) + "; }\n";
    ASSERT_TRUE(
        sys::WriteFileAtomic(dir + "/f" + std::to_string(i) + ".c", text, 0644).has_value());
  }
  const std::string git = *sys::FindExecutable("git", "/usr/bin:/bin");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"init", "-q", "-b", "main"},
        {"-c", "user.name=bench", "-c", "user.email=bench@berth.invalid", "add", "-A"},
        {"-c", "user.name=bench", "-c", "user.email=bench@berth.invalid", "-c", "gc.auto=0",
         "commit", "-q", "-m", "base"},
        // Packed, as a real repository is, and no `git gc --auto` behind the benchmark's back.
        {"repack", "-adq"},
        {"prune-packed"},
        {"config", "gc.auto", "0"}}) {
    std::vector<std::string> argv = {git};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(RunOrSay(argv, env, repo).status.code, 0);
  }
  auto job_argv = [&](bool queue, int i) {
    std::vector<std::string> argv = {berth};
    if (queue) argv.insert(argv.end(), {"--store", db->url()});
    argv.push_back("run");
    if (queue) argv.push_back("--queue");
    argv.insert(argv.end(), {"implement", "--", "sh", "-c",
                             "echo " + std::to_string(i) + " > src/f" + std::to_string(i) + ".c"});
    return argv;
  };
  // One of each first, so that neither path pays the first snapshot in the warm figures;
  // timed, they are the cold case.
  const double cold_local = TimeCommand(job_argv(false, -1), env, repo);

  Env worker_env = env;
  worker_env.vars.erase(worker_env.vars.begin() + 3);  // the submitter's state dir
  worker_env.vars.emplace_back("BERTH_STATE_DIR", *dir + "/worker-state");
  const std::vector<std::string> drain = {berth,    "--store",     db->url(),
                                          "worker", "--drain",     "--poll",
                                          "50",     "--repo-root", *dir + "/mirrors"};
  auto begin = std::chrono::steady_clock::now();
  ASSERT_EQ(RunOrSay(job_argv(true, -2), env, repo).status.code, 0);
  ASSERT_EQ(RunOrSay(drain, worker_env, repo).status.code, 0);  // the mirror, the first snapshot
  const double cold_queued = Seconds(begin);
  begin = std::chrono::steady_clock::now();
  ASSERT_EQ(RunOrSay({git, "clone", "-q", "--no-checkout", repo, *dir + "/plain-clone"}, env, *dir)
                .status.code,
            0);
  const double plain_clone = Seconds(begin);

  // The warm case, job by job and alternating, so that both paths see the same machine: a
  // local `berth run`, then a `berth run --queue` that a resident worker (woken by the
  // queue's notification) runs, timed from the submission to the job's end in the store.
  std::unique_ptr<store::Store> watch = MustOpen(db->url());
  ASSERT_EQ(RunOrSay({floor, db->url(), "prepare", repo}, env, repo).status.code, 0);
  ResidentWorker worker(
      {berth, "--store", db->url(), "worker", "--poll", "50", "--repo-root", *dir + "/mirrors"},
      worker_env, *dir + "/worker.log");
  Series local, submit, queued, overhead, submit_floor, over_floor;
  int failed = 0;
  for (int i = 0; i < jobs; ++i) {
    local.ms.push_back(TimeCommand(job_argv(false, i), env, repo));
    begin = std::chrono::steady_clock::now();
    std::string output;
    submit.ms.push_back(TimeCommand(job_argv(true, 1000 + i), env, repo, &output));
    failed += AwaitEnd(*watch, QueuedJobId(output)) ? 0 : 1;
    queued.ms.push_back(Seconds(begin) * 1000);
    overhead.ms.push_back(queued.ms.back() - local.ms.back());
    // While the worker is idle again, as it was for the submission.
    submit_floor.ms.push_back(TimeCommand({floor, db->url(), "submit", repo}, env, repo));
    over_floor.ms.push_back(submit.ms.back() - submit_floor.ms.back());
  }
  worker.Stop();
  EXPECT_EQ(failed, 0) << "see " << *dir << "/worker.log";

  // `berth ls` on each store, which now hold the same number of jobs, alternating.
  Series ls_sqlite, ls_postgres, ls_ratio, ls_floor, ls_floor_ratio;
  const int ls_runs = std::max(jobs, 10);
  for (int i = 0; i < ls_runs; ++i) {
    ls_sqlite.ms.push_back(TimeCommand({berth, "ls"}, env, repo));
    ls_postgres.ms.push_back(TimeCommand({berth, "--store", db->url(), "ls"}, env, repo));
    ls_ratio.ms.push_back(ls_postgres.ms.back() / ls_sqlite.ms.back());
    ls_floor.ms.push_back(TimeCommand({floor, db->url(), "ls", repo}, env, repo));
    ls_floor_ratio.ms.push_back(ls_floor.ms.back() / ls_sqlite.ms.back());
  }
  if (failed == 0) static_cast<void>(sys::RemoveTree(*dir));

  std::printf(
      "end to end: %d jobs each way, alternating, each changing one file; median (min-max)\n",
      jobs);
  PrintSeries("berth run (sqlite)", local);
  PrintSeries("run --queue + resident worker (postgresql)", queued);
  PrintSeries("  of which berth run --queue", submit);
  PrintSeries("    the floor: libpq, a connection, its 3 statements", submit_floor);
  PrintSeries("    berth run --queue over the floor (pairwise)", over_floor);
  PrintSeries("overhead per job (pairwise difference)", overhead);
  std::printf("berth ls, the same number of jobs in each store, alternating\n");
  PrintSeries("sqlite", ls_sqlite);
  PrintSeries("postgresql", ls_postgres);
  PrintRatio("postgresql / sqlite (pairwise)", ls_ratio);
  PrintSeries("the floor: libpq, a connection, its 4 statements", ls_floor);
  PrintRatio("the floor / sqlite (pairwise)", ls_floor_ratio);
  std::printf("cold: the first job of each path, %d files in the repository\n", files + 2);
  std::printf("  berth run (its first snapshot)         %8.1f ms\n", cold_local);
  std::printf("  run --queue + a new worker (its clone and first snapshot) %8.1f ms\n",
              cold_queued * 1000);
  std::printf("    git clone --no-checkout alone        %8.1f ms\n", plain_clone * 1000);
  std::printf("target: overhead <= 30 ms/job: %s\n", overhead.Median() <= 30 ? "MET" : "NOT MET");
  // A target below its floor cannot be met by any berth with a connection per command: the
  // verdict says so, with the floor, and still fails.
  std::printf("target: berth run --queue <= 15 ms: %s (the floor is %.1f ms)\n",
              submit.Median() <= 15 ? "MET" : "NOT MET", submit_floor.Median());
  std::printf("target: berth ls on postgresql <= 1.5x sqlite: %s (the floor is %.2fx)\n",
              ls_ratio.Median() <= 1.5 ? "MET" : "NOT MET", ls_floor_ratio.Median());
}

}  // namespace
}  // namespace berth
