#include "job/kept_write.h"

#include <algorithm>

namespace berth::job {

namespace {

// How often a write that keeps failing says that it still waits.
constexpr int64_t kNoteEveryMillis = 30000;

std::string Seconds(int64_t ms) { return std::to_string((ms + 500) / 1000) + "s"; }

void Say(const KeptWrite& kept, const std::string& line) {
  if (kept.say) kept.say(line);
}

}  // namespace

bool WaitToRetry(const KeptWrite& kept, const Error& busy, int64_t first_busy_ms, int64_t* delay_ms,
                 int64_t* next_note_ms) {
  const int64_t now = kept.clock.SteadyMillis();
  const int64_t waited = now - first_busy_ms;
  if (waited >= kept.limit_ms) return false;
  if (now >= *next_note_ms) {
    Say(kept, (waited == 0 ? "could not write " : "still cannot write ") + kept.what + " after " +
                  Seconds(waited) + ": " + busy.message() + "; retrying for up to " +
                  Seconds(kept.limit_ms - waited) + " more");
    *next_note_ms = now + kNoteEveryMillis;
  }
  // A wait on no descriptor: only the clock ends it.
  kept.clock.WaitReadable(-1, std::min(*delay_ms, kept.limit_ms - waited));
  *delay_ms = std::min(*delay_ms * 2, kKeptWriteMaxDelayMillis);
  return true;
}

Error GivenUp(const KeptWrite& kept, const Error& busy, int64_t first_busy_ms) {
  const int64_t waited = kept.clock.SteadyMillis() - first_busy_ms;
  if (kept.gave_up != nullptr) *kept.gave_up = true;
  Say(kept, "gave up writing " + kept.what + " after " + Seconds(waited) + ": " + busy.message());
  return Error(Cause::kBusy, busy.message() + " (still after retrying for " + Seconds(waited) + ")",
               0, busy.hint());
}

void SayDone(const KeptWrite& kept, int64_t first_busy_ms) {
  Say(kept, "wrote " + kept.what + " after the store was busy for " +
                Seconds(kept.clock.SteadyMillis() - first_busy_ms));
}

}  // namespace berth::job
