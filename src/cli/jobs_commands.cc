#include "cli/jobs_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/exit_codes.h"
#include "base/quote.h"
#include "base/strings.h"
#include "cli/log_writer.h"
#include "cli/output.h"
#include "cli/queue.h"
#include "cli/receipt_text.h"
#include "cli/worker_output.h"
#include "git/repository.h"
#include "job/full_access.h"
#include "job/job_json.h"
#include "job/masking_store.h"
#include "job/receipt.h"
#include "job/recollect.h"
#include "job/repo_policy.h"
#include "job/stale.h"
#include "job/stored_records.h"
#include "job/verify.h"
#include "policy/policy.h"
#include "store/open_store.h"
#include "store/store.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"
#include "sys/terminate.h"

namespace berth::cli {

namespace {

std::string Age(int64_t ms) {
  int64_t s = (sys::WallMillis() - ms) / 1000;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

class Session {
 public:
  static Result<Session> Open(const GlobalOptions& global) {
    Session s;
    s.ctx_ = TRY(MakeJobContext(global));
    // What the commands print and write is masked with the secrets this caller knows, as a
    // second wall behind the supervisor's own masking (docs/receipt.md).
    s.store_ = TRY(job::OpenMaskingStore(s.ctx_));
    TRY(job::ReapStaleJobs(*s.store_));
    return s;
  }
  store::Store& store() { return *store_; }
  const job::SecretMask& mask() const { return store_->mask(); }
  const job::JobContext& ctx() const { return ctx_; }

 private:
  job::JobContext ctx_;
  std::unique_ptr<job::MaskingStore> store_;
};

int Fail(const Error& e, const JobsOptions& o) { return cli::Fail(e, FormatOf(o.json)); }

std::string QueueText(int position) {
  return "waiting for a free slot: position " + std::to_string(position) + " in the queue";
}

int List(Session& s, const JobsOptions& o) {
  std::string repo;
  if (!o.all) {
    if (Result<git::Repository> r = git::Repository::Discover(s.ctx().cwd); r) repo = r->workdir();
  }
  Result<std::vector<store::JobRecord>> jobs = s.store().ListJobs(repo, false, o.all ? 100000 : 20);
  if (!jobs) return Fail(jobs.error(), o);
  // A live job whose stored request cannot be decoded is ended failed by whoever meets it
  // (docs/store.md); it is listed with that state.
  for (store::JobRecord& j : *jobs)
    if (!store::IsTerminal(j.state))
      IgnoreError(job::FailIfUndecodable(s.store(), &j),
                  "the job is listed either way, its record_error saying why");
  // Positions per repository, computed once (--all lists several).
  std::map<std::string, std::map<std::string, int>> positions;
  auto position_of = [&](const store::JobRecord& j) -> std::optional<int> {
    if (j.state != store::JobState::kQueued) return std::nullopt;
    auto [it, fresh] = positions.try_emplace(j.repo);
    if (fresh)
      it->second = QueuePositions(s.store(), j.repo).value_or(std::map<std::string, int>{});
    auto found = it->second.find(j.id);
    return found == it->second.end() ? std::nullopt : std::optional<int>(found->second);
  };
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const store::JobRecord& j : *jobs) out.push_back(job::JobToJson(j, position_of(j)));
    PrintJson(out);
    return 0;
  }
  if (jobs->empty()) {
    fmt::print("no jobs{}\n",
               repo.empty() ? "" : " in " + repo + " (berth ls --all shows every repository)");
    return 0;
  }
  // Each column as wide as its widest cell (in bytes: every cell is escaped, ids and states
  // are ASCII), so ids of any length line up (docs/cli.md). AGE is right-aligned.
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows = {{"ID", "STATE", "AGENT", "AGE", "RESULT"}};
  for (const store::JobRecord& j : *jobs) {
    std::optional<int> position = position_of(j);
    std::string result = j.commit   ? j.branch + " @ " + j.commit->substr(0, 10)
                         : position ? QueueText(*position)
                                    : j.state_reason;
    if (j.landed_commit) result = "[landed " + j.landed_commit->substr(0, 10) + "] " + result;
    // A job that failed verification lands once a re-verification passed (docs/landing.md):
    // its receipt's latest verification says so.
    if (!j.landed_commit && j.state == store::JobState::kVerificationFailed)
      if (Result<job::Receipt> receipt = job::LoadReceipt(j);
          receipt && receipt->verification && receipt->verification->required_passed)
        result = "[landable: re-verified] " + result;
    if (job::AccessJsonOfRecord(j).value("mode", "") == "full") result = "[full access] " + result;
    if (result.size() > 70) result = result.substr(0, 67) + "...";
    // A landed job reads "landed" where its state would read "completed"; its stored state,
    // in --json and `berth show`, stays what it was.
    std::string state = store::StoredStateName(j);
    if (j.landed_commit)
      state = j.state == store::JobState::kCompleted ? "landed" : state + ",landed";
    rows.push_back({EscapeControls(j.id), EscapeControls(state), EscapeControls(j.agent),
                    Age(j.created_at_ms), EscapeControls(result)});
  }
  std::array<size_t, 4> width{};
  for (const Row& row : rows)
    for (size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto pad = [](const std::string& cell, size_t to) {
    return std::string(to - std::min(to, cell.size()), ' ');
  };
  for (const Row& row : rows)
    fmt::print("{}{} {}{} {}{} {}{}  {}\n", row[0], pad(row[0], width[0]), row[1],
               pad(row[1], width[1]), row[2], pad(row[2], width[2]), pad(row[3], width[3]), row[3],
               row[4]);
  return 0;
}

int Show(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  // What cannot be decoded is shown as its error, beside everything else the record holds.
  const Status decoded = job::FailIfUndecodable(s.store(), &*j);
  std::optional<int> position = QueuePositionOf(s.store(), *j);
  if (o.json) {
    PrintJson(job::JobToJson(*j, position));
    return 0;
  }
  Result<std::vector<store::AuditEntry>> audit = s.store().ListAudit(j->id);
  fmt::print("job      {}\nstate    {}{}\n", j->id, EscapeControls(store::StoredStateName(*j)),
             j->state_reason.empty() ? "" : " (" + EscapeControls(j->state_reason) + ")");
  if (!decoded) fmt::print("error    {}\n", EscapeControls(decoded.error().message()));
  if (position) fmt::print("queue    {}\n", QueueText(*position));
  if (!j->source.empty())
    fmt::print("workers  from {}; attempt {}{}{}\n", EscapeControls(j->source), j->attempt,
               j->worker_id.empty() ? "" : " on worker " + j->worker_id,
               j->requeues > 0 ? ", requeued " + std::to_string(j->requeues) + "x" : "");
  fmt::print("agent    {} ({})\nrepo     {}\nbase     {}\n", j->agent, j->provider, j->repo,
             j->base);
  if (std::string access = job::AccessLine(job::AccessJsonOfRecord(*j)); !access.empty())
    fmt::print("access   {}\n", access);
  fmt::print("branch   {}\ncommit   {}\n", j->branch, j->commit.value_or("none"));
  fmt::print("created  {}\n", job::IsoTime(j->created_at_ms));
  if (j->ended_at_ms) fmt::print("ended    {}\n", job::IsoTime(*j->ended_at_ms));
  fmt::print("owner    {} pid {}\nworkdir  {} ({})\n", j->owner.host, j->owner.pid, j->job_dir,
             j->backend.empty() ? "no workspace yet" : j->backend);
  Result<std::vector<store::Event>> events = s.store().ListEvents(j->id, 0);
  if (events && !events->empty()) {
    fmt::print("events\n");
    for (const store::Event& e : *events)
      fmt::print("  {}  {:<10} {}\n", job::IsoTime(e.at_ms), e.step, EscapeControls(e.detail));
  }
  if (j->landed_commit)
    fmt::print("landed   {} at {}\n", *j->landed_commit,
               j->landed_at_ms ? job::IsoTime(*j->landed_at_ms) : "?");
  if (audit && !audit->empty()) {
    fmt::print("audit\n");
    for (const store::AuditEntry& a : *audit)
      fmt::print("  #{} {}  {:<8} {}\n", a.seq, job::IsoTime(a.at_ms), a.action,
                 EscapeControls(a.detail_json));
  }
  if (j->receipt_json) {
    Result<job::Receipt> r = job::Receipt::FromText(*j->receipt_json);
    if (!r) {
      fmt::print("receipt  {}/receipt.json cannot be read: {}\n", j->job_dir,
                 EscapeControls(r.error().ToString()));
    } else {
      if (r->sandbox && r->sandbox->launch)
        fmt::print("sandbox  {} tier, {} profile, network {}\n", r->sandbox->launch->tier,
                   r->sandbox->profile, r->sandbox->network);
      if (const std::optional<job::ProviderRecord>& pv = r->provider) {
        std::string line = "provider " + pv->name + " " + pv->version;
        std::string model =
            pv->model.reported ? *pv->model.reported : pv->model.requested.value_or("?");
        line += ", model " + model + " (" + pv->model.evidence + ")";
        if (pv->usage && pv->usage->input_tokens && pv->usage->output_tokens)
          line += fmt::format(", {} tokens in, {} out", *pv->usage->input_tokens,
                              *pv->usage->output_tokens);
        if (pv->cost_usd) line += fmt::format(", ${:.4f}", *pv->cost_usd);
        fmt::print("{}\n", EscapeControls(line));  // the model name comes from the agent
      }
      if (r->network && r->network->proxy && r->network->proxy->totals)
        fmt::print(
            "network  {} connection(s) allowed, {} denied (details: berth logs, receipt network)\n",
            r->network->proxy->totals->allowed, r->network->proxy->totals->denied);
      const job::Timings& t = r->timings;
      fmt::print(
          "timings  queue {} ms, workspace {} ms, sandbox {} ms, agent {} ms, collect {} ms, "
          "commit {} ms, verify {} ms\n",
          t.queue_ms, t.workspace_ms, t.sandbox_ms, t.agent_ms, t.collect_ms, t.commit_ms,
          r->verify_ms);
      // The rest of every millisecond, where the receipt has it (older ones do not).
      if (t.total_ms > 0)
        fmt::print(
            "         start {} ms, spec {} ms, environment {} ms, other {} ms; total {} ms\n",
            t.start_ms, t.spec_ms, t.environment_ms, t.other_ms, t.total_ms);
      if (r->verification && !r->verification->checks.empty()) {
        const job::Verification& v = *r->verification;
        fmt::print("checks   {}{} (berth logs {} --check NAME)\n", EscapeControls(v.Summary()),
                   v.by.empty() ? ""
                                : EscapeControls(" on re-verification by " + v.by + " (" + v.via +
                                                 ") at " + v.started_at),
                   j->id);
        for (const std::string& line : CheckLines(v)) fmt::print("  {}\n", line);
      }
      if (r->environment) {
        const job::EnvironmentRecord& e = *r->environment;
        fmt::print("environment  layer {} ({}, built {} in {} ms{}){}\n", e.key.substr(0, 12),
                   FormatBytes(e.size_bytes), e.built_at, e.duration_ms,
                   e.built_by_job ? " by this job" : "",
                   e.checks_key.empty()    ? ""
                   : e.checks_key == e.key ? "; checks: the same layer"
                                           : "; checks: layer " + e.checks_key.substr(0, 12));
        for (const job::EnvironmentRecord::Service& s : e.services)
          fmt::print("service  {} ({}), its own for the agent and each check: ${}={}\n", s.name,
                     s.kind, s.variable, s.url);
      }
      if (!r->recollected_from.empty())
        fmt::print("from     the kept workspace of job {} (berth recollect)\n",
                   r->recollected_from);
      fmt::print("receipt  {}/receipt.json\n", j->job_dir);
      // Paths of a commit come from git, not the masked receipt: masked here the same way.
      for (const std::string& line : ReceiptChangeLines(*j, *r))
        fmt::print("  {}\n", s.mask().Apply(line));
      std::vector<std::string> approvals = ApprovalLines(*r);
      if (!approvals.empty()) {
        size_t accepted = 0;
        for (const job::ApprovalRecord& a : r->approvals) accepted += a.answer == "accept";
        fmt::print("approvals  {} asked, {} accepted, {} declined (by the policy)\n",
                   r->approvals.size(), accepted, r->approvals.size() - accepted);
        for (const std::string& line : approvals) fmt::print("  {}\n", line);
      }
    }
  }
  return 0;
}

// Hands what was added to `path` since `*offset` to `writer` as `stream`, masked; `final`
// also hands over what the masker held back.
void Drain(const std::string& path, long* offset, const char* stream, job::StreamMasker* masker,
           LogWriter& writer, bool final = false) {
  auto put = [&](const std::string& text) {
    if (!text.empty()) writer.Output(stream, text);
  };
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f != nullptr && std::fseek(f, *offset, SEEK_SET) == 0) {
    char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
      put(masker->Feed(std::string_view(buffer, n)));
      *offset += static_cast<long>(n);
    }
  }
  if (f != nullptr) std::fclose(f);
  if (final) put(masker->Finish());
}

