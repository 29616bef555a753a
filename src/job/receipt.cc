#include "job/receipt.h"

#include <tuple>

#include "job/full_access.h"
#include "job/job_json.h"
#include "job/json_read.h"
#include "job/run_request.h"
#include "sys/atomic_file.h"
#include "sys/process.h"

namespace berth::job {

namespace {

nlohmann::json OrNull(const std::optional<std::string>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json PairsJson(const std::vector<std::pair<std::string, std::string>>& pairs,
                         const char* second) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [path, text] : pairs) out.push_back({{"path", path}, {second, text}});
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> PairsFromJson(const JsonReader& r,
                                                                       const char* key,
                                                                       const char* second) {
  std::vector<std::pair<std::string, std::string>> out;
  TRY(r.ReadList(key, &out,
                 [&](const nlohmann::json& v,
                     const std::string& where) -> Result<std::pair<std::string, std::string>> {
                   JsonReader e = TRY(JsonReader::Of(v, where));
                   std::pair<std::string, std::string> pair;
                   TRY(e.Read("path", &pair.first));
                   TRY(e.Read(second, &pair.second));
                   return pair;
                 }));
  return out;
}

// An ISO time member, or nullopt for null.
Status ReadTime(const JsonReader& r, const char* key, std::optional<int64_t>* out) {
  std::optional<std::string> text;
  TRY(r.Read(key, &text));
  if (!text) return {};
  std::optional<int64_t> ms = ParseIsoTime(*text);
  if (!ms)
    return Error(Cause::kInvalidArgument,
                 r.Where(key) + " must be a time like 2026-11-29T12:00:00.000Z");
  *out = ms;
  return {};
}

nlohmann::json AccessToJson(const AccessRecord& a) {
  if (a.mode != "full") return {{"mode", a.mode}};
  return {{"mode", a.mode}, {"requested_by", a.requested_by}, {"user", a.user}, {"uid", a.uid}};
}

Result<AccessRecord> AccessFromJson(const JsonReader& r) {
  AccessRecord a;
  TRY(r.Read("mode", &a.mode));
  if (a.mode != "bounded" && a.mode != "full")
    return Error(Cause::kInvalidArgument, r.Where("mode") + " must be \"bounded\" or \"full\"");
  if (a.mode == "full") {
    TRY(r.Read("requested_by", &a.requested_by));
    TRY(r.Read("user", &a.user));
    TRY(r.Read("uid", &a.uid));
  }
  return a;
}

nlohmann::json SandboxToJson(const std::optional<SandboxRecord>& s) {
  if (!s) return nlohmann::json::object();
  nlohmann::json grants = nlohmann::json::array();
  for (const SandboxGrant& g : s->grants) {
    nlohmann::json e = {
        {"grant", g.grant}, {"kind", g.kind}, {"root_equivalent", g.root_equivalent}};
    if (!g.path.empty()) e["path"] = g.path;
    grants.push_back(std::move(e));
  }
  nlohmann::json j = {{"profile", s->profile}, {"network", s->network}, {"grants", grants}};
  if (const std::optional<SandboxLaunch>& l = s->launch) {
    j["tier"] = l->tier;
    j["layers"] = l->layers;
    j["limits"] = LimitsToJson(l->limits, /*with_source=*/true);
    j["warnings"] = l->warnings;
    nlohmann::json denied = nlohmann::json::array();
    for (const DeniedSocketRecord& d : l->denied_sockets)
      denied.push_back({{"path", d.path}, {"count", d.count}});
    j["denied_sockets"] = std::move(denied);
  }
  return j;
}

// {} (before the spec was built) is nullopt; `tier` marks the keys of a launch.
Result<std::optional<SandboxRecord>> SandboxFromJson(const JsonReader& r) {
  if (r.At("sandbox").is_object() && r.At("sandbox").empty()) return std::optional<SandboxRecord>();
  if (!r.Has("sandbox")) return std::optional<SandboxRecord>();
  JsonReader sb = TRY(r.Object("sandbox"));
  SandboxRecord s;
  TRY(sb.Read("profile", &s.profile));
  TRY(sb.Read("network", &s.network));
  TRY(sb.ReadList("grants", &s.grants,
                  [](const nlohmann::json& v, const std::string& where) -> Result<SandboxGrant> {
                    JsonReader e = TRY(JsonReader::Of(v, where));
                    SandboxGrant g;
                    TRY(e.Read("grant", &g.grant));
                    TRY(e.Read("kind", &g.kind));
                    TRY(e.Read("path", &g.path));
                    TRY(e.Read("root_equivalent", &g.root_equivalent));
                    return g;
                  }));
  if (sb.Has("tier")) {
    SandboxLaunch l;
    TRY(sb.Read("tier", &l.tier));
    TRY(sb.Read("layers", &l.layers));
    if (sb.Has("limits"))
      l.limits = TRY(LimitsFromJson(sb.At("limits"), sb.Where("limits"), /*with_source=*/true));
    TRY(sb.Read("warnings", &l.warnings));
    TRY(sb.ReadList(
        "denied_sockets", &l.denied_sockets,
        [](const nlohmann::json& v, const std::string& where) -> Result<DeniedSocketRecord> {
          JsonReader e = TRY(JsonReader::Of(v, where));
          DeniedSocketRecord d;
          TRY(e.Read("path", &d.path));
          TRY(e.Read("count", &d.count));
          return d;
        }));
    s.launch = std::move(l);
  }
  return std::optional<SandboxRecord>(std::move(s));
}

nlohmann::json StreamToJson(const StreamRecord& s) {
  return {{"bytes", s.bytes}, {"elided", s.elided}};
}

Result<StreamRecord> StreamFromJson(const JsonReader& output, const char* key) {
  JsonReader r = TRY(output.Object(key));
  StreamRecord s;
  TRY(r.Read("bytes", &s.bytes));
  TRY(r.Read("elided", &s.elided));
  return s;
}

nlohmann::json ProviderToJson(const std::optional<ProviderRecord>& p) {
  if (!p) return nullptr;
  nlohmann::json model = {{"requested", OrNull(p->model.requested)},
                          {"reported", OrNull(p->model.reported)},
                          {"evidence", p->model.evidence},
                          {"ok", p->model.ok}};
  if (p->model.reason) model["reason"] = *p->model.reason;
  nlohmann::json usage = nullptr;
  if (p->usage) {
    usage = nlohmann::json::object();
    if (p->usage->input_tokens) usage["input_tokens"] = *p->usage->input_tokens;
    if (p->usage->cached_input_tokens)
      usage["cached_input_tokens"] = *p->usage->cached_input_tokens;
    if (p->usage->output_tokens) usage["output_tokens"] = *p->usage->output_tokens;
  }
  return {{"name", p->name},
          {"cli", p->cli},
          {"version", p->version},
          {"model", model},
          {"session_id", OrNull(p->session_id)},
          {"usage", usage},
          {"cost_usd", OrNull(p->cost_usd)},
          {"final_text", p->final_text},
          {"failure", OrNull(p->failure)},
          {"credentials", p->credentials},
          {"output_lines", p->output_lines}};
}

Result<std::optional<ProviderRecord>> ProviderFromJson(const JsonReader& receipt) {
  if (receipt.At("provider").is_null()) return std::optional<ProviderRecord>();
  JsonReader r = TRY(receipt.Object("provider"));
  ProviderRecord p;
  TRY(r.Read("name", &p.name));
  TRY(r.Read("cli", &p.cli));
  TRY(r.Read("version", &p.version));
  JsonReader m = TRY(r.Object("model"));
  TRY(m.Read("requested", &p.model.requested));
  TRY(m.Read("reported", &p.model.reported));
  TRY(m.Read("evidence", &p.model.evidence));
  TRY(m.Read("ok", &p.model.ok));
  if (m.Has("reason")) {
    std::string reason;
    TRY(m.Read("reason", &reason));
    p.model.reason = std::move(reason);
  }
  TRY(r.Read("session_id", &p.session_id));
  if (!r.At("usage").is_null()) {
    JsonReader u = TRY(r.Object("usage"));
    UsageRecord usage;
    TRY(u.Read("input_tokens", &usage.input_tokens));
    TRY(u.Read("cached_input_tokens", &usage.cached_input_tokens));
    TRY(u.Read("output_tokens", &usage.output_tokens));
    p.usage = usage;
  }
  TRY(r.Read("cost_usd", &p.cost_usd));
  TRY(r.Read("final_text", &p.final_text));
  TRY(r.Read("failure", &p.failure));
  TRY(r.Read("credentials", &p.credentials));
  TRY(r.Read("output_lines", &p.output_lines));
  return std::optional<ProviderRecord>(std::move(p));
}

nlohmann::json TotalsToJson(const NetworkTotals& t) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostRecord& h : t.hosts) {
    nlohmann::json e = {{"host", h.host},        {"port", h.port},     {"allowed", h.allowed},
                        {"denied", h.denied},    {"failed", h.failed}, {"bytes_out", h.bytes_out},
                        {"bytes_in", h.bytes_in}};
    if (h.last_denial) e["last_denial"] = *h.last_denial;
    if (h.last_failure) e["last_failure"] = *h.last_failure;
    hosts.push_back(std::move(e));
  }
  return {{"allowed", t.allowed},     {"denied", t.denied},     {"failed", t.failed},
          {"bytes_out", t.bytes_out}, {"bytes_in", t.bytes_in}, {"hosts", std::move(hosts)}};
}

