// The job states as SQL lists, shared by the SQLite and PostgreSQL stores' queries (the
// schemas spell their own lists out: a migration means the same thing forever).
#pragma once

namespace berth::store {

// The live states (store/job_record.h) as an SQL list, and the live states that hold a slot.
// sqlite_schema_test checks them against LiveStates(). The index of live jobs (migration 6)
// serves only queries that write this very list.
inline constexpr char kLiveStatesSql[] =
    "('queued', 'preparing', 'running', 'collecting', 'verifying')";
inline constexpr char kSlotStatesSql[] = "('preparing', 'running', 'collecting', 'verifying')";

}  // namespace berth::store
