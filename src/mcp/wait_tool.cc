// `wait`: returns when the job ends or its bound passes, reporting each new event of the job
// and the growth of its output as progress notifications on the way.
#include <cmath>

#include "job/job_json.h"
#include "job/stale.h"
#include "job/stored_records.h"
#include "mcp/tools.h"
#include "sys/file_status.h"

namespace berth::mcp {

namespace {

constexpr int kPollMs = 200;
// How long `wait` waits for the receipt of a job it saw end.
constexpr int64_t kReceiptGraceMs = 5000;

uint64_t SizeOf(const std::string& path) {
  std::optional<sys::FileStatus> st = sys::LinkStatus(path);
  return st ? st->size : 0;
}

}  // namespace

Tool WaitTool(Backend& backend) {
  Tool t;
  t.name = "wait";
  t.title = "Wait for a job";
  t.description =
      "Wait until the job ends, at most timeout_seconds (default 30, at most 50: call again to "
      "keep waiting). Reports the job's steps and output growth as progress. The answer says "
      "`job ID STATE` and `done: true|false`.";
  t.params = {JobParam(),
              {"timeout_seconds",
               Param::Type::kNumber,
               false,
               "how long to wait at most (default 30, at most 50)",
               {},
               0.0,
               50.0}};
  t.idempotent = true;
  t.run = [&backend](const nlohmann::json& args, CallContext& call) -> ToolResult {
    const double seconds =
        args.contains("timeout_seconds") ? args["timeout_seconds"].get<double>() : 30.0;
    const int64_t deadline =
        sys::MonotonicMillis() + static_cast<int64_t>(std::lround(seconds * 1000));
    Result<job::MaskingStore*> store = backend.Store();
    if (!store) return ToolError("cannot open berth's store: " + store.error().ToString());
    Result<store::JobRecord> found = (*store)->FindJob(args["job"]);
    if (!found) return ToolError(found.error().ToString());
    store::JobRecord j = *found;
    // A job whose stored records cannot be decoded ends failed now, not at the timeout.
    IgnoreError(job::FailIfUndecodable(**store, &j),
                "the job is reported below with its state and reason either way");
    int64_t seq = 0;
    uint64_t out_size = 0, err_size = 0;
    bool cancelled = false;
    int64_t ended_at = -1;  // when the job was first seen terminal
    while (true) {
      if (Result<std::vector<store::Event>> events = (*store)->ListEvents(j.id, seq)) {
        for (const store::Event& e : *events) {
          call.Progress("[" + e.step + "] " + e.detail);
          seq = e.seq;
        }
      }
      const uint64_t out_now = SizeOf(j.job_dir + "/stdout");
      const uint64_t err_now = SizeOf(j.job_dir + "/stderr");
      if (out_now != out_size || err_now != err_size) {
        out_size = out_now;
        err_size = err_now;
        call.Progress("output: " + std::to_string(out_size) + " bytes on stdout, " +
                      std::to_string(err_size) + " on stderr");
      }
      // The supervisor writes the receipt just after the terminal state: a client that lands
      // or reads the receipt the moment `wait` returns must find the final one. A receipt
      // that never comes (the store refused it) is waited for only kReceiptGraceMs.
      if (store::IsTerminal(j.state)) {
        if (ended_at < 0) ended_at = sys::MonotonicMillis();
        if (j.receipt_json || sys::MonotonicMillis() - ended_at >= kReceiptGraceMs) break;
      }
      if (sys::MonotonicMillis() >= deadline) break;
      if (!call.Pump(
              static_cast<int>(std::min<int64_t>(kPollMs, deadline - sys::MonotonicMillis())))) {
        cancelled = true;
        break;
      }
      IgnoreError(job::ReapStaleJobs(**store), "a busy store is swept again on the next tick");
      Result<std::optional<store::JobRecord>> now = (*store)->GetJob(j.id);
      if (now && *now) j = **now;
    }
    const bool done = store::IsTerminal(j.state);
    nlohmann::json shown = job::JobToJson(j);
    const std::string state = store::JobStateName(j.state);
    const std::string status = j.state_reason.empty() ? state : j.state_reason;
    nlohmann::json structured = {{"job", j.id},
                                 {"state", state},
                                 {"done", done},
                                 {"exit_code", shown["exit_code"]},
                                 {"status", status}};
    std::string text = "job " + j.id + " " + state + "\ndone: " + (done ? "true" : "false");
    if (!j.state_reason.empty()) text += "\nreason: " + j.state_reason;
    if (j.exit_code) text += "\nexit code: " + std::to_string(*j.exit_code);
    if (!done)
      text += cancelled ? "\nthe wait was cancelled" : "\ncall `wait` again to keep waiting";
    if (done && j.commit) text += "\ncommit: " + *j.commit + " (call `diff` to see it)";
    return ToolResult{text, structured, false};
  };
  return t;
}

}  // namespace berth::mcp
