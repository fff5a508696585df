#!/usr/bin/env bash
# Benchmarks the persistent cache (issue 14): cold runs (an empty cache, every call traced and
# stored) against warm runs (every call a hit) and --no-cache runs, interleaved, REPS times,
# of two descriptions:
#   graph: the 100,000-call internal graph of scripts/gen_internal_graph.py (100 variants)
#   ext:   200 external calls of a tiled matmul over 20 shapes (scripts/gen_external_matmul.py)
# with a local cache folder, then with a local redis-server (started here on a loopback port,
# stopped on exit) as the only cache. Prints the median wall time of each, the cold/warm ratio,
# and from nkicc's -vv stage timers the cost of one warm hit (lookup, read, checks, decode)
# against the cost of computing its persistent key. Goals: a warm run of `ext` at least 20x
# faster than a cold one; a hit at most 2x its key. Every output is checked byte-identical to
# the --no-cache run's. Usage: scripts/bench_cache_persist.sh [build-dir] [reps]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
reps="${2:-3}"
nkicc="$(cd "$build_dir" && pwd)/bin/nkicc"
work=$(mktemp -d)
redis_pid=""
cleanup() {
  [ -z "$redis_pid" ] || kill "$redis_pid" 2> /dev/null || true
  [ -z "$redis_pid" ] || wait "$redis_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

python3 scripts/gen_internal_graph.py "$work/graph.json" 100000 100
python3 scripts/gen_external_matmul.py "$work/ext" 200 20

redis_url=""
if command -v redis-server > /dev/null; then
  for _ in 1 2 3 4 5; do
    port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
    redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no --daemonize no \
      --logfile "$work/redis.log" &
    redis_pid=$!
    for _ in $(seq 100); do
      redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && break
      sleep 0.05
    done
    if redis-cli -p "$port" ping 2> /dev/null | grep -q PONG; then
      redis_url="redis://127.0.0.1:$port/0"
      break
    fi
    kill "$redis_pid" 2> /dev/null || true
    redis_pid=""
  done
fi
[ -n "$redis_url" ] || echo "bench_cache_persist: no redis-server: the Redis figures are skipped" >&2

python3 - "$nkicc" "$work" "$reps" "$redis_url" <<'PY'
import os, re, shutil, statistics, subprocess, sys, time

nkicc, work, reps, redis_url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
descs = {"graph": os.path.join(work, "graph.json"), "ext": os.path.join(work, "ext", "matmuls.json")}
times, stages = {}, {}


def run(label, desc, *args):
    out = os.path.join(work, f"{label}.bir")
    start = time.perf_counter()
    p = subprocess.run([nkicc, "-vv", "trace", descs[desc], "-o", out, *args], stderr=subprocess.PIPE, text=True)
    secs = time.perf_counter() - start
    if p.returncode:
        sys.exit(f"{label} failed:\n{p.stderr}")
    times.setdefault(label, []).append(secs)
    for name, n, ms in re.findall(r"stage persistent (keys|lookups) \((\d+)\): ([0-9.]+) ms", p.stderr):
        stages.setdefault((label, name), []).append((int(n), float(ms)))
    return open(out, "rb").read()


def flush_redis():
    port = redis_url.split(":")[2].split("/")[0]
    subprocess.run(["redis-cli", "-p", port, "flushall"], stdout=subprocess.DEVNULL, check=True)


modes = [("local", lambda d: ["--cache-dir", os.path.join(work, f"cache-{d}")])]
if redis_url:
    modes.append(("redis", lambda d: ["--remote-cache", redis_url]))
same = True
for rep in range(reps):
    for desc in descs:
        expected = run(f"{desc}/no-cache", desc, "--no-cache")
        for mode, flags in modes:
            shutil.rmtree(os.path.join(work, f"cache-{desc}"), ignore_errors=True)
            if mode == "redis":
                flush_redis()
            same &= run(f"{desc}/{mode}/cold", desc, *flags(desc)) == expected
            same &= run(f"{desc}/{mode}/warm", desc, *flags(desc)) == expected


def med(label):
    return statistics.median(times[label])


def per_call(label, name):
    got = stages.get((label, name), [])
    return statistics.median(ms / n for n, ms in got) if got else float("nan")


print(f"persistent cache, {reps} interleaved runs each (median wall time); outputs "
      f"{'byte-identical to --no-cache' if same else 'DIFFERENT from --no-cache'}")
print("graph: 100,000 internal calls over 100 variants; ext: 200 external tiled-matmul calls over 20 shapes")
print(f"{'description':<12} {'cache':<6} {'--no-cache s':>12} {'cold s':>8} {'warm s':>8} {'cold/warm':>9} "
      f"{'key us':>8} {'hit us':>8} {'hit/key':>7}")
for desc in descs:
    for mode, _ in modes:
        cold, warm, nocache = med(f"{desc}/{mode}/cold"), med(f"{desc}/{mode}/warm"), med(f"{desc}/no-cache")
        key = per_call(f"{desc}/{mode}/warm", "keys") * 1000
        hit = per_call(f"{desc}/{mode}/warm", "lookups") * 1000
        print(f"{desc:<12} {mode:<6} {nocache:>12.3f} {cold:>8.3f} {warm:>8.3f} {cold / warm:>8.1f}x "
              f"{key:>8.1f} {hit:>8.1f} {hit / key:>6.2f}x")
for mode, _ in modes:
    ratio = med(f"ext/{mode}/cold") / med(f"ext/{mode}/warm")
    hit = per_call(f"ext/{mode}/warm", "lookups") / per_call(f"ext/{mode}/warm", "keys")
    print(f"goals ({mode}): ext warm {ratio:.1f}x faster than cold (goal >= 20x: {'met' if ratio >= 20 else 'NOT met'}); "
          f"a hit {hit:.2f}x its key (goal <= 2x: {'met' if hit <= 2 else 'NOT met'})")
PY