nlohmann::json NetworkToJson(const std::optional<NetworkRecord>& n) {
  if (!n) return nullptr;
  nlohmann::json j = {{"mode", n->mode}};
  if (const std::optional<ProxyRecord>& p = n->proxy) {
    j["allowlist"] = p->allowlist;
    j["proxy"] = OrNull(p->address);
    if (p->totals) j.update(TotalsToJson(*p->totals));
  }
  return j;
}

// `allowlist` marks a proxy's keys and `allowed` its counts.
Result<std::optional<NetworkRecord>> NetworkFromJson(const JsonReader& receipt) {
  if (receipt.At("network").is_null()) return std::optional<NetworkRecord>();
  JsonReader r = TRY(receipt.Object("network"));
  NetworkRecord n;
  TRY(r.Read("mode", &n.mode));
  if (r.Has("allowlist")) {
    ProxyRecord p;
    TRY(r.Read("allowlist", &p.allowlist));
    TRY(r.Read("proxy", &p.address));
    if (r.Has("allowed"))
      p.totals = TRY(NetworkTotals::FromJson(receipt.At("network"), receipt.Where("network")));
    n.proxy = std::move(p);
  }
  return std::optional<NetworkRecord>(std::move(n));
}

nlohmann::json LandingToJson(const LandingRecord& l) {
  return {{"job", l.job},        {"source_commit", l.source_commit},
          {"target", l.target},  {"old", l.old_commit},
          {"new", l.new_commit}, {"authorised_by", l.authorised_by},
          {"at", l.at},          {"checked_out", l.checked_out},
          {"paths", l.paths}};
}

