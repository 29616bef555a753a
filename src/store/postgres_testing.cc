#include "store/postgres_testing.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include "store/pg_conn.h"
#include "sys/command.h"
#include "sys/fs.h"
#include "sys/net.h"

namespace berth::store::testing {

namespace {

constexpr char kPostgresRoot[] = "/usr/lib/postgresql";
constexpr char kSuperuser[] = "berth_test";
constexpr int kCommandTimeoutMs = 120'000;

const std::vector<std::pair<std::string, std::string>> kCommandEnv = {
    {"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}, {"LANG", "C"}};

// The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl.
Result<std::string> FindBinDir() {
  Result<std::vector<std::string>> versions = sys::ListDir(kPostgresRoot);
  std::optional<int> newest;
  if (versions) {
    for (const std::string& name : *versions) {
      const std::string bin = std::string(kPostgresRoot) + "/" + name + "/bin";
      if (!sys::Exists(bin + "/initdb") || !sys::Exists(bin + "/pg_ctl")) continue;
      const int version = std::atoi(name.c_str());
      if (!newest || version > *newest) newest = version;
    }
  }
  if (!newest) {
    return Error(Cause::kNotFound,
                 std::string("no PostgreSQL server binaries (initdb, pg_ctl) under ") +
                     kPostgresRoot + "/*/bin");
  }
  return std::string(kPostgresRoot) + "/" + std::to_string(*newest) + "/bin";
}

// A TCP port on 127.0.0.1 that nothing listens on right now.
Result<int> FreePort() {
  sys::SocketAddress any{*sys::IpAddress::Parse("127.0.0.1"), 0};
  sys::UniqueFd socket = TRY(sys::ListenTcp(any, 1));
  sys::SocketAddress bound = TRY(sys::LocalAddress(socket.get()));
  return static_cast<int>(bound.port);
}

// "postgresql://u@h:p/old?x" with the database replaced: "postgresql://u@h:p/name?x".
std::string WithDatabase(const std::string& url, const std::string& name) {
  const size_t authority = url.find("://") + 3;
  const size_t path = url.find_first_of("/?#", authority);
  if (path == std::string::npos) return url + "/" + name;
  if (url[path] != '/') return url.substr(0, path) + "/" + name + url.substr(path);
  const size_t rest = url.find_first_of("?#", path);
  return url.substr(0, path) + "/" + name + (rest == std::string::npos ? "" : url.substr(rest));
}

Status Append(const std::string& path, const std::string& text, std::ios::openmode mode) {
  std::ofstream out(path, mode);
  out << text;
  out.close();
  if (!out) return Error(Cause::kSystem, "writing " + path);
  return {};
}

}  // namespace

// A throwaway cluster: initdb'd and started on construction, stopped and removed on Stop.
class Cluster {
 public:
  static Result<std::unique_ptr<Cluster>> Start() {
    const std::string bin = TRY(FindBinDir());
    auto cluster = std::unique_ptr<Cluster>(new Cluster(bin));
    TRY(cluster->Init());
    // Another process may take the free port between the probe and the server's bind.
    Status started = Error(Cause::kInternal, "not started");
    for (int attempt = 0; attempt < 3 && !started; ++attempt) started = cluster->Launch();
    if (!started) return started.error();
    return cluster;
  }

  ~Cluster() { Stop(); }

  const std::string& admin_url() const { return admin_url_; }
  std::string log_path() const { return dir_ + "/server.log"; }

  void Stop() {
    if (running_) {
      static_cast<void>(
          Run({bin_ + "/pg_ctl", "-D", data_, "-m", "immediate", "-w", "-s", "stop"}));
      running_ = false;
    }
    if (!dir_.empty()) static_cast<void>(sys::RemoveTree(dir_));
    dir_.clear();
  }

  // Stops the server as an operator would (`pg_ctl stop -m fast`: every session is ended),
  // keeping its data.
  Status Pause() {
    TRY(RunOrFail({bin_ + "/pg_ctl", "-D", data_, "-m", "fast", "-w", "-t", "60", "-s", "stop"},
                  "pg_ctl stop"));
    running_ = false;
    return {};
  }
  // Starts it again, on the same port, with the same data.
  Status Resume() {
    TRY(RunOrFail({bin_ + "/pg_ctl", "-D", data_, "-l", dir_ + "/server.log", "-w", "-t", "60",
                   "-s", "start"},
                  "pg_ctl start"));
    running_ = true;
    return {};
  }
  // `pg_ctl restart -m fast`.
  Status Restart() {
    TRY(RunOrFail({bin_ + "/pg_ctl", "-D", data_, "-l", dir_ + "/server.log", "-m", "fast", "-w",
                   "-t", "60", "-s", "restart"},
                  "pg_ctl restart"));
    running_ = true;
    return {};
  }

 private:
  explicit Cluster(std::string bin) : bin_(std::move(bin)) {}

  // Runs a PostgreSQL program: as the `postgres` user when this process is root, because
  // initdb and the server refuse to run as root.
  Result<sys::CommandResult> Run(std::vector<std::string> argv) {
    if (::geteuid() == 0) {
      const std::string runuser =
          TRY(sys::FindExecutable("runuser", "/usr/sbin:/usr/bin:/sbin:/bin"));
      argv.insert(argv.begin(), {runuser, "-u", "postgres", "--"});
    }
    return sys::RunCommand(argv, kCommandEnv, "/", kCommandTimeoutMs);
  }

  Status RunOrFail(const std::vector<std::string>& argv, const std::string& what) {
    sys::CommandResult result = TRY(Run(argv));
    if (result.status.ShellCode() != 0 || result.timed_out) {
      return Error(Cause::kInternal, what + " failed (exit " +
                                         std::to_string(result.status.ShellCode()) +
                                         "): " + result.output);
    }
    return {};
  }

  Status Init() {
    dir_ = TRY(sys::MakeTempDir("/tmp", "berth-postgres-"));
    data_ = dir_ + "/data";
    if (::geteuid() == 0) {
      const passwd* user = ::getpwnam("postgres");
      if (user == nullptr) {
        return Error(Cause::kNotFound,
                     "running as root, the test cluster needs the `postgres` user to run as");
      }
      if (::chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
        return Error::FromErrno("chown " + dir_ + " to postgres", errno);
      }
    }
    TRY(RunOrFail({bin_ + "/initdb", "-D", data_, "-A", "trust", "-U", kSuperuser, "-E", "UTF8",
                   "--locale=C", "--no-sync", "--no-instructions"},
                  "initdb"));
    // Loopback only, whatever initdb wrote.
    return Append(data_ + "/pg_hba.conf", "local all all trust\nhost all all 127.0.0.1/32 trust\n",
                  std::ios::trunc);
  }

  Status Launch() {
    const int port = TRY(FreePort());
    TRY(Append(data_ + "/postgresql.conf",
               "\nlisten_addresses = '127.0.0.1'\nport = " + std::to_string(port) +
                   "\nunix_socket_directories = '" + dir_ +
                   "'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
               std::ios::app));
    Status started = RunOrFail({bin_ + "/pg_ctl", "-D", data_, "-l", dir_ + "/server.log", "-w",
                                "-t", "60", "-s", "start"},
                               "pg_ctl start");
    if (!started) {
      Result<std::string> log = sys::ReadFile(dir_ + "/server.log");
      Error error = started.error();
      return error.AddContext(log ? "server log: " + *log : "pg_ctl");
    }
    running_ = true;
    admin_url_ = std::string("postgresql://") + kSuperuser + "@127.0.0.1:" + std::to_string(port) +
                 "/postgres";
    return {};
  }

  std::string bin_;
  std::string dir_;
  std::string data_;
  std::string admin_url_;
  bool running_ = false;
};

namespace {

// Starts the cluster on first use and stops it when the test binary ends. Forked test
// children leave with _exit and never tear it down.
class ClusterEnvironment : public ::testing::Environment {
 public:
  Result<std::string> AdminUrl() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const char* url = std::getenv("BERTH_TEST_POSTGRES_URL"); url != nullptr && *url != '\0') {
      return std::string(url);
    }
    if (!started_) {
      started_ = true;
      Result<std::unique_ptr<Cluster>> cluster = Cluster::Start();
      if (cluster) {
        cluster_ = std::move(*cluster);
      } else {
        error_ = cluster.error();
      }
    }
    if (error_) return *error_;
    return cluster_->admin_url();
  }

  void TearDown() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cluster_) cluster_->Stop();
    cluster_.reset();
  }

