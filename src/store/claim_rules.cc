#include "store/claim_rules.h"

#include "store/store.h"

namespace berth::store {

Status CheckWorkerId(const std::string& worker_id) {
  bool ok = !worker_id.empty() && worker_id.size() <= 64;
  for (char c : worker_id) ok &= (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-';
  if (ok) return {};
  return Error(Cause::kInvalidArgument,
               "worker id '" + worker_id + "' is not 1 to 64 characters of [0-9a-z-]");
}

Status CheckResultSize(const JobResult& result) {
  if (result.commit.empty()) {
    return Error(Cause::kInvalidArgument,
                 "the result of job " + result.job_id + " names no commit");
  }
  if (result.bundle.size() <= kMaxResultBytes) return {};
  return Error(
      Cause::kInvalidArgument,
      "the result of job " + result.job_id + " is " + std::to_string(result.bundle.size() >> 20) +
          " MiB, over the store's cap of " + std::to_string(kMaxResultBytes >> 20) + " MiB",
      0, "keep large generated files out of the job's commit (the policy's writable globs)");
}

Status CheckOutput(const JobOutput& output) {
  if (output.stream != "stdout" && output.stream != "stderr")
    return Error(Cause::kInvalidArgument, "'" + output.stream + "' is not an output stream");
  if (output.bytes.size() <= kMaxStoredOutputBytes) return {};
  return Error(Cause::kInvalidArgument, "the " + output.stream + " of job " + output.job_id +
                                            " to store is " + std::to_string(output.bytes.size()) +
                                            " bytes, over the store's cap of " +
                                            std::to_string(kMaxStoredOutputBytes));
}

Status CheckChunk(const OutputChunk& chunk) {
  if (chunk.stream != "stdout" && chunk.stream != "stderr")
    return Error(Cause::kInvalidArgument, "'" + chunk.stream + "' is not an output stream");
  const std::string what = "a chunk of job " + chunk.job_id + "'s " + chunk.stream;
  if (chunk.bytes.empty() || chunk.bytes.size() > kMaxStoredOutputBytes)
    return Error(Cause::kInvalidArgument, what + " holds " + std::to_string(chunk.bytes.size()) +
                                              " bytes; a chunk holds 1 to " +
                                              std::to_string(kMaxStoredOutputBytes));
  if (chunk.offset < 0 ||
      chunk.offset + static_cast<int64_t>(chunk.bytes.size()) > kMaxLiveOutputBytes)
    return Error(Cause::kInvalidArgument, what + " at offset " + std::to_string(chunk.offset) +
                                              " goes past the store's cap of " +
                                              std::to_string(kMaxLiveOutputBytes) +
                                              " bytes of live output");
  return {};
}

Error ChunkOutOfPlace(const OutputChunk& chunk, int64_t stored_end, bool ended) {
  const std::string what = "a chunk of job " + chunk.job_id + "'s " + chunk.stream + " (attempt " +
                           std::to_string(chunk.attempt) + ")";
  if (ended) return Error(Cause::kInvalidArgument, what + " comes after the stream's end");
  return Error(Cause::kInvalidArgument, what + " at offset " + std::to_string(chunk.offset) +
                                            " does not follow the stored chunks, which end at " +
                                            std::to_string(stored_end));
}

Error NotTheClaim(const JobResult& result) {
  return Error(Cause::kFenced, "job " + result.job_id + " is no longer claimed by attempt " +
                                   std::to_string(result.attempt) + " of worker " +
                                   result.worker_id + "; its result is refused");
}

std::string SkipList(const std::vector<std::string>& ids) {
  std::string list = ",";
  for (const std::string& id : ids) list += id + ",";
  return list;
}

}  // namespace berth::store
