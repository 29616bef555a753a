#include "integrate/codex_config.h"

#include <sstream>

#include "base/check.h"
#include "base/toml_noexcept.h"

namespace berth::integrate {

namespace {

Result<toml::table> ParseToml(const std::string& text, const std::string& what) {
  toml::parse_result parsed = toml::parse(text, what);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    std::ostringstream where;
    where << "line " << err.source().begin.line << ", column " << err.source().begin.column;
    return Error(
        Cause::kInvalidArgument,
        "it is not valid TOML (" + std::string(err.description()) + " at " + where.str() + ")", 0,
        "fix the file (or move it away) and run the command again; berth changed "
        "nothing");
  }
  return std::move(parsed).table();
}

// Whether `text` parses; its table is not needed.
Status CheckParses(const std::string& text) {
  Result<toml::table> parsed = ParseToml(text, "config.toml");
  if (!parsed) return parsed.error();
  return {};
}

const toml::table* Server(const toml::table& config) {
  return config["mcp_servers"]["berth"].as_table();
}

// The block must leave a file that parses, with berth's table in it (an `mcp_servers = {...}`
// inline table of the user's makes an appended [mcp_servers.berth] invalid, for instance).
Status CheckResult(const std::string& text, const toml::table& expected) {
  Result<toml::table> parsed = ParseToml(text, "config.toml");
  if (!parsed || Server(*parsed) == nullptr || *Server(*parsed) != expected)
    return Error(Cause::kInvalidArgument,
                 "berth's [mcp_servers.berth] table cannot be added to it without changing "
                 "how the rest of the file reads (is mcp_servers an inline table?)",
                 0, "add the server by hand, or make mcp_servers a [mcp_servers] table");
  return {};
}

}  // namespace

const Markers& CodexConfigMarkers() {
  static const Markers markers{
      "# >>> berth integrate codex: `berth integrate codex --remove` takes this block out",
      "# <<< berth integrate codex"};
  return markers;
}

Result<std::string> AddCodexServer(const std::string& config, const std::string& table) {
  toml::table current = TRY(ParseToml(config, "config.toml"));
  Result<toml::table> ours = ParseToml(table, "berth's table");
  CHECK(ours && Server(*ours) != nullptr);  // the embedded file is checked by its own test
  const toml::table& expected = *Server(*ours);
  if (TRY(HasBlock(config, CodexConfigMarkers()))) {
    std::string updated = TRY(PutBlock(config, CodexConfigMarkers(), table));
    TRY(CheckResult(updated, expected));
    return updated;
  }
  if (const toml::table* theirs = Server(current)) {
    if (*theirs == expected) return config;
    return Error(Cause::kInvalidArgument,
                 "it already has an [mcp_servers.berth] table that berth did not write, with "
                 "other settings",
                 0,
                 "berth never overwrites a table of yours; remove or rename it and run the "
                 "command again");
  }
  std::string updated = TRY(PutBlock(config, CodexConfigMarkers(), table));
  TRY(CheckResult(updated, expected));
  return updated;
}

Result<std::string> RemoveCodexServer(const std::string& config) {
  TRY(CheckParses(config));
  std::string updated = TRY(TakeBlock(config, CodexConfigMarkers()));
  if (updated != config) TRY(CheckParses(updated));
  return updated;
}

}  // namespace berth::integrate
