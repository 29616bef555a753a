// Checking the model an agent ran with against the one the job asked for.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "provider/provider.h"

namespace berth::provider {

struct ModelCheck {
  bool ok = true;
  // "reported": the CLI named the model it used; "pinned-argv": the CLI does not report it
  // and berth pinned it on the command line; "cli-default": none was asked for or reported;
  // "missing": the CLI should have reported one and did not.
  std::string evidence;
  std::string requested;
  std::string reported;
  std::string reason;  // why not ok

  nlohmann::json ToJson() const;
};

// Whether `reported` is `requested`: the same name (case and a "models/" prefix aside), a
// dated or preview snapshot of it ("claude-sonnet-4-5" -> "claude-sonnet-4-5-20250929"), or,
// for a rolling alias ("sonnet", "opus", "pro", "gpt-5-latest"), a concrete model of that
// family. A smaller variant is never the same model ("gpt-5" is not "gpt-5-mini").
bool ModelMatches(const std::string& requested, const std::string& reported);

ModelCheck CheckModel(const Provider& provider, const std::string& requested,
                      const std::string& reported);

}  // namespace berth::provider
