#include "cli/doctor_command.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/json_text.h"
#include "cli/output.h"
#include "doctor/doctor.h"
#include "doctor/host_session.h"
#include "env/key.h"
#include "git/repository.h"
#include "job/repo_policy.h"
#include "policy/policy.h"
#include "store/open_store.h"
#include "store/postgres_schema.h"
#include "store/postgres_store.h"
#include "store/sqlite_schema.h"
#include "store/store.h"
#include "sys/ancestry.h"
#include "sys/fs.h"

namespace berth::cli {

namespace {

// The providers the current repository's policy names, if there is one.
std::vector<std::string> PolicyProviders(const std::string& cwd) {
  std::vector<std::string> names;
  Result<git::Repository> repo = git::Repository::Discover(cwd);
  if (!repo) return names;
  Result<policy::Policy> pol = job::LoadRepoPolicy(repo->workdir());
  if (!pol) return names;
  for (const auto& [name, agent] : pol->agents) names.push_back(agent.provider);
  return names;
}

// The current repository's environment: HEAD's layer key (docs/doctor.md, "layers").
doctor::EnvironmentProbe ProbeEnvironment(const std::string& cwd) {
  doctor::EnvironmentProbe probe;
  Result<git::Repository> repo = git::Repository::Discover(cwd);
  if (!repo) return probe;
  Result<policy::Policy> pol = job::LoadRepoPolicy(repo->workdir());
  if (!pol) return probe;
  probe.in_repository = true;
  if (!pol->environment) return probe;
  probe.has_environment = true;
  Result<std::string> head = repo->ResolveCommit("HEAD");
  if (!head) {
    probe.problem = head.error().ToString();
    return probe;
  }
  probe.head = *head;
  Result<std::string> key = env::LayerKey(*repo, *head, *pol->environment);
  if (key)
    probe.key = *key;
  else
    probe.problem = key.error().ToString();
  return probe;
}

// The closest directory above `path` that exists: where opening the store would create it.
std::string NearestExistingDir(const std::string& path) {
  std::string dir = sys::Dirname(path);
  while (!dir.empty() && dir != "/" && sys::TypeOfFollowing(dir) == sys::FileType::kMissing)
    dir = sys::Dirname(dir);
  return dir.empty() ? "." : dir;
}

// Opens the job store as every command does and reads its newest job. A SQLite file that is
// not there is left alone (opening would create it). A PostgreSQL server gets doctor's network
// timeout (at least libpq's minimum of 2 s) to accept the connection.
doctor::StoreProbe ProbeStore(const std::string& location, int timeout_ms) {
  doctor::StoreProbe probe;
  const store::StoreKind kind = store::KindOfLocation(location);
  probe.kind = kind == store::StoreKind::kPostgres ? "postgresql" : "sqlite";
  probe.location = store::DescribeLocation(location);
  if (kind == store::StoreKind::kSqlite &&
      sys::TypeOfFollowing(location) == sys::FileType::kMissing) {
    probe.missing = true;
    probe.nearest_dir = NearestExistingDir(location);
    probe.creatable = sys::WritableDir(probe.nearest_dir);
    return probe;
  }
  store::PgConn::Options options;
  options.connect_timeout_s = std::max(2, (timeout_ms + 999) / 1000);
  Result<std::unique_ptr<store::Store>> opened = kind == store::StoreKind::kPostgres
                                                     ? store::OpenPostgresStore(location, options)
                                                     : store::OpenStore(location);
  if (!opened) {
    probe.error = opened.error();
    return probe;
  }
  // Opening migrated the store to this berth's schema, or refused one from a newer berth.
  probe.schema_version = kind == store::StoreKind::kPostgres ? store::PostgresSchemaVersion()
                                                             : store::SqliteSchemaVersion();
  Result<std::vector<store::JobRecord>> newest = (*opened)->ListJobs("", false, 1);
  if (!newest) {
    probe.error = newest.error();
  } else if (!newest->empty()) {
    probe.newest_job = newest->front().id + " (" + store::JobStateName(newest->front().state) + ")";
  }
  return probe;
}

// How far up the process chain the host is looked for: berth under a shell under the host's
// tool runner under the host is four; a few more cover wrappers (npx, node, timeout).
constexpr int kAncestorDepth = 8;

int PrintHostReport(const doctor::HostReport& report, bool json) {
  const int rc = report.ok() ? 0 : kExitUnavailable;
  if (json) {
    fmt::print("{}\n", JsonText(report.ToJson(), 2));
    return rc;
  }
  std::string evidence;
  for (const std::string& e : report.facts.evidence) evidence += (evidence.empty() ? "" : ", ") + e;
  fmt::print("host: {}{}\n", report.facts.host,
             evidence.empty() ? " (no marker of an agent host)" : " (" + evidence + ")");
  auto line = [](const doctor::Item& item) {
    fmt::print("  {:<8} {:<28} {}\n", doctor::StatusName(item.status), item.name, item.detail);
    if (!item.fix.empty()) fmt::print("  {:<8} {:<28} fix: {}\n", "", "", item.fix);
  };
  line(report.network);
  line(report.sandbox);
  line(report.writes);
  for (const doctor::Item& w : report.write_items) line(w);
  fmt::print("berth's sandbox: {}\n",
             report.tier.empty() ? "cannot start here" : "tier " + report.tier);
  for (const doctor::Item& k : report.kernel)
    if (k.status != doctor::ItemStatus::kOk) line(k);
  fmt::print("provider families from this session:\n");
  for (const doctor::FamilyVerdict& f : report.families)
    fmt::print("  {:<8} {:<28} {}\n", doctor::StatusName(f.status),
               f.name + (f.native ? " (native to the host)" : ""), f.reason);
  fmt::print("\n");
  for (const std::string& a : report.advice) fmt::print("{}\n", a);
  return rc;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, DoctorOptions* options) {
  CLI::App* sub =
      app.add_subcommand("doctor", "Check what this host allows and whether providers can run");
  sub->add_option("--provider", options->provider, "check this provider only");
  sub->add_flag("--json", options->json, "print the report as JSON");
  sub->add_flag("--host", options->host,
                "report the agent host's own restrictions (network, writes, sandbox) and which "
                "provider families can run from this session");
}

int RunDoctorCommand(const GlobalOptions& global, const DoctorOptions& options) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), FormatOf(options.json));
  doctor::Inputs in;
  in.identity = ctx->identity;
  in.environ = ctx->environ;
  in.user = ctx->user;
  in.state_dir = ctx->state_dir;
  in.cwd = ctx->cwd;
  in.only_provider = options.provider;
  if (options.host) {
    // Only the host's restrictions and berth's sandbox: the repository's policy plays no part.
    return PrintHostReport(doctor::RunHostDoctor(in, sys::AncestorNames(kAncestorDepth)),
                           options.json);
  }
  in.policy_providers = PolicyProviders(ctx->cwd);
  in.store = ProbeStore(ctx->store_location, in.network_timeout_ms);
  in.environment = ProbeEnvironment(ctx->cwd);
  doctor::Report report = doctor::RunDoctor(in);
  if (options.json) {
    fmt::print("{}\n", JsonText(report.ToJson(), 2));
    return report.ok() ? 0 : kExitUnavailable;
  }
  size_t width = 12;
  for (const doctor::Item& item : report.items)
    width = std::max(width, std::min<size_t>(item.name.size(), 40));
  std::string section;
  for (const doctor::Item& item : report.items) {
    if (item.section != section) {
      section = item.section;
      fmt::print("{}\n", section);
    }
    fmt::print("  {:<8} {:<{}} {}\n", doctor::StatusName(item.status), item.name, width,
               item.detail);
    if (!item.fix.empty()) fmt::print("  {:<8} {:<{}} fix: {}\n", "", "", width, item.fix);
  }
  fmt::print("\n");
  fmt::print("sandbox tier: {}\n", report.tier.empty() ? "none works here" : report.tier);
  fmt::print("job store: {} {}{}\n", report.store.kind, report.store.location,
             report.store.ok ? "" : " (does not work here; see the store item)");
  for (const doctor::ProviderVerdict& v : report.providers) {
    if (v.can_run)
      fmt::print("{}: can run\n", v.name);
    else
      fmt::print("{}: cannot run ({})\n", v.name, v.why_not);
  }
  return report.ok() ? 0 : kExitUnavailable;
}

}  // namespace berth::cli