Result<std::optional<LandingRecord>> LandingFromJson(const JsonReader& receipt) {
  if (!receipt.Has("landing")) return std::optional<LandingRecord>();
  JsonReader r = TRY(receipt.Object("landing"));
  LandingRecord l;
  TRY(r.Read("job", &l.job));
  TRY(r.Read("source_commit", &l.source_commit));
  TRY(r.Read("target", &l.target));
  TRY(r.Read("old", &l.old_commit));
  TRY(r.Read("new", &l.new_commit));
  TRY(r.Read("authorised_by", &l.authorised_by));
  TRY(r.Read("at", &l.at));
  TRY(r.Read("checked_out", &l.checked_out));
  TRY(r.Read("paths", &l.paths));
  return std::optional<LandingRecord>(std::move(l));
}

nlohmann::json ApprovalsToJson(const std::vector<ApprovalRecord>& approvals) {
  nlohmann::json out = nlohmann::json::array();
  for (const ApprovalRecord& a : approvals)
    out.push_back({{"method", a.method},
                   {"kind", a.kind},
                   {"asked", a.asked},
                   {"argv", a.argv},
                   {"answer", a.answer},
                   {"rule", a.rule},
                   {"reason", a.reason}});
  return out;
}

Status ApprovalsFromJson(const JsonReader& receipt, std::vector<ApprovalRecord>* out) {
  return receipt.ReadList(
      "approvals", out,
      [](const nlohmann::json& v, const std::string& where) -> Result<ApprovalRecord> {
        JsonReader e = TRY(JsonReader::Of(v, where));
        ApprovalRecord a;
        TRY(e.Read("method", &a.method));
        TRY(e.Read("kind", &a.kind));
        TRY(e.Read("asked", &a.asked));
        TRY(e.Read("argv", &a.argv));
        TRY(e.Read("answer", &a.answer));
        TRY(e.Read("rule", &a.rule));
        TRY(e.Read("reason", &a.reason));
        return a;
      });
}

