#include "job/access_ask.h"

namespace berth::job {

const char* AccessAskName(AccessAsk ask) {
  switch (ask) {
    case AccessAsk::kNone:
      return "";
    case AccessAsk::kFlag:
      return kFullAccessFlag;
    case AccessAsk::kEnvironment:
      return kFullAccessVariable;
  }
  return "";
}

std::optional<AccessAsk> ParseAccessAsk(const std::string& name) {
  for (AccessAsk ask : {AccessAsk::kNone, AccessAsk::kFlag, AccessAsk::kEnvironment})
    if (name == AccessAskName(ask)) return ask;
  return std::nullopt;
}

}  // namespace berth::job
