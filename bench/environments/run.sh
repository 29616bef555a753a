#!/usr/bin/env bash
# Environments (issue 28, docs/environments.md): the layer targets, each A against B in
# interleaved runs (A, B, B, A, ...), never in blocks, so that load on a shared machine falls
# on both sides alike.
#   1. ready: a job whose layer (a synthetic node_modules of about 225 MB in tens of thousands
#      of small files) is built, against the same job without an environment: the time from
#      `berth run` until the agent's first command has seen node_modules. Target: the
#      difference of the medians is at most 10 ms. Compared with what users do instead:
#      `git worktree add` plus `cp -r node_modules`, and `npm ci --offline` per worktree.
#   2. build: `berth env build` of a real npm project (setup `npm ci --offline`, berth's npm
#      cache primed) against `npm ci --offline` on the host from an equally primed cache.
#      Target: ratio of the medians at most 1.2.
#   3. checks: a job whose check is `npm test` against the same `npm test` in a prepared
#      worktree (git worktree add, node_modules present). Target: ratio of medians at most 1.1.
#
# Usage: bench/environments/run.sh [--smoke] [--runs N] [--project DIR]
#   --smoke        tiny sizes (2,100 files, 9 MB), 2 pairs, target 1 only unless --project;
#                  checks that it runs, enforces no target
#   --runs N       interleaved pairs per target (default 7)
#   --project DIR  a real npm project (its package.json, and package-lock.json when it has
#                  one) for targets 2 and 3; without it they are skipped. The script primes
#                  both npm caches from the registry once, with the invoking user's npm config
#                  (when the project has no lockfile it makes one first), then measures offline
# Environment:
#   BERTH          the berth binary (default: build/release/src/cli/berth under the repo root)
#   BENCH_TMPDIR   scratch directory (default: /var/tmp)
#   NICE           a prefix for every measured command on both sides (default: none)
# Exit: 0 = ran (and, unless --smoke, every target met); 1 = a target missed; 2 = cannot run.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
die() {
  echo "environments: $*" >&2
  exit 2
}

smoke=0
runs=7
project=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --runs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive integer"
      runs="$2"
      shift
      ;;
    --project)
      [[ $# -ge 2 && -f "$2/package.json" ]] || die "--project needs a directory with package.json"
      project="$(cd "$2" && pwd)"
      shift
      ;;
    *) die "unknown argument $1 (see the script's header)" ;;
  esac
  shift
done
((smoke)) && runs=2
berth="${BERTH:-$repo_root/build/release/src/cli/berth}"
[[ -x "$berth" ]] || die "no berth binary at $berth (set BERTH)"
berth="$(cd "$(dirname "$berth")" && pwd)/$(basename "$berth")"

read -r -a nice_prefix <<<"${NICE:-}"

if ((smoke)); then
  packages=100 files_per_package=20 file_bytes=4000
else
  # 1,500 packages x 24 files and a package.json: 37,500 files of 1.4 KB to 11 KB, 225 MB.
  packages=1500 files_per_package=24 file_bytes=11000
fi

root="$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/berth-env-bench-XXXXXX")"
trap 'rm -rf "$root"' EXIT
export BERTH_STATE_DIR="$root/state"
missed=0

ms_now() { echo $(($(date +%s%N) / 1000000)); }

# stats NAME VALUES...: median, min-max of integer milliseconds.
stats() {
  local name="$1"
  shift
  printf '%s\n' "$@" | sort -n | awk -v name="$name" '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
    printf "%-58s median %8.1f ms  min-max %d-%d ms  (n=%d)\n", name, m, v[1], v[NR], NR }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "environments bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "berth: $berth ($("$berth" --version 2>/dev/null | head -1)), uid $(id -u), runs $runs, nice '${NICE:-}'"