// `berth logs JOB --check NAME`: the kept output of that check in the latest verification,
// masked again with what this caller knows.
int CheckLog(Session& s, const store::JobRecord& j, const JobsOptions& o) {
  Result<job::Receipt> receipt = job::LoadReceipt(j);
  if (!receipt) return Fail(receipt.error(), o);
  if (!receipt->verification || receipt->verification->checks.empty())
    return Fail(Error(Cause::kNotFound, "job " + j.id + " has no verification"), o);
  const job::Verification& v = *receipt->verification;
  std::string names;
  const job::CheckResult* found = nullptr;
  for (const job::CheckResult& c : v.checks) {
    names += (names.empty() ? "" : ", ") + c.name;
    if (c.name == o.check) found = &c;
  }
  if (found == nullptr)
    return Fail(
        Error(Cause::kNotFound, "the latest verification of job " + j.id + " has no check " +
                                    o.check + " (it has: " + names + ")"),
        o);
  std::optional<std::string> path = job::CheckLogPath(j.job_dir, v, o.check);
  if (!path || !sys::Exists(*path))
    return Fail(Error(Cause::kNotFound,
                      "the output of check " + o.check + " of job " + j.id +
                          " was not kept (it did not run, or ran before berth kept check logs, "
                          "or the job's directory is gone); its receipt holds the last 4 KiB "
                          "in verification.checks[].output_tail"),
                o);
  LogWriter writer(FormatOf(o.json));
  job::StreamMasker masker(s.mask());
  long offset = 0;
  Drain(*path, &offset, "check", &masker, writer, /*final=*/true);
  return 0;
}

