#include "cli/gc_command.h"

#include <fmt/core.h>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/output.h"
#include "gc/gc.h"
#include "job/job_json.h"
#include "store/open_store.h"
#include "sys/process.h"

namespace berth::cli {

namespace {

// One line for every job gc keeps: how many, of which kind, and what removes them. Per-job
// lines only with --verbose (a busy repository has dozens).
void PrintKeptSummary(const gc::GcReport& r) {
  if (r.kept.empty()) return;
  size_t live = 0, unlanded = 0, recent = 0;
  for (const gc::GcJob& j : r.kept) {
    live += j.kept_for == gc::KeptFor::kLive;
    unlanded += j.kept_for == gc::KeptFor::kUnlanded;
    recent += j.kept_for == gc::KeptFor::kRecent;
  }
  std::vector<std::string> parts;
  if (unlanded > 0) parts.push_back(std::to_string(unlanded) + " not landed or discarded");
  if (live > 0) parts.push_back(std::to_string(live) + " still live");
  if (recent > 0) parts.push_back(std::to_string(recent) + " ended within --older-than");
  std::string list;
  for (const std::string& p : parts) list += (list.empty() ? "" : ", ") + p;
  fmt::print("kept {} job(s): {}", r.kept.size(), list);
  if (unlanded > 0)
    fmt::print("; `berth gc --discard JOB` removes one now, `berth land JOB` lands it first");
  fmt::print(" (`berth gc --verbose` lists them)\n");
}

void PrintReport(const gc::GcReport& r, bool verbose) {
  const char* would = r.dry_run ? "would " : "";
  for (const std::string& d : r.discarded) fmt::print("{}discard {}\n", would, d);
  for (const gc::GcKill& k : r.killed)
    fmt::print("{}end leftover supervisor of {} (pid {}): {}\n", would, k.id, k.pid, k.how);
  for (const gc::GcJob& j : r.removed) {
    std::vector<std::string> what;
    if (j.dir_removed) what.push_back("workspace " + FormatBytes(j.bytes));
    if (j.branch_removed) what.push_back("branch " + j.branch);
    if (!j.snapshots_unregistered.empty()) what.push_back("snapshot registration");
    std::string list;
    for (const std::string& w : what) list += (list.empty() ? "" : ", ") + w;
    fmt::print("{} {} ({}): {}\n", r.dry_run ? "would remove" : "removed", j.id, j.why, list);
  }
  if (verbose) {
    for (const gc::GcJob& j : r.kept) fmt::print("kept {}: {}\n", j.id, j.why);
  } else {
    PrintKeptSummary(r);
  }
  for (const gc::GcBranch& b : r.kept_branches)
    fmt::print("kept branch {} in {}: {}\n", b.branch, b.repo, b.why);
  for (const std::string& s : r.removed_snapshots)
    fmt::print("{}snapshot {}: no job uses it\n", r.dry_run ? "would remove " : "removed ", s);
  for (const std::string& key : r.removed_layers)
    fmt::print("{}environment layer {}: no job needs it\n",
               r.dry_run ? "would remove " : "removed ", key.substr(0, 12));
  for (const gc::GcOrphan& o : r.orphans) {
    std::string name = o.kind == "branch" ? o.name + " in " + o.repo : o.name;
    fmt::print(
        "orphan {} {}: {}\n", o.kind, name,
        o.removed ? std::string(r.dry_run ? "would remove (" : "removed (") + o.why + ")" : o.why);
  }
  for (const std::string& w : r.warnings) PrintWarning(w);
  fmt::print("{} {}\n", r.dry_run ? "would free" : "freed", FormatBytes(r.freed_bytes));
}

}  // namespace

void AddGcCommand(CLI::App& app, GcCommandOptions* o) {
  CLI::App* gc = app.add_subcommand(
      "gc", "Remove the workspaces and branches of landed or discarded jobs; report the rest");
  gc->add_flag("--dry-run", o->dry_run, "report what would be removed, change nothing");
  gc->add_option("--older-than", o->older_than, "only jobs that ended more than DUR ago (7d, 12h)");
  gc->add_option("--discard", o->discard,
                 "discard a finished job (id or prefix), orphan job directory or orphan branch")
      ->allow_extra_args(false);
  gc->add_flag("--json", o->json, "the report as JSON");
  gc->add_flag("-v,--verbose", o->verbose,
               "one line per kept job and why (default: a summary line)");
}

int RunGcCommand(const GlobalOptions& global, const GcCommandOptions& o) {
  const Format format = FormatOf(o.json);
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), format);
  gc::GcOptions options;
  options.mode = o.dry_run ? gc::GcMode::kDryRun : gc::GcMode::kApply;
  options.discard = o.discard;
  options.user = ctx->identity.user;
  options.now_ms = sys::WallMillis();
  if (!o.older_than.empty()) {
    Result<int64_t> ms = ParsePositiveDuration("--older-than", o.older_than);
    if (!ms) return Fail(ms.error(), format, kExitUsage);
    options.older_than_ms = *ms;
  }
  Result<std::unique_ptr<store::Store>> store = store::OpenStore(ctx->store_location);
  if (!store) return Fail(store.error(), format);
  Result<gc::GcReport> report = gc::CollectGarbage(**store, ctx->state_dir, options);
  if (!report) return Fail(report.error(), format);
  if (o.json) {
    fmt::print("{}\n", job::DumpJson(gc::GcReportToJson(*report), 2));
  } else {
    PrintReport(*report, o.verbose);
  }
  return 0;
}

}  // namespace berth::cli