nlohmann::json EnvironmentToJson(const EnvironmentRecord& e) {
  nlohmann::json services = nlohmann::json::array();
  for (const EnvironmentRecord::Service& s : e.services)
    services.push_back(
        {{"name", s.name}, {"kind", s.kind}, {"variable", s.variable}, {"url", s.url}});
  return {{"key", e.key},
          {"commit", e.commit},
          {"built_at", e.built_at},
          {"duration_ms", e.duration_ms},
          {"size_bytes", e.size_bytes},
          {"built_by_job", e.built_by_job},
          {"checks_key", e.checks_key},
          {"services", services}};
}

Result<std::optional<EnvironmentRecord>> EnvironmentFromJson(const JsonReader& receipt) {
  if (receipt.At("environment").is_null()) return std::optional<EnvironmentRecord>();
  JsonReader r = TRY(receipt.Object("environment"));
  EnvironmentRecord e;
  TRY(r.Read("key", &e.key));
  TRY(r.Read("commit", &e.commit));
  TRY(r.Read("built_at", &e.built_at));
  TRY(r.Read("duration_ms", &e.duration_ms));
  TRY(r.Read("size_bytes", &e.size_bytes));
  TRY(r.Read("built_by_job", &e.built_by_job));
  TRY(r.Read("checks_key", &e.checks_key));
  // Absent in receipts from before services.
  TRY(r.ReadList(
      "services", &e.services,
      [](const nlohmann::json& v, const std::string& where) -> Result<EnvironmentRecord::Service> {
        JsonReader s = TRY(JsonReader::Of(v, where));
        EnvironmentRecord::Service service;
        TRY(s.Read("name", &service.name));
        TRY(s.Read("kind", &service.kind));
        TRY(s.Read("variable", &service.variable));
        TRY(s.Read("url", &service.url));
        return service;
      }));
  return std::optional<EnvironmentRecord>(std::move(e));
}

// Every top-level member Receipt::ToJson writes; the others are kept in Receipt::extra.
constexpr std::string_view kReceiptKeys[] = {
    "schema",          "job",          "repository",
    "agent",           "access",       "provider",
    "sandbox",         "network",      "workspace",
    "child",           "changes",      "output",
    "timings",         "verification", "verification_history",
    "owner",           "error",        "times",
    "landing",         "approvals",    "environment",
    "recollected_from"};

// The fields of a JobRecord that a receipt carries (and so reads back).
bool ReceiptJobEqual(const store::JobRecord& a, const store::JobRecord& b) {
  auto tie = [](const store::JobRecord& j) {
    return std::tie(j.id, j.state, j.state_reason, j.exit_code, j.depth, j.repo, j.base,
                    j.policy_hash, j.agent, j.provider, j.job_dir, j.commit, j.owner.host,
                    j.owner.pid, j.owner.pid_start, j.created_at_ms, j.started_at_ms,
                    j.ended_at_ms);
  };
  // The branch is written only with a commit.
  return tie(a) == tie(b) && (!a.commit || a.branch == b.branch);
}

// A receipt from the record alone, for a job whose supervisor never wrote one.
Receipt RecordOnlyReceipt(const store::JobRecord& job) {
  Receipt receipt;
  receipt.job = job;
  if (Result<RunRequest> request = RunRequest::FromJson(job.request_json); request) {
    receipt.argv = request->argv;
    receipt.write = request->write;
    receipt.access = AccessRecordOf(*request);
  }
  receipt.backend = job.backend;
  return receipt;
}

}  // namespace