int Logs(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  if (!o.check.empty()) return CheckLog(s, *j, o);
  LogWriter writer(FormatOf(o.json));
  int64_t seq = 0;
  auto events = [&] {
    Result<std::vector<store::Event>> added = s.store().ListEvents(j->id, seq);
    if (!added) return;
    for (const store::Event& e : *added) {
      writer.Event(e);
      seq = e.seq;
    }
  };
  long out_offset = 0, err_offset = 0;
  job::StreamMasker out_masker(s.mask()), err_masker(s.mask());
  WorkerOutput worker_output(s.mask());
  while (true) {
    events();
    Result<std::optional<store::JobRecord>> now = s.store().GetJob(j->id);
    const store::JobRecord& current = now && *now ? **now : *j;
    const bool ended = !now || !*now || store::IsTerminal(current.state);
    // The events an ending job writes after its terminal state (its receipt's).
    if (ended) events();
    // A worker's job runs on the worker's host: its output comes from the store.
    if (!j->source.empty() && !sys::Exists(j->job_dir + "/stdout")) {
      if (ended) {
        worker_output.Finish(s.store(), current, writer);
        return 0;
      }
      worker_output.Poll(s.store(), current, writer);
      if (!o.follow) {
        worker_output.Flush(writer);
        return 0;
      }
    } else {
      Drain(j->job_dir + "/stdout", &out_offset, "stdout", &out_masker, writer);
      Drain(j->job_dir + "/stderr", &err_offset, "stderr", &err_masker, writer);
      if (!o.follow || ended) {
        // With -f: the tail of a bounded output is written when the stream ends.
        Drain(j->job_dir + "/stdout", &out_offset, "stdout", &out_masker, writer, /*final=*/true);
        Drain(j->job_dir + "/stderr", &err_offset, "stderr", &err_masker, writer, /*final=*/true);
        return 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    IgnoreError(job::ReapStaleJobs(s.store()),
                "a busy store is swept again on the next tick of the follow loop");
  }
}

int Cancel(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  std::string who = s.ctx().identity.user;
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (store::IsTerminal(j->state)) {
      return Fail(Error(Cause::kInvalidArgument,
                        "job " + j->id + " already ended: " + store::StoredStateName(*j)),
                  FormatOf(o.json), 1);
    }
    Result<bool> moved =
        s.store().Transition(j->id, j->state, store::JobState::kCancelled,
                             "cancelled by " + who + "; workspace kept", kExitCancelled);
    if (!moved) return Fail(moved.error(), o);
    if (*moved) break;
    Result<std::optional<store::JobRecord>> fresh = s.store().GetJob(j->id);
    if (!fresh || !*fresh) return Fail(Error(Cause::kNotFound, "job vanished"), o);
    j = **fresh;
  }
  IgnoreError(s.store().AppendEvent(j->id, "cancel", "cancelled by " + who),
              "the cancel is recorded in the job's state; the event only says who asked");
  // The supervisor ends the agent's whole tree and writes the receipt.
  bool signalled = false;
  if (j->owner.host == sys::HostId()) {
    // Only the recorded process (pid and start time) is signalled, never one reusing its pid.
    Result<bool> sent =
        sys::AskToStop(static_cast<pid_t>(j->owner.pid), static_cast<uint64_t>(j->owner.pid_start));
    signalled = sent && *sent;
  }
  if (!signalled) {
    Result<std::optional<store::JobRecord>> fresh = s.store().GetJob(j->id);
    if (fresh && *fresh)
      IgnoreError(job::SaveRecordOnlyReceipt(s.store(), **fresh),
                  "the job is cancelled in the store; its receipt is a convenience");
  }
  if (o.json) {
    PrintJson({{"id", j->id}, {"state", "cancelled"}, {"signalled", signalled}});
    return 0;
  }
  fmt::print("berth: job {} cancelled{}\n", j->id,
             signalled ? "; its process tree is being ended" : "");
  return 0;
}

nlohmann::json FilesJson(const std::vector<git::FileDiff>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const git::FileDiff& f : files) {
    out.push_back({{"path", f.path},
                   {"old_path", f.old_path != f.path ? nlohmann::json(f.old_path) : nullptr},
                   {"status", std::string(1, f.status)},
                   {"insertions", f.insertions},
                   {"deletions", f.deletions},
                   {"binary", f.binary}});
  }
  return out;
}

