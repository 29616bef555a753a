#include "worker/localize.h"

#include <nlohmann/json.hpp>

#include "job/provider_setup.h"
#include "job/run_request.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::worker {

std::string LocalJobDir(const std::string& state_dir, const std::string& job_id, int attempt) {
  return state_dir + "/jobs/" + job_id + "-" + std::to_string(attempt);
}

Result<LocalJob> LocalizeJob(const job::JobContext& ctx, const store::JobRecord& job,
                             const std::string& mirror) {
  job::RunRequest r = TRY_CTX(job::RunRequest::FromJson(job.request_json), "reading the job");
  LocalJob local;
  local.mirror = mirror;
  local.job_dir = LocalJobDir(ctx.state_dir, job.id, job.attempt);
  TRY(sys::MakeDirs(local.job_dir, 0700));
  r.state_dir = ctx.state_dir;
  r.extra_hidden = ctx.user.hidden_paths;
  r.auto_land = false;
  r.with_uncommitted = false;
  if (r.has_prompt) {
    r.prompt_file = local.job_dir + "/prompt.txt";
    TRY(sys::WriteFileAtomic(r.prompt_file, r.prompt_text, 0600));
  }
  if (r.provider != "command") {
    // Found again from scratch: what the submitter's host had says nothing of this one.
    r.state_dirs.clear();
    r.state_files.clear();
    r.allowlist.clear();
    r.credential_names.clear();
    r.provider_cli.clear();
    job::JobContext here = ctx;
    here.cwd = mirror;
    const job::ProviderChoice choice{r.provider, r.model, r.effort, r.network};
    TRY_CTX(job::SetUpProvider(here, choice, r.prompt_text, &r),
            "setting up the " + r.provider + " CLI on this worker");
  }
  local.request_json = r.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return local;
}

void ApplyLocalJob(const LocalJob& local, store::JobRecord* job) {
  job->repo = local.mirror;
  job->job_dir = local.job_dir;
  job->request_json = local.request_json;
}

}  // namespace berth::worker
