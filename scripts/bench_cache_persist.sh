#!/usr/bin/env bash
# Benchmarks the persistent cache (issue 14): cold runs (an empty cache, every call traced and
# stored) against warm runs (every call a hit) and runs without a persistent cache,
# interleaved, REPS times, of two descriptions:
#   graph: the 100,000-call internal graph of scripts/gen_internal_graph.py (100 variants)
#   ext:   200 external calls of a tiled matmul over 20 shapes (scripts/gen_external_matmul.py)
# with a local cache folder, then with a local redis-server (started here on a loopback port,
# stopped on exit) as the only cache. Prints the median CPU time (user + system: the machine
# may be shared, so wall time is shown only beside it) of each, the cold/warm ratio, and from
# nkicc's -vv figures the CPU cost of one warm hit (lookup, read, checks, decode) against the
# cost of computing its persistent key. Goals: a warm run of `ext` at least 20x cheaper than a
# cold one; a hit at most 2x its key. It also prints each cold run over start-up alone
# (`nkicc --version`): no warm run costs less than starting, so that is the most a cache can
# give there. Every output is checked byte-identical to the --no-cache run's. Usage: scripts/bench_cache_persist.sh [build-dir] [reps]
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


def run(label, desc, *args, timed=True):
    """One nkicc run, its wall and CPU (user + system) seconds recorded. Timed runs log nothing
    (100,000 info lines would be measured too); the others log at -vv for the hit and key
    figures."""
    out = os.path.join(work, label.replace("/", "-") + ".bir")
    log = os.path.join(work, "run.log")
    args = [nkicc, *([] if timed else ["-vv"]), "trace", descs[desc], "-o", out, *args]
    start = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(args, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    text = open(log).read()
    if status:
        sys.exit(f"{label} failed:\n{text[-3000:]}")
    if timed:
        times.setdefault(label, []).append((wall, usage.ru_utime + usage.ru_stime))
    m = re.search(r"persistent cache cpu time: (\d+) keys [0-9.]+ ms \(median ([0-9.]+) us\), (\d+) lookups "
                  r"[0-9.]+ ms \(median ([0-9.]+) us\)", text)
    if m:
        stages.setdefault((label, "keys"), []).append(float(m.group(2)))
        stages.setdefault((label, "lookups"), []).append(float(m.group(4)))
    return open(out, "rb").read()


def flush_redis():
    port = redis_url.split(":")[2].split("/")[0]
    subprocess.run(["redis-cli", "-p", port, "flushall"], stdout=subprocess.DEVNULL, check=True)


modes = [("local", lambda d: ["--cache-dir", os.path.join(work, f"cache-{d}")])]
if redis_url:
    modes.append(("redis", lambda d: ["--remote-cache", redis_url]))
# --no-cache traces each of the graph's 100,000 calls (over a minute): it is run once, for the
# byte-identity check. The timed baseline is a run without a persistent cache (the per-run
# caches on), which is what a cold run adds its stores to.
expected = {desc: run(f"{desc}/no-cache", desc, "--no-cache", timed=False) for desc in descs}
same = True
for rep in range(reps):
    start = time.perf_counter()
    proc = subprocess.Popen([nkicc, "--version"], stdout=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    times.setdefault("startup", []).append((time.perf_counter() - start, usage.ru_utime + usage.ru_stime))
    for desc in descs:
        same &= run(f"{desc}/plain", desc) == expected[desc]
        for mode, flags in modes:
            shutil.rmtree(os.path.join(work, f"cache-{desc}"), ignore_errors=True)
            if mode == "redis":
                flush_redis()
            same &= run(f"{desc}/{mode}/cold", desc, *flags(desc)) == expected[desc]
            same &= run(f"{desc}/{mode}/warm", desc, *flags(desc)) == expected[desc]
            # Once more at -vv, untimed, for the per-key and per-hit figures.
            same &= run(f"{desc}/{mode}/warm-log", desc, *flags(desc), timed=False) == expected[desc]


def med(label, cpu=True):
    return statistics.median(t[1] if cpu else t[0] for t in times[label])


def per_call(label, name):
    got = stages.get((label, name), [])
    return statistics.median(got) if got else float("nan")


print(f"persistent cache, {reps} interleaved runs each; outputs "
      f"{'byte-identical to --no-cache' if same else 'DIFFERENT from --no-cache'}")
print("graph: 100,000 internal calls over 100 variants; ext: 200 external tiled-matmul calls over 20 shapes")
print("plain: no persistent cache. Times: median CPU seconds (user + system) of the process, wall in brackets")
print("key/hit: median CPU microseconds of one persistent key and of one warm lookup (read, checks, decode)")
print(f"{'description':<6} {'cache':<6} {'plain s':>15} {'cold s':>15} {'warm s':>15} {'cold/warm':>9} "
      f"{'key us':>7} {'hit us':>7} {'hit/key':>7}")
for desc in descs:
    for mode, _ in modes:
        cells = []
        for what in ("plain", f"{mode}/cold", f"{mode}/warm"):
            cells.append(f"{med(f'{desc}/{what}'):.3f} ({med(f'{desc}/{what}', False):.2f})")
        ratio = med(f"{desc}/{mode}/cold") / med(f"{desc}/{mode}/warm")
        key, hit = per_call(f"{desc}/{mode}/warm-log", "keys"), per_call(f"{desc}/{mode}/warm-log", "lookups")
        print(f"{desc:<6} {mode:<6} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15} {ratio:>8.1f}x "
              f"{key:>7.1f} {hit:>7.1f} {hit / key:>6.2f}x")
startup = med("startup")
print(f"start-up alone (nkicc --version): {startup:.3f} s CPU")
# No warm run costs less than starting nkicc: start-up bounds the cold/warm ratio a cache can give.
for desc in descs:
    for mode, _ in modes:
        cold = med(f"{desc}/{mode}/cold")
        print(f"bound ({desc}, {mode}): cold {cold:.3f} s / start-up {startup:.3f} s = {cold / startup:.1f}x, "
              f"the most any warm run could be cheaper here")
for mode, _ in modes:
    ratio = med(f"ext/{mode}/cold") / med(f"ext/{mode}/warm")
    hit = per_call(f"ext/{mode}/warm-log", "lookups") / per_call(f"ext/{mode}/warm-log", "keys")
    print(f"goals ({mode}): ext warm {ratio:.1f}x cheaper than cold (goal >= 20x: {'met' if ratio >= 20 else 'NOT met'}); "
          f"a hit {hit:.2f}x its key (goal <= 2x: {'met' if hit <= 2 else 'NOT met'})")
PY