int Diff(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  // A refused job committed nothing, nor did one that failed or went stale before its commit:
  // its kept workspace is collected with every path allowed and shown as a commit no ref names
  // (job/recollect.h).
  if (job::MayHoldKeptWork(*j)) {
    Result<git::Repository> discovered = git::Repository::Discover(j->repo);
    if (!discovered) return Fail(discovered.error(), o);
    git::Repository& repo = *discovered;
    std::vector<workspace::Refusal> kept_refusals;
    Result<std::string> kept = job::KeptChangesCommit(*j, repo, &kept_refusals);
    if (!kept && kept.error().cause() != Cause::kNotFound) return Fail(kept.error(), o);
    // The workspace is gone (berth gc): the receipt's list of changes is all there is.
    if (!kept && !o.json) fmt::print(stderr, "berth: {}\n", EscapeControls(kept.error().message()));
    if (kept) {
      nlohmann::json refusals = nlohmann::json::array();
      for (const workspace::Refusal& r : kept_refusals)
        refusals.push_back({{"path", r.path}, {"reason", r.reason}});
      if (o.json) {
        Result<std::vector<git::FileDiff>> files = repo.DiffFiles(j->base, *kept);
        if (!files) return Fail(files.error(), o);
        nlohmann::json out = {{"id", j->id},
                              {"base", j->base},
                              {"commit", nullptr},
                              {"state", store::JobStateName(j->state)},
                              {"state_reason", j->state_reason},
                              {"kept", *kept},
                              {"files", FilesJson(*files)},
                              {"uncollectable", refusals}};
        if (!o.stat) {
          Result<std::string> patch = repo.DiffPatch(j->base, *kept);
          if (!patch) return Fail(patch.error(), o);
          out["patch"] = *patch;
        }
        PrintJson(out);
        return 0;
      }
      fmt::print(stderr,
                 "berth: job {} is {} ({}); its kept workspace, not committed (berth "
                 "recollect {} collects it under the current policy):\n",
                 j->id, store::JobStateName(j->state), EscapeControls(j->state_reason), j->id);
      for (const workspace::Refusal& r : kept_refusals)
        fmt::print(stderr, "  never collectable {}: {}\n", QuotePath(r.path),
                   EscapeControls(r.reason));
      Result<std::string> text =
          o.stat ? repo.DiffStat(j->base, *kept) : repo.DiffPatch(j->base, *kept);
      if (!text) return Fail(text.error(), o);
      if (!o.stat && sys::IsTerminal(1)) *text = EscapeControls(*text, Newlines::kKeep);
      fmt::print("{}", *text);
      return 0;
    }
  }
  if (!j->commit) {
    // A job without a receipt (or with an unreadable one) has no changes to list.
    job::Receipt receipt = job::LoadReceiptOrRecord(*j);
    if (o.json) {
      nlohmann::json out = {{"id", j->id},
                            {"base", j->base},
                            {"commit", nullptr},
                            {"state", store::JobStateName(j->state)},
                            {"state_reason", j->state_reason},
                            {"changes", nlohmann::json::array()},
                            {"refusals", nlohmann::json::array()}};
      nlohmann::json encoded = receipt.ToJson();
      out["changes"] = encoded["changes"]["files"];
      out["refusals"] = encoded["changes"]["refusals"];
      PrintJson(out);
      return 0;
    }
    fmt::print(stderr, "berth: job {} has no commit ({}{})\n", j->id, store::JobStateName(j->state),
               j->state_reason.empty() ? "" : ": " + EscapeControls(j->state_reason));
    for (const std::string& line : ReceiptChangeLines(*j, receipt)) fmt::print("  {}\n", line);
    return 0;
  }
  Result<git::Repository> repo = git::Repository::Discover(j->repo);
  if (!repo) return Fail(repo.error(), o);
  if (o.json) {
    Result<std::vector<git::FileDiff>> files = repo->DiffFiles(j->base, *j->commit);
    if (!files) return Fail(files.error(), o);
    nlohmann::json out = {
        {"id", j->id}, {"base", j->base}, {"commit", *j->commit}, {"files", FilesJson(*files)}};
    if (!o.stat) {
      Result<std::string> patch = repo->DiffPatch(j->base, *j->commit);
      if (!patch) return Fail(patch.error(), o);
      out["patch"] = *patch;
    }
    PrintJson(out);
    return 0;
  }
  Result<std::string> text =
      o.stat ? repo->DiffStat(j->base, *j->commit) : repo->DiffPatch(j->base, *j->commit);
  if (!text) return Fail(text.error(), o);
  // The patch carries the agent's bytes: to a terminal, its control sequences are escaped.
  if (!o.stat && sys::IsTerminal(1)) *text = EscapeControls(*text, Newlines::kKeep);
  fmt::print("{}", *text);
  return 0;
}

