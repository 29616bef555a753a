// JobContext: what job commands need to know about the caller, passed in explicitly.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "net/host_map.h"
#include "sys/process.h"

namespace berth::job {

struct JobContext {
  std::string state_dir;
  std::string db_path;  // state_dir + "/berth.db"
  std::string cwd;
  sys::Identity identity;
  std::vector<std::pair<std::string, std::string>> environ;
  std::vector<std::string> extra_hidden;  // from the user's config
  net::HostMap net_hosts;                 // from the user's config: [net.hosts]
  std::string self_exe;                   // for the detached supervisor
};

}  // namespace berth::job
