// Standard base64 (RFC 4648, with padding), for bytes that travel in JSON but are not UTF-8:
// `berth logs --json` output lines.
#pragma once

#include <string>
#include <string_view>

namespace berth::cli {

std::string Base64(std::string_view data);

}  // namespace berth::cli