int Verify(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  if (!j->commit)
    return Fail(Error(Cause::kInvalidArgument, "job " + j->id + " has no commit to verify (" +
                                                   store::JobStateName(j->state) + ")"),
                o);
  if (Status decoded = job::FailIfUndecodable(s.store(), &*j); !decoded)
    return cli::Fail(decoded.error(), FormatOf(o.json), kExitFailed);
  Result<job::RunRequest> request = job::RunRequest::FromJson(j->request_json);
  if (!request) return Fail(request.error(), o);
  // The checks of the policy as it is now: re-verifying after the policy changed is the point.
  Result<policy::Policy> pol = job::LoadRepoPolicy(j->repo);
  if (!pol) return Fail(pol.error(), FormatOf(o.json), kExitPolicy);
  request->checks.clear();
  for (const policy::Check& c : pol->verify) request->checks.push_back(job::CheckSpecOf(c));
  request->output_limit = pol->defaults.output_limit_bytes;
  if (request->checks.empty()) {
    if (o.json) {
      PrintJson(
          {{"id", j->id}, {"commit", *j->commit}, {"passed", true}, {"verification", nullptr}});
      return 0;
    }
    fmt::print("berth: the policy declares no checks; nothing to verify\n");
    return 0;
  }
  Result<git::Repository> repo = git::Repository::Discover(j->repo);
  if (!repo) return Fail(repo.error(), o);
  store::JobRecord record = *j;
  record.policy_hash = pol->sha256;
  Result<job::Verification> v = job::RunChecks(
      s.ctx(), *request, record, *j->commit, *repo,
      [&](const std::string& step, const std::string& detail) {
        fmt::print(stderr, "[berth {}] {}\n", step, EscapeControls(detail));
        IgnoreError(s.store().AppendEvent(j->id, step, detail),
                    "events are advisory; the verification is recorded in the receipt");
      });
  if (!v) return Fail(v.error(), o);
  v->by = s.ctx().identity.user;
  v->via = "berth verify";
  if (Status saved = job::RecordVerification(s.store(), *j, *v); !saved)
    return Fail(saved.error(), o);
  const int exit_code = v->required_passed ? 0 : kExitVerificationFailed;
  if (o.json) {
    PrintJson({{"id", j->id},
               {"commit", *j->commit},
               {"passed", v->required_passed},
               {"verification", v->ToJson()}});
    return exit_code;
  }
  for (const job::CheckResult& c : v->checks)
    fmt::print("  {} {:<16} {}{}\n", c.passed ? "ok  " : "FAIL", c.name, EscapeControls(c.reason),
               c.required ? "" : " (optional)");
  fmt::print("berth: verification of {} {}\n", j->id,
             v->required_passed ? "passed" : "failed: a required check did not pass");
  if (j->state == store::JobState::kVerificationFailed && v->required_passed && !j->landed_at_ms)
    fmt::print("berth: job {} is landable now (berth land {})\n", j->id, j->id);
  return exit_code;
}

