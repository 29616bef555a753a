#include "env/postgres.h"

#include <algorithm>

#include "sys/fs.h"

namespace berth::env {

namespace {

constexpr const char* kRoot = "/usr/lib/postgresql";

bool IsNumber(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<Postgres> FindPostgres() {
  std::vector<std::string> majors;
  if (sys::TypeOf(kRoot) == sys::FileType::kDirectory) {
    for (const std::string& name : TRY(sys::ListDir(kRoot))) {
      const std::string bin = std::string(kRoot) + "/" + name + "/bin";
      if (IsNumber(name) && sys::Exists(bin + "/initdb") && sys::Exists(bin + "/postgres"))
        majors.push_back(name);
    }
  }
  if (majors.empty())
    return Error(Cause::kUnavailable,
                 "a postgresql service needs PostgreSQL's server (initdb and postgres under " +
                     std::string(kRoot) + "/<version>/bin), and this host has none",
                 0, "install it, e.g. `apt-get install postgresql`");
  std::sort(majors.begin(), majors.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return Postgres{std::string(kRoot) + "/" + majors.back() + "/bin", majors.back()};
}

int ServicePort(size_t index) { return 5432 + static_cast<int>(index); }

std::string ServiceDataTarget(const std::string& name) {
  return "/run/berth-services/" + name + "/data";
}

std::string ServiceDataDir(const std::string& layer_dir, const std::string& name) {
  return layer_dir + "/services/" + name + "/data";
}

std::string ServiceUrl(size_t index) {
  return std::string("postgresql://") + kServiceUser +
         "@127.0.0.1:" + std::to_string(ServicePort(index)) + "/" + kServiceDatabase;
}

std::vector<std::pair<std::string, std::string>> ServiceClientEnv(const policy::Service& service,
                                                                  size_t index) {
  std::vector<std::pair<std::string, std::string>> vars = {
      {"PGHOST", "127.0.0.1"},
      {"PGPORT", std::to_string(ServicePort(index))},
      {"PGUSER", kServiceUser},
      {"PGDATABASE", kServiceDatabase},
      {"DATABASE_URL", ServiceUrl(index)}};
  if (service.url != "DATABASE_URL") vars.push_back({service.url, ServiceUrl(index)});
  return vars;
}

std::vector<std::string> ServerArgv(const Postgres& postgres, const std::string& data_dir,
                                    int port) {
  // Its log is the command's stderr: only what keeps it from starting. (LOG, which
  // log_min_messages ranks above ERROR, would tell every agent of each start and stop.)
  const std::vector<std::string> settings = {
      "listen_addresses=127.0.0.1", "unix_socket_directories=", "fsync=off",
      "full_page_writes=off",       "synchronous_commit=off",   "log_checkpoints=off",
      "log_min_messages=fatal"};
  std::vector<std::string> argv = {postgres.postgres(), "-D", data_dir, "-p", std::to_string(port)};
  for (const std::string& setting : settings) {
    argv.push_back("-c");
    argv.push_back(setting);
  }
  return argv;
}

std::vector<std::string> InitdbArgv(const Postgres& postgres, const std::string& data_dir) {
  return {postgres.initdb(),  "-D", data_dir, "-U",         kServiceUser,
          "--auth=trust",     "-E", "UTF8",   "--locale=C", "--no-sync",
          "--no-instructions"};
}

}  // namespace berth::env
