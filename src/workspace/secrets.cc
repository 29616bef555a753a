#include "workspace/secrets.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace berth::workspace {

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool StartsWithText(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool LooksLikeSecret(std::string_view file_name) {
  std::string name = Lower(file_name);
  if (name == ".env") return true;
  if (StartsWithText(name, ".env.")) {
    return name != ".env.example" && name != ".env.sample" && name != ".env.template";
  }
  for (std::string_view suffix : {".pem", ".key", ".p12", ".pfx"}) {
    if (EndsWith(name, suffix)) return true;
  }
  for (std::string_view prefix : {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials"}) {
    if (StartsWithText(name, prefix)) return true;
  }
  return name.find("secret") != std::string::npos || name == ".netrc" || name == ".pgpass";
}

}  // namespace berth::workspace
