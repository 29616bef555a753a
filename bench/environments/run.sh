#!/usr/bin/env bash
# Environments (issue 28, docs/environments.md): the layer targets, each A against B in
# interleaved runs (A, B, B, A, ...), never in blocks, so that load on a shared machine falls
# on both sides alike.
#   1. ready: a job whose layer (a synthetic node_modules of about 200 MB in tens of thousands
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
#   --smoke        tiny sizes (2,000 files, 8 MB), 2 pairs, target 1 only unless --project;
#                  checks that it runs, enforces no target
#   --runs N       interleaved pairs per target (default 7)
#   --project DIR  a real npm project (package.json + package-lock.json; its dependencies
#                  reachable by `npm ci` with the npm config of $PRIME_HOME or HOME) for
#                  targets 2 and 3; without it they are skipped
# Environment:
#   BERTH          the berth binary (default: build/release/src/cli/berth under the repo root)
#   BENCH_TMPDIR   scratch directory (default: /var/tmp)
#   PRIME_HOME     the HOME whose npm config primes the caches (default: HOME)
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
      [[ $# -ge 2 && -f "$2/package-lock.json" ]] || die "--project needs a directory with package-lock.json"
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
prime_home="${PRIME_HOME:-$HOME}"
read -r -a nice_prefix <<<"${NICE:-}"

if ((smoke)); then
  packages=100 files_per_package=20 file_bytes=4000
else
  # 1,500 packages x 24 files = 36,000 files; sizes 1.4 KB to 10 KB, about 200 MB in all.
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
    printf "%-52s median %8.1f ms  min-max %d-%d ms  (n=%d)\n", name, m, v[1], v[NR], NR }'
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
echo "synthetic node_modules: $(find "$root/host_node_modules" -type f | wc -l) files, $(du -sm "$root/host_node_modules" | cut -f1) MB"
# A warm-up job of each, not measured.
(cd "$root/with" && "$berth" run implement -- true >/dev/null 2>&1) || true
(cd "$root/without" && "$berth" run implement -- true >/dev/null 2>&1) || true

job_dir() { ls -td "$BERTH_STATE_DIR"/jobs/* | head -1; }
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
  echo "$((ready - start)) $wall"
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
for ((i = 1; i <= runs; i++)); do
  # Alternate which side goes first.
  if ((i % 2)); then order="with without"; else order="without with"; fi
  for v in $order; do
    read -r r w < <(ready_job "$v")
    if [[ $v == with ]]; then with_ready+=("$r") with_wall+=("$w"); else without_ready+=("$r") without_wall+=("$w"); fi
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
