// The rules both stores apply to the shared queue's claims and results (docs/workers.md).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "store/job_record.h"

namespace berth::store {

// A worker id is 1 to 64 characters of [0-9a-z-]: it is written into SQL literals by the
// SQLite store's fence and into a session setting by PostgreSQL's.
Status CheckWorkerId(const std::string& worker_id);

// kInvalidArgument when the result is larger than kMaxResultBytes or names no commit.
Status CheckResultSize(const JobResult& result);

// kInvalidArgument for a stream other than stdout or stderr, or bytes over the store's cap.
Status CheckOutput(const JobOutput& output);

// kInvalidArgument for a stream other than stdout or stderr, an empty chunk or one over
// kMaxStoredOutputBytes, or one that ends past kMaxLiveOutputBytes.
Status CheckChunk(const OutputChunk& chunk);

// The error of a chunk the store did not append: its stream's chunks end at `stored_end`, or
// the stream's end is stored already (`ended`).
Error ChunkOutOfPlace(const OutputChunk& chunk, int64_t stored_end, bool ended);

// The error of a result, or a write, for a claim that is no longer the job's.
Error NotTheClaim(const JobResult& result);

// ",a,b," for ClaimRequest::skip, so that ",id," finds an id (job ids hold no commas).
std::string SkipList(const std::vector<std::string>& ids);

}  // namespace berth::store