int Recollect(Session& s, const JobsOptions& o) {
  Result<store::JobRecord> j = s.store().FindJob(o.job);
  if (!j) return Fail(j.error(), o);
  Result<job::Recollected> r = job::Recollect(
      s.ctx(), s.store(), *j, [&](const std::string& step, const std::string& detail) {
        if (!o.json) fmt::print(stderr, "[berth {}] {}\n", step, EscapeControls(detail));
      });
  if (!r) {
    const int code = r.error().cause() == Cause::kPolicyDenied ? kExitPolicy : kExitFailed;
    return cli::Fail(r.error(), FormatOf(o.json), code);
  }
  if (!r->job) {
    if (o.json) {
      nlohmann::json refusals = nlohmann::json::array();
      for (const workspace::Refusal& f : r->refusals)
        refusals.push_back({{"path", f.path}, {"reason", f.reason}});
      PrintJson({{"from", j->id}, {"job", nullptr}, {"refusals", refusals}});
      return kExitRefused;
    }
    fmt::print(stderr, "berth: the current policy still refuses {} change(s) of job {}:\n",
               r->refusals.size(), j->id);
    for (const workspace::Refusal& f : r->refusals)
      fmt::print(stderr, "  refused  {}: {}\n", QuotePath(f.path), EscapeControls(f.reason));
    return kExitRefused;
  }
  const store::JobRecord& done = *r->job;
  if (o.json) {
    PrintJson({{"from", j->id}, {"job", job::JobToJson(done, std::nullopt)}});
  } else {
    fmt::print("berth: job {} recollected as job {}: {} ({})\n", j->id, done.id,
               store::JobStateName(done.state), EscapeControls(done.state_reason));
    fmt::print("  commit   {} on branch {}\n", done.commit->substr(0, 12), done.branch);
    if (Result<job::Receipt> receipt = job::LoadReceipt(done))
      if (std::string next = NextLine(done, *receipt); !next.empty())
        fmt::print("  next     {}\n", EscapeControls(next));
  }
  return done.state == store::JobState::kCompleted ? 0 : kExitVerificationFailed;
}

}  // namespace

