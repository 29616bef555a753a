#include "job/services.h"

#include "env/postgres.h"
#include "sys/disk.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "sys/self.h"

namespace berth::job {

namespace {

constexpr uint32_t kNobody = 65534;

std::string ScratchOf(const std::string& scratch_dir, const std::string& name) {
  return scratch_dir + "/" + name;
}

}  // namespace

uint32_t ServiceNonRootId() { return sys::CurrentUid() == 0 ? kNobody : 0; }

Result<sandbox::SandboxService> ServerOf(const policy::Service& service, size_t index,
                                         const std::string& data_target) {
  const env::Postgres postgres = TRY(env::FindPostgres());
  sandbox::SandboxService server;
  server.name = service.kind + " " + service.name;
  server.argv = env::ServerArgv(postgres, data_target, env::ServicePort(index));
  server.env = {{"PATH", postgres.bin_dir + ":/usr/bin:/bin", "service"}, {"LANG", "C", "service"}};
  server.ready_file = data_target + "/postmaster.pid";
  server.ready_text = "\nready";
  server.nonroot_id = ServiceNonRootId();
  return server;
}

Status AddServices(const policy::Environment& environment, const std::string& layer_dir,
                   const std::string& scratch_dir, sandbox::SandboxSpec* spec) {
  for (size_t i = 0; i < environment.services.size(); ++i) {
    const policy::Service& service = environment.services[i];
    const std::string scratch = ScratchOf(scratch_dir, service.name);
    // PostgreSQL wants its data directory owned by its uid with mode 0700: the merged
    // directory takes the upper directory's owner and mode.
    TRY(sys::MakeDirs(scratch + "/upper", 0700));
    TRY(sys::MakeDirs(scratch + "/work", 0700));
    const std::string target = env::ServiceDataTarget(service.name);
    spec->dir_overlays.push_back({{env::ServiceDataDir(layer_dir, service.name)},
                                  scratch + "/upper",
                                  scratch + "/work",
                                  target,
                                  "service " + service.name,
                                  /*skip_sync=*/true});
    spec->services.push_back(TRY(ServerOf(service, i, target)));
    auto set = [&](const std::string& name, const std::string& value) {
      std::erase_if(spec->env, [&](const sandbox::EnvVar& v) { return v.name == name; });
      spec->env.push_back({name, value, "service " + service.name});
    };
    if (i == 0) {
      for (const auto& [name, value] : env::ServiceClientEnv(service, i)) set(name, value);
    } else {
      set(service.url, env::ServiceUrl(i));
    }
  }
  return {};
}

Status RemoveServiceScratch(const std::string& scratch_dir) {
  if (!sys::Exists(scratch_dir)) return {};
  for (const std::string& name : TRY(sys::ListDir(scratch_dir)))
    IgnoreError(sys::MakeOverlayWorkRemovable(scratch_dir + "/" + name + "/work"),
                "removed forcibly below");
  return sys::RemoveTreeForcibly(scratch_dir);
}

}  // namespace berth::job
