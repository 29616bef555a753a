// Whether a lane's CLI never reached its provider. A CLI whose connection fails reports the
// failure as its own error (Claude Code: "API Error: 502 berth: egress to HOST failed: ...
// Connection refused"), which berth reads as a provider failure; but those words come from
// berth's egress proxy, not from the provider, so the lane treats the run as a failure without
// a provider reason and a networkless Codex parent gets its hint (docs/lane.md "Codex parent
// without network").
#pragma once

#include <optional>

#include "job/receipt.h"

namespace berth::lane {

// True when berth's proxy ran, failed at least one connection, and no byte ever came back
// from any host: the provider never answered.
bool ProviderUnreached(const std::optional<job::NetworkRecord>& network);

}  // namespace berth::lane
