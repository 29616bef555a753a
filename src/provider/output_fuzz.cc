// libFuzzer entry: every output parser over the same bytes. The first byte picks the
// field paths' shape for the generic JSON-lines parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "provider/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace berth::provider;
  (void)ParseCodex(text);
  (void)ParseCodexAppServer(text);
  (void)ParseClaude(text);
  (void)ParseGemini(text);
  (void)ParseGrok(text);
  (void)ParsePlain(text);
  FieldPaths fields;
  fields.text = "result";
  fields.model = "a.0.model";
  fields.session = "session_id";
  fields.input_tokens = "usage.input_tokens";
  fields.output_tokens = "usage.output_tokens.0";
  fields.cost = "cost";
  fields.error = "error.message";
  (void)ParseJsonLines(text, fields);
  return 0;
}