Result<NetworkTotals> NetworkTotals::FromJson(const nlohmann::json& json,
                                              const std::string& where) {
  JsonReader r = TRY(JsonReader::Of(json, where));
  NetworkTotals t;
  TRY(r.Read("allowed", &t.allowed));
  TRY(r.Read("denied", &t.denied));
  TRY(r.Read("failed", &t.failed));
  TRY(r.Read("bytes_out", &t.bytes_out));
  TRY(r.Read("bytes_in", &t.bytes_in));
  TRY(r.ReadList("hosts", &t.hosts,
                 [](const nlohmann::json& v, const std::string& at) -> Result<HostRecord> {
                   JsonReader e = TRY(JsonReader::Of(v, at));
                   HostRecord h;
                   TRY(e.Read("host", &h.host));
                   int port = 0;
                   TRY(e.Read("port", &port));
                   if (port < 0 || port > 65535)
                     return Error(Cause::kInvalidArgument, e.Where("port") + " is out of range");
                   h.port = static_cast<uint16_t>(port);
                   TRY(e.Read("allowed", &h.allowed));
                   TRY(e.Read("denied", &h.denied));
                   TRY(e.Read("failed", &h.failed));
                   TRY(e.Read("bytes_out", &h.bytes_out));
                   TRY(e.Read("bytes_in", &h.bytes_in));
                   if (e.Has("last_denial")) {
                     std::string text;
                     TRY(e.Read("last_denial", &text));
                     h.last_denial = std::move(text);
                   }
                   if (e.Has("last_failure")) {
                     std::string text;
                     TRY(e.Read("last_failure", &text));
                     h.last_failure = std::move(text);
                   }
                   return h;
                 }));
  return t;
}

nlohmann::json Receipt::ToJson() const {
  nlohmann::json j;
  j["schema"] = kReceiptSchema;
  j["job"] = {{"id", job.id},
              {"state", store::JobStateName(job.state)},
              {"reason", job.state_reason},
              {"exit_code", OrNull(job.exit_code)},
              {"depth", job.depth}};
  j["repository"] = {{"path", job.repo}, {"base", job.base}, {"policy_sha256", job.policy_hash}};
  j["agent"] = {{"name", job.agent},
                {"provider", job.provider},
                {"capability", write ? "write" : "read"},
                {"argv", argv}};
  j["access"] = AccessToJson(access);
  j["provider"] = ProviderToJson(provider);
  j["sandbox"] = SandboxToJson(sandbox);
  j["network"] = NetworkToJson(network);
  j["workspace"] = {{"backend", backend},
                    {"dir", job.job_dir},
                    {"skipped_includes", PairsJson(skipped_includes, "reason")},
                    {"empty_submodules", PairsJson(empty_submodules, "reason")},
                    {"lfs_missing", lfs_missing},
                    {"lfs_missing_count", lfs_missing_count}};
  j["child"] = {{"exit", OrNull(child_exit)}, {"signal", OrNull(child_signal)}};
  nlohmann::json files = nlohmann::json::array();
  for (const ReceiptChange& c : changes) files.push_back({{"path", c.path}, {"kind", c.kind}});
  j["changes"] = {{"commit", OrNull(job.commit)},
                  {"branch", job.commit ? nlohmann::json(job.branch) : nullptr},
                  {"files", files},
                  {"refusals", PairsJson(refusals, "reason")},
                  {"ignored", ignored},
                  {"ignored_paths", ignored_paths}};
  j["output"] = output ? nlohmann::json{{"stdout", StreamToJson(output->stdout_stream)},
                                        {"stderr", StreamToJson(output->stderr_stream)}}
                       : nlohmann::json::object();
  j["timings"] = {{"start_ms", timings.start_ms},
                  {"queue_ms", timings.queue_ms},
                  {"workspace_ms", timings.workspace_ms},
                  {"snapshot_ms", timings.snapshot_ms},
                  {"environment_ms", timings.environment_ms},
                  {"spec_ms", timings.spec_ms},
                  {"sandbox_ms", timings.sandbox_ms},
                  {"agent_ms", timings.agent_ms},
                  {"collect_ms", timings.collect_ms},
                  {"commit_ms", timings.commit_ms},
                  {"verify_ms", verify_ms},
                  {"total_ms", timings.total_ms},
                  {"other_ms", timings.other_ms}};
  j["verification"] = verification ? verification->ToJson() : nlohmann::json(nullptr);
  nlohmann::json history = nlohmann::json::array();
  for (const Verification& v : verification_history) history.push_back(v.ToJson());
  j["verification_history"] = std::move(history);
  j["owner"] = {
      {"host", job.owner.host}, {"pid", job.owner.pid}, {"pid_start", job.owner.pid_start}};
  j["error"] = error ? nlohmann::json{{"message", error->message},
                                      {"cause", error->cause},
                                      {"hint", error->hint},
                                      {"evidence", error->evidence}}
                     : nlohmann::json(nullptr);
  auto time_or_null = [](const std::optional<int64_t>& ms) {
    return ms ? nlohmann::json(IsoTime(*ms)) : nlohmann::json(nullptr);
  };
  j["times"] = {{"created_at", IsoTime(job.created_at_ms)},
                {"started_at", time_or_null(job.started_at_ms)},
                {"ended_at", time_or_null(job.ended_at_ms)}};
  if (landing) j["landing"] = LandingToJson(*landing);
  if (!approvals.empty()) j["approvals"] = ApprovalsToJson(approvals);
  if (environment) j["environment"] = EnvironmentToJson(*environment);
  if (!recollected_from.empty()) j["recollected_from"] = recollected_from;
  MergeUnknownMembers(extra, &j);
  return j;
}

