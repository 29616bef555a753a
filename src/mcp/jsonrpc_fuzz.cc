// libFuzzer target: ParseMessage on arbitrary bytes, and a session (with a tool and no
// resources) fed them line by line. Neither may crash, hang or answer anything but one JSON
// object per line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "mcp/session.h"
#include "rpc/jsonrpc.h"

namespace {

class FuzzChannel : public berth::mcp::Channel {
 public:
  void Send(const std::string& line) override {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    CHECK(j.is_object());
  }
  berth::Result<berth::sys::LineReader::Item> Next(int) override {
    return berth::sys::LineReader::Item{berth::sys::LineReader::Kind::kEnd, {}};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  auto parsed = berth::rpc::ParseMessage(input);
  if (auto* m = std::get_if<berth::rpc::Message>(&parsed)) CHECK(m->params.is_object());
  FuzzChannel channel;
  berth::mcp::Tool echo;
  echo.name = "echo";
  echo.params = {{"text", berth::mcp::Param::Type::kString, true},
                 {"n", berth::mcp::Param::Type::kInteger, false, "", {}, 0.0, 10.0},
                 {"list", berth::mcp::Param::Type::kStringArray}};
  echo.run = [](const nlohmann::json& args, berth::mcp::CallContext& call) {
    call.Progress("x");
    return berth::mcp::ToolResult{args.dump(), nullptr, false};
  };
  berth::mcp::Session session(channel, {echo}, nullptr, berth::mcp::ServerInfo{});
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    session.HandleLine(input.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}
