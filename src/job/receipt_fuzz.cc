// libFuzzer entry point for the receipt's codec: any input must yield a Receipt or an Error,
// never a crash or a sanitizer report, and every receipt it accepts must survive a round trip
// (FromJson(ToJson(r)) == r), or a reader and the writer would disagree about a stored receipt.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "job/receipt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::job::Receipt> receipt = berth::job::Receipt::FromText(text);
  if (!receipt) return 0;
  const nlohmann::json encoded = receipt->ToJson();
  berth::Result<berth::job::Receipt> again = berth::job::Receipt::FromJson(encoded);
  CHECK(again);
  CHECK(*again == *receipt);
  CHECK(again->ToJson() == encoded);
  return 0;
}
