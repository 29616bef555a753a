#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace berth {

void CheckFailed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "berth: internal error: CHECK(%s) failed at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace berth
