// berth's [mcp_servers.berth] table in a Codex config.toml that belongs to the user.
//
// berth adds the table as a block between marker comments at the end of the file, leaving every
// other byte as it was, and checks that the result still parses and names berth's server; a
// file that is not valid TOML is refused before anything is written.
#pragma once

#include <string>

#include "base/result.h"
#include "integrate/text_block.h"

namespace berth::integrate {

const Markers& CodexConfigMarkers();

// `config` (the file's text; "" when absent) with berth's table `table` (TOML text holding
// exactly [mcp_servers.berth]). Unchanged when berth's block already holds it, or when the user
// has the same server table of their own. Refused: invalid TOML, and an mcp_servers.berth of
// the user's with other settings.
Result<std::string> AddCodexServer(const std::string& config, const std::string& table);

// `config` without berth's block; unchanged when it has none (a table the user wrote stays).
Result<std::string> RemoveCodexServer(const std::string& config);

}  // namespace berth::integrate