Result<Receipt> Receipt::FromJson(const nlohmann::json& json) {
  JsonReader r = TRY(JsonReader::Of(json, "receipt"));
  // Nothing is required: a part that is missing reads as its default (the landing gate sees
  // no verification in a receipt without one). Only another layout is refused.
  std::string schema = kReceiptSchema;
  TRY(r.Read("schema", &schema));
  if (schema != kReceiptSchema)
    return Error(Cause::kInvalidArgument,
                 "receipt.schema is \"" + schema + "\", not \"" + kReceiptSchema + "\"");
  Receipt out;
  store::JobRecord& job = out.job;

  JsonReader j = TRY(r.Object("job"));
  TRY(j.Read("id", &job.id));
  std::string state = store::JobStateName(job.state);
  TRY(j.Read("state", &state));
  std::optional<store::JobState> parsed = store::ParseJobState(state);
  if (!parsed)
    return Error(Cause::kInvalidArgument, "receipt.job.state \"" + state + "\" is not a job state");
  job.state = *parsed;
  TRY(j.Read("reason", &job.state_reason));
  TRY(j.Read("exit_code", &job.exit_code));
  TRY(j.Read("depth", &job.depth));

  JsonReader repo = TRY(r.Object("repository"));
  TRY(repo.Read("path", &job.repo));
  TRY(repo.Read("base", &job.base));
  TRY(repo.Read("policy_sha256", &job.policy_hash));

  JsonReader agent = TRY(r.Object("agent"));
  TRY(agent.Read("name", &job.agent));
  TRY(agent.Read("provider", &job.provider));
  std::string capability = "read";
  TRY(agent.Read("capability", &capability));
  if (capability != "read" && capability != "write")
    return Error(
        Cause::kInvalidArgument,
        "receipt.agent.capability must be \"read\" or \"write\", not \"" + capability + "\"");
  out.write = capability == "write";
  TRY(agent.Read("argv", &out.argv));

  out.access = TRY(AccessFromJson(TRY(r.Object("access"))));
  out.provider = TRY(ProviderFromJson(r));
  out.sandbox = TRY(SandboxFromJson(r));
  out.network = TRY(NetworkFromJson(r));

  JsonReader ws = TRY(r.Object("workspace"));
  TRY(ws.Read("backend", &out.backend));
  TRY(ws.Read("dir", &job.job_dir));
  out.skipped_includes = TRY(PairsFromJson(ws, "skipped_includes", "reason"));
  out.empty_submodules = TRY(PairsFromJson(ws, "empty_submodules", "reason"));
  // Absent in receipts of an older berth.
  if (ws.Has("lfs_missing")) TRY(ws.Read("lfs_missing", &out.lfs_missing));
  if (ws.Has("lfs_missing_count")) TRY(ws.Read("lfs_missing_count", &out.lfs_missing_count));

  JsonReader child = TRY(r.Object("child"));
  TRY(child.Read("exit", &out.child_exit));
  TRY(child.Read("signal", &out.child_signal));

  JsonReader changes = TRY(r.Object("changes"));
  TRY(changes.Read("commit", &job.commit));
  if (job.commit) TRY(changes.Read("branch", &job.branch));
  TRY(changes.ReadList(
      "files", &out.changes,
      [](const nlohmann::json& v, const std::string& where) -> Result<ReceiptChange> {
        JsonReader e = TRY(JsonReader::Of(v, where));
        ReceiptChange c;
        TRY(e.Read("path", &c.path));
        TRY(e.Read("kind", &c.kind));
        if (c.kind != "upsert" && c.kind != "delete")
          return Error(Cause::kInvalidArgument,
                       e.Where("kind") + " must be \"upsert\" or \"delete\"");
        return c;
      }));
  out.refusals = TRY(PairsFromJson(changes, "refusals", "reason"));
  TRY(changes.Read("ignored", &out.ignored));
  if (changes.Has("ignored_paths")) TRY(changes.Read("ignored_paths", &out.ignored_paths));

  JsonReader output = TRY(r.Object("output"));
  if (!r.At("output").empty()) {
    OutputRecord o;
    o.stdout_stream = TRY(StreamFromJson(output, "stdout"));
    o.stderr_stream = TRY(StreamFromJson(output, "stderr"));
    out.output = o;
  }

  JsonReader t = TRY(r.Object("timings"));
  TRY(t.Read("queue_ms", &out.timings.queue_ms));
  TRY(t.Read("workspace_ms", &out.timings.workspace_ms));
  TRY(t.Read("sandbox_ms", &out.timings.sandbox_ms));
  TRY(t.Read("agent_ms", &out.timings.agent_ms));
  TRY(t.Read("collect_ms", &out.timings.collect_ms));
  TRY(t.Read("commit_ms", &out.timings.commit_ms));
  TRY(t.Read("verify_ms", &out.verify_ms));
  // Absent in older receipts: read as 0.
  for (auto [key, field] : {std::pair<const char*, int64_t*>{"start_ms", &out.timings.start_ms},
                            {"snapshot_ms", &out.timings.snapshot_ms},
                            {"environment_ms", &out.timings.environment_ms},
                            {"spec_ms", &out.timings.spec_ms},
                            {"total_ms", &out.timings.total_ms},
                            {"other_ms", &out.timings.other_ms}})
    if (t.Has(key)) TRY(t.Read(key, field));

  if (!r.At("verification").is_null())
    out.verification = TRY(Verification::FromJson(r.At("verification"), r.Where("verification")));
  TRY(r.ReadList("verification_history", &out.verification_history, Verification::FromJson));

  JsonReader owner = TRY(r.Object("owner"));
  TRY(owner.Read("host", &job.owner.host));
  TRY(owner.Read("pid", &job.owner.pid));
  TRY(owner.Read("pid_start", &job.owner.pid_start));

  if (!r.At("error").is_null()) {
    JsonReader e = TRY(r.Object("error"));
    ReceiptError error;
    TRY(e.Read("message", &error.message));
    TRY(e.Read("cause", &error.cause));
    TRY(e.Read("hint", &error.hint));
    TRY(e.Read("evidence", &error.evidence));
    out.error = std::move(error);
  }

  JsonReader times = TRY(r.Object("times"));
  std::optional<int64_t> created;
  TRY(ReadTime(times, "created_at", &created));
  job.created_at_ms = created.value_or(0);
  TRY(ReadTime(times, "started_at", &job.started_at_ms));
  TRY(ReadTime(times, "ended_at", &job.ended_at_ms));

  out.landing = TRY(LandingFromJson(r));
  TRY(ApprovalsFromJson(r, &out.approvals));
  out.environment = TRY(EnvironmentFromJson(r));
  if (r.Has("recollected_from")) TRY(r.Read("recollected_from", &out.recollected_from));
  out.extra = UnknownMembers(json, kReceiptKeys);
  return out;
}

