#!/usr/bin/env bash
# Per-job PostgreSQL (issue 28, docs/environments.md "Services"): how long a job's own server
# takes to accept connections, against the same job without a service, interleaved; and the
# two ways to give a job a database without berth: `createdb -T` on a shared server, and
# initdb plus the schema per job.
#
# Usage: bench/services/run.sh BERTH_BINARY [RUNS]   (as root or a user; PostgreSQL from Debian)
set -euo pipefail
berth="$1"
runs="${2:-10}"
pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
root="$(mktemp -d /var/tmp/berth-services-bench-XXXXXX)"
trap 'rm -rf "$root"' EXIT
export HOME="$root/home" BERTH_STATE_DIR="$root/state"
mkdir -p "$HOME"

make_repo() { # DIR WITH_SERVICE
  mkdir -p "$1/.berth" "$1/db" "$1/src"
  (
    cd "$1"
    git init -q
    git config user.email bench@example.com
    git config user.name bench
    # A schema with a table, an index and 1,000 seed rows.
    printf 'create table items (id int primary key, name text);\ncreate index on items (name);\ninsert into items select g, g::text from generate_series(1, 1000) g;\n' >db/schema.sql
    echo v1 >deps.lock
    touch src/.keep
    cat >.berth/policy.toml <<POLICY
version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[environment]
key = ["deps.lock"]
setup = [["sh", "-c", "mkdir -p node_modules && echo dep > node_modules/dep.txt"]]
paths = ["node_modules"]
POLICY
    if [[ "$2" == yes ]]; then
      cat >>.berth/policy.toml <<'POLICY'
[environment.services.db]
kind = "postgresql"
key = ["db/schema.sql"]
setup = [["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f", "db/schema.sql"]]
POLICY
    fi
    git add -A
    git commit -qm init
  )
}

ms_now() { echo $(($(date +%s%N) / 1000000)); }

make_repo "$root/with" yes
make_repo "$root/without" no
# Build both layers first: the target is a job's start with the layer built.
(cd "$root/with" && "$berth" run implement -- true >/dev/null)
(cd "$root/without" && "$berth" run implement -- true >/dev/null)

field() { # JOB_DIR FIELD
  sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" "$1/receipt.json" | head -1
}

echo "run,variant,sandbox_ms (launch to agent exec),first query done (ms after berth run started),berth_run_wall_ms"
for ((i = 1; i <= runs; i++)); do
  for variant in with without; do
    cd "$root/$variant"
    # The agent's first command is a query (it succeeds only once the server accepts
    # connections), then it notes the time; without a service it notes the time at once.
    if [[ $variant == with ]]; then
      agent='psql -tAc "select count(*) from items" >/dev/null && date +%s%3N >src/ready'
    else
      agent='date +%s%3N >src/ready'
    fi
    start=$(ms_now)
    "$berth" run implement -- sh -c "$agent" >/dev/null 2>&1 || true
    wall=$(($(ms_now) - start))
    job="$(ls -td "$BERTH_STATE_DIR"/jobs/* | head -1)"
    ready=$(git show "berth/$(basename "$job"):src/ready" 2>/dev/null || echo "$start")
    echo "$i,$variant,$(field "$job" sandbox_ms),$((ready - start)),$wall"
  done
done

# Without berth, as an unprivileged user (PostgreSQL refuses root).
run_as() { if [[ $(id -u) == 0 ]]; then runuser -u berth-ci -- "$@"; else "$@"; fi; }
cd /
host="$(run_as mktemp -d /var/tmp/berth-pg-host-XXXXXX)"
# The shared server and the per-job ones are stopped and removed however the script ends.
cleanup() {
  for data in "$host"/shared "$host"/job*; do
    [[ -f "$data/postmaster.pid" ]] && run_as "$pg_bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
  done
  run_as rm -rf "$host"
  rm -rf "$root"
}
trap cleanup EXIT
schema="$host/schema.sql"
run_as tee "$schema" <"$root/with/db/schema.sql" >/dev/null
run_as "$pg_bin/initdb" -D "$host/shared" -U postgres --auth=trust --no-sync >/dev/null
run_as "$pg_bin/pg_ctl" -D "$host/shared" -o "-c listen_addresses= -c unix_socket_directories=$host -c fsync=off" -w -l "$host/log" start >/dev/null
run_as "$pg_bin/createdb" -h "$host" -U postgres tmpl
run_as psql -q -h "$host" -U postgres -d tmpl -f "$schema"
echo "run,createdb -T template on a shared server (ms),initdb + start + schema per job (ms)"
for ((i = 1; i <= runs; i++)); do
  start=$(ms_now)
  run_as "$pg_bin/createdb" -h "$host" -U postgres -T tmpl "job$i"
  createdb_ms=$(($(ms_now) - start))
  start=$(ms_now)
  run_as "$pg_bin/initdb" -D "$host/job$i" -U postgres --auth=trust --no-sync >/dev/null
  run_as "$pg_bin/pg_ctl" -D "$host/job$i" -o "-c listen_addresses= -c unix_socket_directories=$host/job$i -c fsync=off -p 6000" -w -l "$host/job$i.log" start >/dev/null
  run_as psql -q -h "$host/job$i" -p 6000 -U postgres -f "$schema"
  initdb_ms=$(($(ms_now) - start))
  run_as "$pg_bin/pg_ctl" -D "$host/job$i" -m fast -w stop >/dev/null
  echo "$i,$createdb_ms,$initdb_ms"
done
