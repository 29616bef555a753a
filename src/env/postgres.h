// PostgreSQL as an environment's service (docs/environments.md, "Services"): the host's
// server binaries, where a service's data directory lies inside a sandbox, and what the job's
// environment says about it.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace berth::env {

// The host's PostgreSQL server (Debian's layout: /usr/lib/postgresql/<major>/bin).
struct Postgres {
  std::string bin_dir;
  std::string major;  // "15": the data directory's format
  std::string initdb() const { return bin_dir + "/initdb"; }
  std::string postgres() const { return bin_dir + "/postgres"; }
};

// The newest major version with both initdb and postgres; an error naming the package to
// install when there is none.
Result<Postgres> FindPostgres();

// The superuser and database every service's data directory is made with.
inline constexpr const char* kServiceUser = "postgres";
inline constexpr const char* kServiceDatabase = "postgres";

// The port of the `index`th service (in name order) on the job's own loopback: 5432, 5433...
int ServicePort(size_t index);
// Where the service's data directory is mounted inside a sandbox.
std::string ServiceDataTarget(const std::string& name);
// The service's data directory in a layer: <layer>/services/<name>/data.
std::string ServiceDataDir(const std::string& layer_dir, const std::string& name);
// postgresql://postgres@127.0.0.1:5432/postgres
std::string ServiceUrl(size_t index);
// The variables a service's setup commands see: PGHOST, PGPORT, PGUSER, PGDATABASE,
// DATABASE_URL and the policy's url variable, as (name, value).
std::vector<std::pair<std::string, std::string>> ServiceClientEnv(const policy::Service& service,
                                                                  size_t index);
// The server's command line for a data directory at `data_dir` inside the sandbox: TCP on
// 127.0.0.1 only (no socket file), no fsync (every copy is discarded, or built again).
std::vector<std::string> ServerArgv(const Postgres& postgres, const std::string& data_dir,
                                    int port);
// initdb's command line: the superuser `postgres`, trust authentication (the loopback is the
// job's own), UTF-8 with the C locale (no dependency on the host's locales).
std::vector<std::string> InitdbArgv(const Postgres& postgres, const std::string& data_dir);

}  // namespace berth::env
