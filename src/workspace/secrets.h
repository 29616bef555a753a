// Names of files that look like credentials: `[include]` copies them into a workspace only
// when the policy says `secrets = true`.
#pragma once

#include <string_view>

namespace berth::workspace {

// Matches the file name (not the path), case-insensitively: .env and .env.* (except
// .env.example, .env.sample, .env.template), *.pem, *.key, *.p12, *.pfx, id_rsa*, id_dsa*,
// id_ecdsa*, id_ed25519*, credentials*, *secret*, .netrc and .pgpass.
bool LooksLikeSecret(std::string_view file_name);

}  // namespace berth::workspace
