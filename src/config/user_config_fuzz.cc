// libFuzzer entry point for the user configuration parser. Beyond "no crash": every error
// names the file and a line (the strict parser's promise, docs/config.md), parsing is a pure
// function of the text, and what it accepts obeys the rules it enforces.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "config/user_config.h"
#include "net/host_pattern.h"

namespace {

constexpr char kSource[] = "fuzz.toml";

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth;
  std::string text(reinterpret_cast<const char*>(data), size);
  Result<config::UserConfig> parsed = config::ParseUserConfig(text, kSource);
  if (!parsed) {
    CHECK(StartsWith(parsed.error().message(), std::string(kSource) + ":"));
    return 0;
  }
  for (const std::string& path : parsed->hidden_paths) CHECK(!path.empty());
  for (const std::string& path : parsed->home_allow)
    CHECK(path == "~" || StartsWith(path, "~/") || StartsWith(path, "/"));
  for (const config::ProviderEntry& provider : parsed->providers) {
    CHECK(!provider.name.empty());
    CHECK(!provider.executable.empty());
  }
  // Mapped names are stored as the proxy looks them up.
  for (const auto& [name, address] : parsed->net_hosts.entries()) {
    Result<std::string> normal = net::NormalizeHost(name);
    CHECK(normal.has_value() && *normal == name);
    CHECK(parsed->net_hosts.Find(name) != nullptr);
  }

  Result<config::UserConfig> again = config::ParseUserConfig(text, kSource);
  CHECK(again.has_value());
  CHECK(again->hidden_paths == parsed->hidden_paths);
  CHECK(again->home_allow == parsed->home_allow);
  CHECK(again->providers.size() == parsed->providers.size());
  CHECK(again->net_hosts.entries().size() == parsed->net_hosts.entries().size());
  return 0;
}
