// KeepWriting: the writes a job's end cannot do without ride out a busy store.
//
// A job's state changes, its commit and its receipt are what make its work landable; a store
// that another process holds locked past its busy timeout (SQLite's 5 s, PostgreSQL's lock
// timeout) must not lose them. KeepWriting repeats such a write with backoff while it fails
// with Cause::kBusy, saying so through `say` (the supervisor's stderr, its log when detached),
// until it succeeds, fails otherwise, or kKeptWriteMillis have passed on `clock`. Other
// failures are returned at once: retrying a refused or fenced write would not change it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"
#include "job/clock.h"

namespace berth::job {

// How long a kept write is retried on a busy store before the run gives up on it.
inline constexpr int64_t kKeptWriteMillis = 10 * 60 * 1000;
// The first wait between two tries; it doubles up to kKeptWriteMaxDelayMillis.
inline constexpr int64_t kKeptWriteFirstDelayMillis = 250;
inline constexpr int64_t kKeptWriteMaxDelayMillis = 5000;

struct KeptWrite {
  Clock& clock;
  // What is written, for the lines `say` gets: "the job's end (completed)".
  std::string what;
  // Gets one line when the store is first found busy, one every half minute while it stays
  // busy, and one when the write went through after all or is given up.
  std::function<void(const std::string& line)> say;
  // Runs before each retry (not before the first try): the runner renews its lease there, so
  // that the job is still its own when the store is free again.
  std::function<void()> before_retry;
  int64_t limit_ms = kKeptWriteMillis;
  // Set to true when the write is given up, so that the caller's later writes need not wait
  // out another limit on a store that is known to stay busy.
  bool* gave_up = nullptr;
};

// Runs `write` until it succeeds or fails with a cause other than kBusy, or until
// `kept.limit_ms` have passed; then returns its last result. A given-up write's error names
// how long the store stayed busy.
template <typename T>
Result<T> KeepWriting(const KeptWrite& kept, const std::function<Result<T>()>& write);

// What KeepWriting does between two tries, shared by its instantiations: true to try again,
// false to give up. `first_busy_ms` is when the store was first found busy.
bool WaitToRetry(const KeptWrite& kept, const Error& busy, int64_t first_busy_ms, int64_t* delay_ms,
                 int64_t* next_note_ms);
// The error of a write given up on a store that stayed busy.
Error GivenUp(const KeptWrite& kept, const Error& busy, int64_t first_busy_ms);
// Says that a write went through once the store was free again.
void SayDone(const KeptWrite& kept, int64_t first_busy_ms);

template <typename T>
Result<T> KeepWriting(const KeptWrite& kept, const std::function<Result<T>()>& write) {
  Result<T> result = write();
  if (result || result.error().cause() != Cause::kBusy) return result;
  const int64_t first_busy_ms = kept.clock.SteadyMillis();
  int64_t delay_ms = kKeptWriteFirstDelayMillis;
  int64_t next_note_ms = first_busy_ms;
  while (true) {
    if (!WaitToRetry(kept, result.error(), first_busy_ms, &delay_ms, &next_note_ms))
      return GivenUp(kept, result.error(), first_busy_ms);
    if (kept.before_retry) kept.before_retry();
    result = write();
    if (result) {
      SayDone(kept, first_busy_ms);
      return result;
    }
    if (result.error().cause() != Cause::kBusy) return result;
  }
}

}  // namespace berth::job
