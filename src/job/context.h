// JobContext: what job commands need to know about the caller, passed in explicitly.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/user_config.h"
#include "sys/process.h"

namespace berth::job {

struct JobContext {
  std::string state_dir;
  std::string db_path;  // state_dir + "/berth.db"
  std::string cwd;
  sys::Identity identity;
  std::vector<std::pair<std::string, std::string>> environ;
  config::UserConfig user;                // the user's config (providers, hosts)
  std::string self_exe;                   // for the detached supervisor
};

}  // namespace berth::job