Result<Receipt> Receipt::FromText(const std::string& text) {
  const nlohmann::json json = TRY(ParseJson(text, "the receipt"));
  return FromJson(json);
}

bool Receipt::operator==(const Receipt& o) const {
  auto tie = [](const Receipt& r) {
    return std::tie(r.argv, r.write, r.backend, r.skipped_includes, r.sandbox, r.child_exit,
                    r.child_signal, r.changes, r.refusals, r.ignored, r.ignored_paths,
                    r.empty_submodules, r.lfs_missing, r.lfs_missing_count, r.output, r.timings,
                    r.verify_ms, r.verification, r.verification_history, r.error, r.provider,
                    r.network, r.access, r.landing, r.approvals, r.environment, r.recollected_from,
                    r.extra);
  };
  return ReceiptJobEqual(job, o.job) && tie(*this) == tie(o);
}

AccessRecord AccessRecordOf(const RunRequest& request) {
  // One writer of `access` (full_access.cc), read back through its codec.
  const nlohmann::json json = AccessJson(request);
  Result<JsonReader> reader = JsonReader::Of(json, "access");
  CHECK(reader);
  Result<AccessRecord> access = AccessFromJson(*reader);
  CHECK(access);
  return *access;
}

ProviderRecord ProviderRecordOf(const std::string& name, const std::string& cli,
                                const std::string& version, const provider::ModelCheck& model,
                                const provider::AgentOutput& output) {
  auto non_empty = [](const std::string& s) {
    return s.empty() ? std::nullopt : std::optional<std::string>(s);
  };
  ProviderRecord p;
  p.name = name;
  p.cli = cli;
  p.version = version;
  p.model = ModelRecord{non_empty(model.requested), non_empty(model.reported), model.evidence,
                        model.ok, non_empty(model.reason)};
  p.session_id = non_empty(output.session_id);
  if (output.usage.any())
    p.usage = UsageRecord{output.usage.input_tokens, output.usage.cached_input_tokens,
                          output.usage.output_tokens};
  p.cost_usd = output.cost_usd;
  p.output_lines = output.lines;
  return p;
}