# ---------------------------------------------------------------- 1. ready
# The generator is tracked in the repository and is the layer's key: setup runs it, in the
# sandbox, to produce node_modules; the deterministic content stands in for what npm ci
# would write (this target measures the layer mechanism, not npm).
make_ready_repo() { # DIR WITH_ENV
  mkdir -p "$1/.berth" "$1/src"
  (
    cd "$1"
    git init -q
    git config user.email bench@example.com
    git config user.name bench
    cat >gen.py <<PY
import os, sys
out = sys.argv[1]
for p in range($packages):
    d = os.path.join(out, "pkg-%04d" % p, "lib")
    os.makedirs(d, exist_ok=True)
    for f in range($files_per_package):
        size = 1400 + ((p * 7919 + f * 104729) % ($file_bytes - 1400))
        line = ("// pkg-%04d file %d " % (p, f)).ljust(63, "x") + "\n"
        with open(os.path.join(d, "f%02d.js" % f), "w") as fh:
            fh.write((line * (size // 64 + 1))[:size])
    with open(os.path.join(out, "pkg-%04d" % p, "package.json"), "w") as fh:
        fh.write('{"name": "pkg-%04d", "version": "1.0.0", "main": "lib/f00.js"}\n' % p)
PY
    printf 'node_modules\n' >.gitignore
    touch src/.keep
    cat >.berth/policy.toml <<'POLICY'
version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
POLICY
    if [[ "$2" == yes ]]; then
      cat >>.berth/policy.toml <<'POLICY'
[environment]
key = ["gen.py"]
setup = [["python3", "gen.py", "node_modules"]]
paths = ["node_modules"]
POLICY
    fi
    git add -A
    git commit -qm init
  )
}

make_ready_repo "$root/with" yes
make_ready_repo "$root/without" no
last_pkg="$(printf 'pkg-%04d' $((packages - 1)))"
build_start=$(ms_now)
(cd "$root/with" && "$berth" env build >/dev/null) || die "berth env build of the synthetic layer failed"
echo "synthetic layer built in $(($(ms_now) - build_start)) ms"
# The same tree on the host, for the cp -r comparison.
python3 "$root/with/gen.py" "$root/host_node_modules"
echo "synthetic node_modules: $(find "$root/host_node_modules" -type f | wc -l) files, $(du -sm --apparent-size "$root/host_node_modules" | cut -f1) MB apparent, $(du -sm "$root/host_node_modules" | cut -f1) MB on disk"
# A warm-up job of each, not measured.
(cd "$root/with" && "$berth" run implement -- true >/dev/null 2>&1) || true
(cd "$root/without" && "$berth" run implement -- true >/dev/null 2>&1) || true

job_dir() { ls -td "$BERTH_STATE_DIR"/jobs/* | head -1; }
receipt_ms() { # JOB_DIR FIELD: a field of the receipt's timings, -1 when absent
  jq -r --arg f "$2" '.timings[$f] // -1' "$1/receipt.json" 2>/dev/null || echo -1
}
# ready_job VARIANT: ms from `berth run` to the agent's first command having seen node_modules
# (without an environment, to its first command), read back from the job's commit.
ready_job() {
  local variant="$1" agent start wall job ready
  if [[ $variant == with ]]; then
    agent="test -f node_modules/$last_pkg/lib/f00.js && date +%s%3N >src/ready"
  else
    agent='date +%s%3N >src/ready'
  fi
  cd "$root/$variant"
  start=$(ms_now)
  "${nice_prefix[@]}" "$berth" run implement -- sh -c "$agent" >/dev/null 2>&1 || true
  wall=$(($(ms_now) - start))
  job="$(job_dir)"
  ready=$(git show "berth/$(basename "$job"):src/ready" 2>/dev/null) || die "the $variant job $(basename "$job") did not note its time (see its log)"
  echo "$((ready - start)) $wall $(receipt_ms "$job" workspace_ms) $(receipt_ms "$job" sandbox_ms)"
}
# cp_worktree WITH_CP: ms for git worktree add (plus cp -r node_modules).
cp_n=0
cp_worktree() {
  cp_n=$((cp_n + 1))
  local dir="$root/wt-$cp_n" start t
  cd "$root/without"
  start=$(ms_now)
  "${nice_prefix[@]}" git worktree add -q --detach "$dir" HEAD
  [[ $1 == yes ]] && "${nice_prefix[@]}" cp -r "$root/host_node_modules" "$dir/node_modules"
  t=$(($(ms_now) - start))
  git worktree remove --force "$dir"
  echo "$t"
}

with_ready=() without_ready=() with_wall=() without_wall=() cp_ms=() wt_ms=()
with_ws=() without_ws=() with_sb=() without_sb=()
for ((i = 1; i <= runs; i++)); do
  # Alternate which side goes first.
  if ((i % 2)); then order="with without"; else order="without with"; fi
  for v in $order; do
    read -r r w ws sb < <(ready_job "$v")
    if [[ $v == with ]]; then
      with_ready+=("$r") with_wall+=("$w") with_ws+=("$ws") with_sb+=("$sb")
    else
      without_ready+=("$r") without_wall+=("$w") without_ws+=("$ws") without_sb+=("$sb")
    fi
  done
  if ((i % 2)); then order="yes no"; else order="no yes"; fi
  for c in $order; do
    t=$(cp_worktree "$c")
    if [[ $c == yes ]]; then cp_ms+=("$t"); else wt_ms+=("$t"); fi
  done
done
echo
echo "1. ready: berth run until the agent's first command has seen node_modules"
stats "job with the layer (ready)" "${with_ready[@]}"
stats "job without an environment (ready)" "${without_ready[@]}"
stats "job with the layer (berth run wall)" "${with_wall[@]}"
stats "job without an environment (berth run wall)" "${without_wall[@]}"
stats "job with the layer (receipt workspace_ms)" "${with_ws[@]}"
stats "job without an environment (receipt workspace_ms)" "${without_ws[@]}"
stats "job with the layer (receipt sandbox_ms)" "${with_sb[@]}"
stats "job without an environment (receipt sandbox_ms)" "${without_sb[@]}"
stats "git worktree add + cp -r node_modules" "${cp_ms[@]}"
stats "git worktree add alone" "${wt_ms[@]}"
diffs=()
for ((i = 0; i < runs; i++)); do diffs+=($((with_ready[i] - without_ready[i]))); done
stats "pairwise difference with - without (ready)" "${diffs[@]}"
ready_diff=$(awk -v a="$(median "${with_ready[@]}")" -v b="$(median "${without_ready[@]}")" 'BEGIN {printf "%.1f", a - b}')
cp_diff=$(awk -v a="$(median "${cp_ms[@]}")" -v b="$(median "${wt_ms[@]}")" 'BEGIN {printf "%.1f", a - b}')
echo "layer costs ${ready_diff} ms over no environment (medians); cp -r node_modules costs ${cp_diff} ms over a bare worktree"
if ((smoke)); then
  echo "target 1: layer ready within 10 ms of no environment: (smoke, not judged)"
elif awk -v d="$ready_diff" 'BEGIN {exit !(d <= 10)}'; then
  echo "target 1: layer ready within 10 ms of no environment: MET (${ready_diff} ms)"
else
  echo "target 1: layer ready within 10 ms of no environment: NOT MET (${ready_diff} ms)"
  missed=1
fi

# ------------------------------------------------------- 2. build and 3. checks (real npm)
if [[ -z "$project" ]]; then
  echo
  echo "targets 2 and 3 skipped: no --project (a real npm project)"
  exit $((smoke ? 0 : missed))
fi

# The project in a scratch repository of its own: its files without node_modules and .git,
# with a lockfile (made from its package.json with the invoking user's npm config when it has
# none: `npm ci` needs one) and a policy whose environment is `npm ci --offline`, with no
# network, from berth's npm cache.
proj="$root/project"
mkdir -p "$proj"
tar -C "$project" --exclude=./node_modules --exclude=./.git --exclude=./.berth -cf - . | tar -C "$proj" -xf -
host_cache="$root/host-npm-cache"
berth_cache="$BERTH_STATE_DIR/caches/npm"
cd "$proj"
if [[ ! -f package-lock.json ]]; then
  echo "the project has no package-lock.json: making one with npm install --package-lock-only"
  npm install --package-lock-only --package-lock=true --ignore-scripts --no-audit --no-fund \
    --cache "$host_cache" >/dev/null || die "npm install --package-lock-only failed"
  # npm ci reads the lockfile even where the project's .npmrc says package-lock=false.
fi
mkdir -p .berth bench
touch bench/.keep
cat >.berth/policy.toml <<'POLICY'
version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["bench/**"]
[environment]
key = ["package-lock.json"]
setup = [["npm", "ci", "--offline", "--no-audit", "--no-fund"]]
paths = ["node_modules"]
grants = ["cache:npm"]
timeout = "20m"
[[verify]]
name = "npm-test"
argv = ["npm", "test"]
required = true
timeout = "20m"
grants = ["cache:npm"]
POLICY
git init -q
git config user.email bench@example.com
git config user.name bench
git add -A
git add -f package-lock.json # a project without a lockfile may ignore it
git commit -qm init

# Prime both caches the same way: a full `npm ci` from the registry with that cache, once.
host="$root/host"
git worktree add -q --detach "$host" HEAD
for cache in "$host_cache" "$berth_cache"; do
  (cd "$host" && npm ci --no-audit --no-fund --cache "$cache" >/dev/null) || die "priming $cache with npm ci failed"
  rm -rf "$host/node_modules"
done
echo "project: $(jq -r '.name + " " + .version' package.json 2>/dev/null || echo "$project"), $(jq '.packages | length' package-lock.json 2>/dev/null || echo '?') lockfile entries; caches primed"

# ---------------------------------------------------------------- 2. build
build_berth() {
  "$berth" env rm --all >/dev/null 2>&1 || true
  local start
  start=$(ms_now)
  (cd "$proj" && "${nice_prefix[@]}" "$berth" env build >/dev/null 2>&1) || die "berth env build of the project failed (run it by hand in a copy)"
  echo $(($(ms_now) - start))
}
build_host() {
  rm -rf "$host/node_modules"
  local start
  start=$(ms_now)
  (cd "$host" && "${nice_prefix[@]}" npm ci --offline --no-audit --no-fund --cache "$host_cache" >/dev/null 2>&1) || die "npm ci --offline on the host failed"
  echo $(($(ms_now) - start))
}
b_ms=() h_ms=() ratios=()
for ((i = 1; i <= runs; i++)); do
  if ((i % 2)); then
    b=$(build_berth)
    h=$(build_host)
  else
    h=$(build_host)
    b=$(build_berth)
  fi
  b_ms+=("$b") h_ms+=("$h")
  ratios+=("$(awk -v b="$b" -v h="$h" 'BEGIN {printf "%.3f", b / h}')")
done
echo
echo "2. build: berth env build (setup npm ci --offline) against npm ci --offline on the host"
stats "berth env build" "${b_ms[@]}"
stats "npm ci --offline on the host (also: npm ci per worktree)" "${h_ms[@]}"
printf 'pairwise ratio berth/host: %s\n' "$(printf '%s\n' "${ratios[@]}" | sort -n | tr '\n' ' ')"
build_ratio=$(awk -v a="$(median "${b_ms[@]}")" -v b="$(median "${h_ms[@]}")" 'BEGIN {printf "%.3f", a / b}')
if ((smoke)); then
  echo "target 2: layer build at most 1.2x npm ci on the host: (smoke, not judged; ratio ${build_ratio})"
elif awk -v r="$build_ratio" 'BEGIN {exit !(r <= 1.2)}'; then
  echo "target 2: layer build at most 1.2x npm ci on the host: MET (ratio of medians ${build_ratio})"
else
  echo "target 2: layer build at most 1.2x npm ci on the host: NOT MET (ratio of medians ${build_ratio})"
  missed=1
fi

# ---------------------------------------------------------------- 3. checks
# The host's node_modules stays from the last build above: the prepared worktree.
check_job() {
  cd "$proj"
  local start wall job
  start=$(ms_now)
  "${nice_prefix[@]}" "$berth" run implement -- sh -c "date +%s%N >bench/n" >/dev/null 2>&1 || true
  wall=$(($(ms_now) - start))
  job="$(job_dir)"
  python3 - "$job/receipt.json" "$wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
checks = (r.get("verification") or {}).get("checks") or []
if not isinstance(checks, list):
    checks = []
passed = all(c.get("passed") for c in checks if isinstance(c, dict)) and len(checks) > 0
dur = sum(int(c.get("duration_ms", 0)) for c in checks if isinstance(c, dict))
print(int(r.get("timings", {}).get("verify_ms", -1)), dur, sys.argv[2], "passed" if passed else "failed")
PY
}
check_host() {
  local start rc=0
  start=$(ms_now)
  (cd "$host" && "${nice_prefix[@]}" npm test >/dev/null 2>&1) || rc=$?
  echo "$(($(ms_now) - start)) $rc"
}
v_ms=() c_ms=() j_ms=() t_ms=() statuses=()
for ((i = 1; i <= runs; i++)); do
  if ((i % 2)); then order="job host"; else order="host job"; fi
  for s in $order; do
    if [[ $s == job ]]; then
      read -r v c w st < <(check_job)
      v_ms+=("$v") c_ms+=("$c") j_ms+=("$w") statuses+=("job:$st")
    else
      read -r t rc < <(check_host)
      t_ms+=("$t") statuses+=("host:exit$rc")
    fi
  done
done
echo
echo "3. checks: npm test as a job's check against npm test in a prepared worktree"
stats "job's verify_ms (the checks' whole step)" "${v_ms[@]}"
stats "job's check duration_ms (npm test in the sandbox)" "${c_ms[@]}"
stats "job's berth run wall (agent, commit, checks)" "${j_ms[@]}"
stats "npm test in a prepared worktree" "${t_ms[@]}"
echo "outcomes: $(printf '%s\n' "${statuses[@]}" | sort | uniq -c | tr -s ' \n' ' ')"
check_ratio=$(awk -v a="$(median "${v_ms[@]}")" -v b="$(median "${t_ms[@]}")" 'BEGIN {printf "%.3f", a / b}')
if ((smoke)); then
  echo "target 3: checks at most 1.1x a prepared worktree: (smoke, not judged; ratio ${check_ratio})"
elif printf '%s\n' "${statuses[@]}" | grep -qv -e 'job:passed' -e 'host:exit0'; then
  echo "target 3: checks at most 1.1x a prepared worktree: NOT MET (a run failed: see outcomes; ratio ${check_ratio})"
  missed=1
elif awk -v r="$check_ratio" 'BEGIN {exit !(r <= 1.1)}'; then
  echo "target 3: checks at most 1.1x a prepared worktree: MET (ratio of medians ${check_ratio})"
else
  echo "target 3: checks at most 1.1x a prepared worktree: NOT MET (ratio of medians ${check_ratio})"
  missed=1
fi
exit $((smoke ? 0 : missed))
