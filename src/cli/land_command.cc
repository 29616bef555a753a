#include "cli/land_command.h"

#include <fmt/core.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/exit_codes.h"
#include "cli/output.h"
#include "job/job_json.h"
#include "job/stale.h"
#include "land/land.h"
#include "store/open_store.h"

namespace berth::cli {

namespace {

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

void PrintHuman(const land::LandResult& r) {
  if (r.refused()) {
    fmt::print(stderr, "berth: refusing to land {}: {}\n", r.job, EscapeControls(r.refused_reason));
    for (const std::string& path : r.conflicts)
      fmt::print(stderr, "  conflict: {}\n", QuotePath(path));
    for (const std::string& path : r.dirty)
      fmt::print(stderr, "  uncommitted: {}\n", QuotePath(path));
    return;
  }
  const char* where = r.checked_out ? "checked out" : "not checked out";
  if (r.dry_run) {
    fmt::print("berth: {} would land on {} ({}) at {} without conflicts; {} path(s):\n", r.job,
               r.target, where, Short(r.old_head), r.paths.size());
  } else {
    fmt::print("berth: landed {} on {} ({}): {} -> {}{}; {} path(s):\n", r.job, r.target, where,
               Short(r.old_head), Short(r.new_commit),
               r.signed_format.empty() ? "" : ", signed (" + r.signed_format + ")", r.paths.size());
  }
  for (const std::string& path : r.paths) fmt::print("  {}\n", QuotePath(path));
}

}  // namespace

void AddLandCommand(CLI::App& app, LandOptions* o) {
  CLI::App* land = app.add_subcommand("land", "Apply a completed job's commit to a branch");
  land->add_option("job", o->job, "job id or unique prefix")->required();
  land->add_option("--onto", o->onto, "the target branch (default: the policy's, else current)");
  land->add_flag("--dry-run", o->dry_run, "report what would happen; change nothing");
  land->add_flag("--json", o->json, "print the result as JSON");
  land->add_flag("--reverify", o->reverify,
                 "re-run the current policy's checks first (needed when the policy changed)");
}

int RunLandCommand(const GlobalOptions& global, const LandOptions& o) {
  const Format format = FormatOf(o.json);
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), format);
  Result<std::unique_ptr<store::Store>> store = store::OpenStore(ctx->store_location);
  if (!store) return Fail(store.error(), format);
  if (Status reaped = job::ReapStaleJobs(**store); !reaped) return Fail(reaped.error(), format);
  Result<store::JobRecord> record = (*store)->FindJob(o.job);
  if (!record) return Fail(record.error(), format);

  land::LandOptions options;
  options.onto = o.onto;
  options.dry_run = o.dry_run;
  options.reverify = o.reverify;
  options.on_event = [](const std::string& step, const std::string& detail) {
    fmt::print(stderr, "[berth {}] {}\n", step, EscapeControls(detail));
  };
  Result<land::LandResult> result = land::Land(*ctx, **store, *record, options);
  if (!result) return Fail(result.error(), format);
  if (o.json) {
    PrintJson(result->ToJson());
  } else {
    PrintHuman(*result);
  }
  return result->refused() ? kExitFailed : 0;
}

}  // namespace berth::cli
