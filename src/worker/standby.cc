#include "worker/standby.h"

#include <nlohmann/json.hpp>

#include "base/json_read.h"
#include "base/json_text.h"
#include "sys/fs.h"
#include "sys/message_socket.h"
#include "sys/spawn.h"
#include "worker/localize.h"

namespace berth::worker {

namespace {

std::string EncodeHandoff(const store::Claim& claim, const std::string& mirror) {
  return JsonText(nlohmann::json{{"job", claim.job_id},
                                 {"attempt", claim.attempt},
                                 {"worker", claim.worker_id},
                                 {"mirror", mirror}});
}

Result<ClaimedJob> DecodeHandoff(const std::string& data) {
  Result<nlohmann::json> parsed = ParseJson(data, "the handed-over job");
  if (!parsed) return parsed.error();
  Result<JsonReader> r = JsonReader::Of(*parsed, "the handed-over job");
  if (!r) return r.error();
  for (const char* key : {"job", "attempt", "worker", "mirror"}) TRY(r->Require(key));
  ClaimedJob claimed;
  TRY(r->Read("job", &claimed.claim.job_id));
  TRY(r->Read("attempt", &claimed.claim.attempt));
  TRY(r->Read("worker", &claimed.claim.worker_id));
  TRY(r->Read("mirror", &claimed.mirror));
  return claimed;
}

}  // namespace

Result<Standby> Standby::Start(const job::JobContext& ctx) {
  auto [ours, theirs] = TRY(sys::MakeSocketPair());
  sys::SpawnOptions spawn;
  // The store's location reaches the child as BERTH_STORE, never on its command line.
  spawn.argv = {ctx.self_exe, "--state-dir", ctx.state_dir, "worker-standby"};
  spawn.inherit_env = true;
  spawn.stdio[0] = theirs.get();
  sys::Process process = TRY(sys::Spawn(spawn));
  return Standby(std::move(process), std::move(ours), sys::MonotonicMillis());
}

Standby::~Standby() {
  if (!socket_.valid() || !process_.valid()) return;
  socket_.Reset();
  IgnoreError(sys::PollReadable({process_.pidfd()}, kStandbyEndMillis),
              "one that has not ended is killed");
}

Result<sys::Process> Standby::Hand(const store::Claim& claim, const std::string& mirror,
                                   int log_fd) && {
  TRY(sys::SendMessage(socket_.get(), EncodeHandoff(claim, mirror), log_fd));
  socket_.Reset();  // one job per standby: it reads no second one
  return std::move(process_);
}

Result<std::optional<store::JobRecord>> StandBy(const job::JobContext& ctx, int socket,
                                                const Log& log) {
  SupervisorStores stores = TRY(OpenSupervisorStores(ctx.store_location, log));
  std::optional<sys::Message> message = TRY(sys::ReceiveMessage(socket));
  if (!message) return std::optional<store::JobRecord>();
  ClaimedJob claimed = TRY(DecodeHandoff(message->data));
  if (!message->fd.valid())
    return Error(Cause::kInvalidArgument, "the worker handed over a job without its log");
  // From here on this is the job's supervisor: its output goes to the job's log, and no
  // process it starts inherits the socket.
  TRY(sys::ReplaceDescriptor(message->fd.get(), 1));
  TRY(sys::ReplaceDescriptor(message->fd.get(), 2));
  sys::UniqueFd null = TRY(sys::OpenReadOnly("/dev/null"));
  TRY(sys::ReplaceDescriptor(null.get(), socket));
  claimed.job_dir = LocalJobDir(ctx.state_dir, claimed.claim.job_id, claimed.claim.attempt);
  return std::optional<store::JobRecord>(TRY(RunClaimedJob(ctx, claimed, std::move(stores), log)));
}

}  // namespace berth::worker
