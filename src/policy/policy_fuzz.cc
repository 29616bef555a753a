// libFuzzer entry point for the policy parser: any input must yield a Policy or an Error,
// never a crash, a hang or a sanitizer report; an accepted text is accepted again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "policy/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::policy::Policy> policy = berth::policy::ParsePolicy(text, "fuzz.toml");
  if (!policy) {
    CHECK(!policy.error().message().empty());
    return 0;
  }
  std::string explained = berth::policy::ExplainPolicy(*policy);
  CHECK(!explained.empty());
  // Parsing is a pure function of the text.
  berth::Result<berth::policy::Policy> again = berth::policy::ParsePolicy(text, "fuzz.toml");
  CHECK(again.has_value() && berth::policy::ExplainPolicy(*again) == explained);
  return 0;
}
