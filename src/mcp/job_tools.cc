// The tools that read a job or stop it: show/status, ls, logs, diff, cancel.
#include <algorithm>

#include "git/repository.h"
#include "job/job_json.h"
#include "job/receipt.h"
#include "job/secret_mask.h"
#include "mcp/tools.h"
#include "sys/fs.h"

namespace berth::mcp {

namespace {

Param PageParam(const char* name, const char* description, std::optional<double> max) {
  return Param{name, Param::Type::kInteger, false, description, {}, 0.0, max};
}

std::string PageTrailer(const Page& p) {
  return "\n[bytes " + std::to_string(p.offset) + "-" + std::to_string(p.next_offset) + " of " +
         std::to_string(p.size) + "; next_offset " + std::to_string(p.next_offset) +
         "; eof: " + (p.eof ? "true" : "false") + "]";
}

int64_t IntArg(const nlohmann::json& args, const char* name, int64_t fallback) {
  return args.contains(name) ? static_cast<int64_t>(args[name].get<double>()) : fallback;
}

}  // namespace

Result<std::string> JobStream(Backend& backend, const std::string& job, const std::string& stream,
                              std::string* job_id) {
  job::MaskingStore* store = TRY(backend.Store());
  store::JobRecord j = TRY(store->FindJob(job));
  *job_id = j.id;
  if (stream == "events") {
    std::vector<store::Event> events = TRY(store->ListEvents(j.id, 0));
    std::string text;
    for (const store::Event& e : events) {
      nlohmann::json line = {{"type", "event"},
                             {"seq", e.seq},
                             {"at", job::IsoTime(e.at_ms)},
                             {"step", e.step},
                             {"detail", e.detail}};
      text += job::DumpJson(line) + "\n";
    }
    return text;
  }
  // "check:NAME": the kept output of that check of the latest verification, as
  // `berth logs JOB --check NAME` prints it.
  std::string path = j.job_dir + "/" + stream;
  if (stream.rfind("check:", 0) == 0) {
    const std::string name = stream.substr(6);
    job::Receipt receipt = TRY(job::LoadReceipt(j));
    std::optional<std::string> log;
    if (receipt.verification) log = job::CheckLogPath(j.job_dir, *receipt.verification, name);
    if (!log)
      return Error(Cause::kNotFound,
                   "the latest verification of job " + j.id + " kept no output of check " + name);
    path = *log;
  }
  // What `berth logs` prints of the stream: the file, masked with the secrets this caller
  // knows. Offsets count bytes of the masked stream.
  Result<std::string> raw = sys::ReadFile(path);
  if (!raw) return std::string();
  job::StreamMasker masker(store->mask());
  std::string masked = masker.Feed(*raw);
  masked += masker.Finish();
  return masked;
}

Result<nlohmann::json> JobDiff(Backend& backend, const std::string& job) {
  CommandOutput out = TRY(backend.Berth({"diff", "--json", job}, 45000));
  if (out.exit_code != 0 || !out.json.is_object() || out.json.contains("error"))
    return Error(Cause::kNotFound, FailureText(out));
  return out.json;
}

Tool ShowTool(Backend& backend, const char* name) {
  Tool t;
  t.name = name;
  t.title = std::string(name) == "show" ? "Show a job" : "A job's status";
  t.description =
      "The job as `berth show --json` prints it: state, timings, agent, branch, commit, "
      "receipt (changes, refusals, verification).";
  t.params = {JobParam()};
  t.idempotent = true;
  t.run = [&backend](const nlohmann::json& args, CallContext&) -> ToolResult {
    Result<CommandOutput> out = backend.Berth({"show", "--json", args["job"]}, 30000);
    if (!out) return ToolError(out.error().ToString());
    if (out->exit_code != 0 || !out->json.is_object()) return ToolError(FailureText(*out));
    return ToolResult{job::DumpJson(out->json, 2), out->json, false};
  };
  return t;
}

Tool LsTool(Backend& backend) {
  Tool t;
  t.name = "ls";
  t.title = "List jobs";
  t.description = "This repository's jobs, newest first, as `berth ls --json` prints them.";
  t.params = {
      {"state",
       Param::Type::kString,
       false,
       "only jobs in this state",
       {"queued", "preparing", "running", "collecting", "verifying", "completed",
        "verification-failed", "refused", "child-failed", "malformed-output", "unavailable",
        "unauthenticated", "timed-out", "cancelled", "stale", "failed"}},
      {"limit", Param::Type::kInteger, false, "at most this many (default 20)", {}, 1.0, 1000.0}};
  t.idempotent = true;
  t.run = [&backend](const nlohmann::json& args, CallContext&) -> ToolResult {
    const int64_t limit = IntArg(args, "limit", 20);
    // --all, then this repository's: `berth ls` alone stops at 20.
    Result<CommandOutput> out = backend.Berth({"ls", "--json", "--all"}, 30000);
    if (!out) return ToolError(out.error().ToString());
    if (out->exit_code != 0 || !out->json.is_array()) return ToolError(FailureText(*out));
    // Jobs record their repository's root: the server may run in a subdirectory of it.
    std::string root = backend.repo();
    if (Result<git::Repository> repo = git::Repository::Discover(root)) root = repo->workdir();
    if (Result<std::string> real = sys::RealPath(root)) root = *real;
    nlohmann::json jobs = nlohmann::json::array();
    std::string text;
    for (const nlohmann::json& j : out->json) {
      if (!j.is_object() || Str(j, "repo") != root) continue;
      if (args.contains("state") && Str(j, "state") != args["state"]) continue;
      if (static_cast<int64_t>(jobs.size()) >= limit) break;
      jobs.push_back(j);
      text += "job " + Str(j, "id") + " " + Str(j, "state") + " agent " + Str(j, "agent") + "\n";
    }
    if (text.empty()) text = "no jobs\n";
    return ToolResult{text, {{"jobs", jobs}}, false};
  };
  return t;
}

Tool LogsTool(Backend& backend) {
  Tool t;
  t.name = "logs";
  t.title = "Read a job's logs";
  t.description =
      "A page of the job's stdout, stderr or events (one JSON object per line), or with "
      "`check` the kept output of that check of the latest verification (`berth logs "
      "--check`), masked like `berth logs`. Read on from next_offset until eof.";
  t.params = {JobParam(),
              {"stream",
               Param::Type::kString,
               false,
               "stdout (default), stderr or events",
               {"stdout", "stderr", "events"}},
              {"check",
               Param::Type::kString,
               false,
               "a check's name (berth show lists them): its output instead of the stream",
               {}},
              PageParam("offset", "the first byte (default 0)", std::nullopt),
              PageParam("limit", "at most this many bytes (default and most 65536)",
                        static_cast<double>(kMaxPage))};
  t.idempotent = true;
  t.run = [&backend](const nlohmann::json& args, CallContext&) -> ToolResult {
    const std::string stream =
        args.contains("check") ? "check:" + Str(args, "check") : Str(args, "stream", "stdout");
    std::string id;
    Result<std::string> all = JobStream(backend, args["job"], stream, &id);
    if (!all) return ToolError(all.error().ToString());
    Page p = PageOf(*all, IntArg(args, "offset", 0), IntArg(args, "limit", kMaxPage));
    nlohmann::json structured = {
        {"job", id},      {"stream", stream}, {"offset", p.offset}, {"next_offset", p.next_offset},
        {"size", p.size}, {"eof", p.eof},     {"data", p.data}};
    return ToolResult{p.data + PageTrailer(p), structured, false};
  };
  return t;
}

Tool DiffTool(Backend& backend) {
  Tool t;
  t.name = "diff";
  t.title = "A job's diff";
  t.description =
      "A page of the job's committed patch against its base, as `berth diff` prints it, with "
      "the changed files (a refused job: its kept workspace's patch, not committed). Read on "
      "from next_offset until eof.";
  t.params = {JobParam(), PageParam("offset", "the first byte (default 0)", std::nullopt),
              PageParam("limit", "at most this many bytes (default and most 65536)",
                        static_cast<double>(kMaxPage))};
  t.idempotent = true;
  t.run = [&backend](const nlohmann::json& args, CallContext&) -> ToolResult {
    Result<nlohmann::json> d = JobDiff(backend, args["job"]);
    if (!d) return ToolError(d.error().message());
    const std::string patch = Str(*d, "patch");
    Page p = PageOf(patch, IntArg(args, "offset", 0), IntArg(args, "limit", kMaxPage));
    nlohmann::json structured = {
        {"job", Str(*d, "id")},
        {"base", Field(*d, "base")},
        {"commit", Field(*d, "commit")},
        {"files", d->contains("files") ? Field(*d, "files") : Field(*d, "changes")},
        {"offset", p.offset},
        {"next_offset", p.next_offset},
        {"size", p.size},
        {"eof", p.eof},
        {"patch", p.data}};
    std::string text = p.data;
    // A refused job's kept workspace (`berth diff`): its patch, said to be uncommitted.
    if (Field(*d, "commit").is_null() && d->contains("kept"))
      text = "job " + Str(*d, "id") + " is refused; its kept workspace, not committed (berth " +
             "recollect collects it under the current policy):\n" + p.data;
    else if (Field(*d, "commit").is_null())
      text = "job " + Str(*d, "id") + " has no commit (" + Str(*d, "state") + ")";
    return ToolResult{text + PageTrailer(p), structured, false};
  };
  return t;
}

Tool CancelTool(Backend& backend) {
  Tool t;
  t.name = "cancel";
  t.title = "Cancel a job";
  t.description = "Cancel a live job, as `berth cancel`; its workspace is kept.";
  t.params = {JobParam()};
  t.read_only = false;
  t.run = [&backend](const nlohmann::json& args, CallContext&) -> ToolResult {
    Result<CommandOutput> out = backend.Berth({"cancel", "--json", args["job"]}, 30000);
    if (!out) return ToolError(out.error().ToString());
    if (out->exit_code != 0) return ToolError(FailureText(*out));
    std::string id = args["job"];
    if (out->json.is_object() && out->json.contains("id") && out->json["id"].is_string())
      id = out->json["id"];
    return ToolResult{"job " + id + " cancelled", out->json.is_discarded() ? nullptr : out->json,
                      false};
  };
  return t;
}

}  // namespace berth::mcp
