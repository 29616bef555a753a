// libFuzzer entry point for the policy parser: any input must yield a Policy or an Error,
// never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "policy/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::policy::Policy> policy = berth::policy::ParsePolicy(text, "fuzz.toml");
  if (policy) (void)berth::policy::ExplainPolicy(*policy);
  return 0;
}