 private:
  std::mutex mutex_;
  bool started_ = false;
  std::unique_ptr<Cluster> cluster_;
  std::optional<Error> error_;
};

// gtest owns registered environments and deletes them at exit.
ClusterEnvironment* const g_cluster =
    static_cast<ClusterEnvironment*>(::testing::AddGlobalTestEnvironment(new ClusterEnvironment));

std::atomic<int> g_next_database{0};

}  // namespace

Result<std::unique_ptr<PostgresDatabase>> PostgresDatabase::Create() {
  const std::string admin_url = TRY(g_cluster->AdminUrl());
  const std::string name = "berth_test_" + std::to_string(::getpid()) + "_" +
                           std::to_string(g_next_database.fetch_add(1));
  PgConn admin = TRY(PgConn::Open(admin_url, {}));
  // The name is ours ([a-z0-9_]); identifiers cannot be parameters.
  TRY(admin.Exec("CREATE DATABASE " + name));
  return std::unique_ptr<PostgresDatabase>(
      new PostgresDatabase(admin_url, name, WithDatabase(admin_url, name)));
}

PostgresDatabase::~PostgresDatabase() {
  Result<PgConn> admin = PgConn::Open(admin_url_, {});
  if (admin) static_cast<void>(admin->Exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"));
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::Launch() {
  Result<std::unique_ptr<Cluster>> cluster = Cluster::Start();
  if (!cluster) return cluster.error();
  auto server = std::unique_ptr<PostgresServer>(new PostgresServer());
  server->cluster_ = std::move(*cluster);
  return server;
}

PostgresServer::~PostgresServer() {
  if (cluster_) cluster_->Stop();
}

Result<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  PgConn admin = TRY(PgConn::Open(cluster_->admin_url(), {}));
  TRY(admin.Exec("CREATE DATABASE " + name));  // a name of the caller's, [a-z0-9_]
  return WithDatabase(cluster_->admin_url(), name);
}

Status PostgresServer::LogStatementsOf(const std::string& name) {
  PgConn admin = TRY(PgConn::Open(cluster_->admin_url(), {}));
  TRY(admin.Exec("ALTER DATABASE " + name + " SET log_statement = 'all'"));
  return {};
}

Result<std::string> PostgresServer::Log() const { return sys::ReadFile(cluster_->log_path()); }

Status PostgresServer::Stop() { return cluster_->Pause(); }
Status PostgresServer::Start() { return cluster_->Resume(); }
Status PostgresServer::Restart() { return cluster_->Restart(); }

bool PostgresRequired() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::string NoPostgresMessage(const std::string& why) {
  return "\n*** PostgreSQL store tests " + std::string(PostgresRequired() ? "FAILED" : "SKIPPED") +
         ": " + why +
         "\n*** Install the server binaries (apt-get install postgresql, or scripts/install-deps)"
         " or set BERTH_TEST_POSTGRES_URL=postgresql://USER@HOST/DB of a role that may create "
         "databases.\n";
}

}  // namespace berth::store::testing