void AddJobsCommands(CLI::App& app, JobsOptions* o) {
  CLI::App* ls =
      app.add_subcommand("ls", "List jobs (this repository's newest 20; --all: every job)");
  ls->add_flag("--all", o->all, "every job of every repository");
  ls->add_flag("--json", o->json, "an array of job objects");
  CLI::App* show = app.add_subcommand("show", "Show a job: state, timings, changes, receipt");
  show->add_option("job", o->job, "job id or unique prefix")->required();
  show->add_flag("--json", o->json, "the job object");
  CLI::App* logs = app.add_subcommand("logs", "Print a job's events and output");
  logs->add_option("job", o->job, "job id or unique prefix")->required();
  logs->add_flag("-f,--follow", o->follow, "keep following until the job ends");
  logs->add_flag("--json", o->json, "one JSON object per event or output chunk, per line");
  logs->add_option("--check", o->check,
                   "the kept output of this check of the latest verification (show lists them)");
  CLI::App* cancel = app.add_subcommand("cancel", "Cancel a live job; its workspace is kept");
  cancel->add_option("job", o->job, "job id or unique prefix")->required();
  cancel->add_flag("--json", o->json, "the outcome as JSON");
  CLI::App* diff = app.add_subcommand("diff", "Show a job's changes against its base");
  diff->add_option("job", o->job, "job id or unique prefix")->required();
  diff->add_flag("--stat", o->stat, "a diffstat instead of the patch");
  diff->add_flag("--json", o->json, "files with line counts (and the patch, without --stat)");
  CLI::App* verify = app.add_subcommand("verify", "Re-run the policy's checks on a job commit");
  verify->add_option("job", o->job, "job id or unique prefix")->required();
  verify->add_flag("--json", o->json, "the verification as JSON");
  CLI::App* recollect = app.add_subcommand(
      "recollect",
      "Collect the kept workspace of a job that ended without a commit (refused, failed, "
      "stale) again under the current policy");
  recollect->add_option("job", o->job, "job id or unique prefix")->required();
  recollect->add_flag("--json", o->json, "the new job as JSON");
}

int RunJobsCommand(const std::string& name, const GlobalOptions& global, const JobsOptions& o) {
  // `berth logs -f` follows a job for as long as it runs: it waits out an outage of the store
  // (saying so once) instead of giving up after a command's wait (docs/store.md "Outages").
  if (name == "logs" && o.follow) {
    store::RetryOptions forever;
    forever.give_up_after_ms = store::kRetryForever;
    store::SetStoreRetry(std::move(forever));
  }
  Result<Session> s = Session::Open(global);
  if (!s) return Fail(s.error(), o);
  if (name == "ls") return List(*s, o);
  if (name == "show") return Show(*s, o);
  if (name == "logs") return Logs(*s, o);
  if (name == "cancel") return Cancel(*s, o);
  if (name == "diff") return Diff(*s, o);
  if (name == "verify") return Verify(*s, o);
  if (name == "recollect") return Recollect(*s, o);
  return kExitUsage;
}

}  // namespace berth::cli
