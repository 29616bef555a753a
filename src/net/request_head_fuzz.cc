// libFuzzer entry point for the proxy's message-head parsers: any input must yield a head or
// an Error, never a crash, a hang or a sanitizer report; a parsed request must re-serialise.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "net/request_head.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t length = berth::net::HeadLength(text);
  std::string_view head = length == 0 ? text : text.substr(0, length);
  berth::Result<berth::net::RequestHead> request = berth::net::ParseRequestHead(head);
  if (request && request->form == berth::net::RequestHead::Form::kAbsolute) {
    std::string origin = berth::net::OriginRequestHead(*request);
    // The rewritten head is a complete head of its own.
    CHECK(berth::net::HeadLength(origin) == origin.size());
  }
  berth::IgnoreError(berth::net::RewriteResponseHead(head),
                     "only crashes and sanitizer reports count; most inputs are not heads");
  return 0;
}
