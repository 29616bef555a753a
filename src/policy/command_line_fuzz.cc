// libFuzzer entry point for SplitCommandLine: any input must yield words or an Error, never a
// crash or a sanitizer report; and the words of an accepted line, joined again with single
// quotes (JoinCommandLine), split back into the same words.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/check.h"
#include "policy/command_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  berth::Result<std::vector<std::string>> words = berth::policy::SplitCommandLine(line);
  if (!words) {
    CHECK(!words.error().message().empty());
    return 0;
  }
  CHECK(!words->empty());
  berth::Result<std::vector<std::string>> again =
      berth::policy::SplitCommandLine(berth::policy::JoinCommandLine(*words));
  CHECK(again.has_value() && *again == *words);
  return 0;
}
