// A job whose stored request or receipt cannot be decoded (a bug, a manual edit, a newer berth
// that writes a field differently): it must not stop anything else. Whoever meets it first
// ends it `failed` with one event naming the record and the field, and every command goes on
// (docs/store.md "Records that cannot be decoded").
#pragma once

#include "base/result.h"
#include "store/store.h"

namespace berth::job {

// The event step of a job ended for an undecodable record.
inline constexpr const char* kUndecodableStep = "failed";

// Decodes the job's stored request and, when it has one, its receipt: the error of the first
// that cannot be decoded, naming the record and the field ("the job's stored request cannot
// be read: request.deadline_ms must be an integer, not string"); ok when both decode.
Status CheckStoredRecords(const store::JobRecord& job);

// Ends `job` failed because of `error`: a compare-and-set from its live state to kFailed
// with `error` as the reason, and, by the one process whose compare-and-set took, one event.
// A terminal job keeps its state. Returns `error`, for the caller to report or skip the job.
Error EndUndecodable(store::Store& store, const store::JobRecord& job, const Error& error);

// CheckStoredRecords, then EndUndecodable on an error; `*job` is read again after the job
// was ended (when the store answers).
Status FailIfUndecodable(store::Store& store, store::JobRecord* job);

}  // namespace berth::job