std::vector<SandboxGrant> SandboxGrantsOf(const std::vector<sandbox::GrantRecord>& grants) {
  std::vector<SandboxGrant> out;
  for (const sandbox::GrantRecord& g : grants)
    out.push_back({g.text, g.kind, g.path, g.root_equivalent});
  return out;
}

Status WriteReceipt(const std::string& job_dir, const nlohmann::json& receipt) {
  return sys::WriteFileAtomic(job_dir + "/receipt.json", DumpJson(receipt, 2) + "\n", 0600);
}

Status SaveReceipt(store::Store& store, const store::JobRecord& job,
                   const nlohmann::json& receipt) {
  TRY(WriteReceipt(job.job_dir, receipt));
  return store.SetReceipt(job.id, DumpJson(receipt));
}

Status SaveRecordOnlyReceipt(store::Store& store, const store::JobRecord& job) {
  Receipt receipt = RecordOnlyReceipt(job);
  receipt.error =
      ReceiptError{job.state_reason, store::JobStateName(job.state),
                   "the workspace is kept; inspect it with `berth show " + job.id + "`", ""};
  return SaveReceipt(store, job, receipt.ToJson());
}

Result<Receipt> LoadReceipt(const store::JobRecord& job) {
  if (!job.receipt_json) return RecordOnlyReceipt(job);
  return Receipt::FromText(*job.receipt_json);
}

Receipt LoadReceiptOrRecord(const store::JobRecord& job) {
  Result<Receipt> stored = LoadReceipt(job);
  return stored ? std::move(*stored) : RecordOnlyReceipt(job);
}

Status RecordVerification(store::Store& store, const store::JobRecord& job,
                          const Verification& verification) {
  Receipt receipt = LoadReceiptOrRecord(job);
  receipt.verification = verification;
  receipt.verification_history.push_back(verification);
  TRY(SaveReceipt(store, job, receipt.ToJson()));
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : verification.checks)
    checks.push_back({{"name", c.name},
                      {"required", c.required},
                      {"passed", c.passed},
                      {"reason", c.reason},
                      {"duration_ms", c.duration_ms}});
  const int64_t at = sys::WallMillis();
  nlohmann::json detail = {{"job", job.id},
                           {"commit", verification.commit},
                           {"policy_sha256", verification.policy_sha256},
                           {"by", verification.by},
                           {"via", verification.via},
                           {"at", IsoTime(at)},
                           {"required_passed", verification.required_passed},
                           {"checks", std::move(checks)}};
  TRY(store.AppendAudit(store::AuditEntry{0, at, job.id, "verify", DumpJson(detail)}));
  return {};
}

}  // namespace berth::job
