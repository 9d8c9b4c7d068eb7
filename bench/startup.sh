#!/usr/bin/env bash
# Startup overhead of the cold `cordon run -- true` (no server) against bare `true`,
# `cordon run --sandbox forbid` (the CLI without the helper) and `bwrap` with the same
# namespaces (user, mount, pid, ipc, net; read-only root, private /tmp, fresh /proc, /dev),
# and bwrap without the net namespace (issue 12 item 1).
#
# One interleaved run: every round runs each command once, in a shuffled order, so load
# changes hit all of them alike. Then the same under load: 8 concurrent loops, each
# cycling through the commands. Prints medians, p95, the cordon/bwrap ratios (targets:
# <= 0.8 alone, <= 1.0 under 8 loops), and peak RSS (GNU time, median of 15; for cordon
# the largest process of its tree — CLI, helper, init — an upper bound for the helper's;
# target <= 8 MiB).
#
# Usage: bench/startup.sh [ROUNDS] [PER_LOOP]   (defaults 200 and 40). Installs
# bubblewrap if missing. Shared, noisy machines: compare the ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-200}"
PER_LOOP="${2:-40}"

missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cargo build --release -q -p cordon --bin cordon
CORDON="$PWD/target/release/cordon"
WORK="$(mktemp -d /var/tmp/cordon-startup.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" && git init -q .

exec python3 - "$CORDON" "$WORK" "$ROUNDS" "$PER_LOOP" <<'PY'
import os, random, statistics, subprocess, sys, threading, time
cordon, work, rounds, per_loop = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
bwrap = ["bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
         "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
         "--bind", work, work, "--chdir", work]
cmds = {
    "bare": ["true"],
    "cordon": [cordon, "run", "--no-server", "--", "true"],
    "forbid": [cordon, "run", "--no-server", "--sandbox", "forbid", "--", "true"],
    "bwrap-net": bwrap[:1] + ["--unshare-net"] + bwrap[1:] + ["true"],
    "bwrap": bwrap + ["true"],
}
def once(argv):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, cwd=work)
    if p.wait() != 0:
        sys.exit(f"{argv} failed: exit {p.returncode}")
    return time.perf_counter() - t
def peak_rss_kib(argv):
    # GNU time's child is exec'd from a small process (a child forked from this Python
    # would report Python's RSS: the high-water mark survives exec).
    out = []
    for _ in range(15):
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, cwd=work,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out.append(int(r.stderr.strip().splitlines()[-1]))
    return statistics.median(out)
def stats(xs):
    xs = sorted(xs)
    return statistics.median(xs) * 1e3, xs[int(0.95 * (len(xs) - 1))] * 1e3
names = list(cmds)
for _ in range(10):
    for n in names: once(cmds[n])
alone = {n: [] for n in names}
for _ in range(rounds):
    random.shuffle(names)
    for n in names:
        alone[n].append(once(cmds[n]))
rss = {n: peak_rss_kib(cmds[n]) for n in cmds}
loaded = {n: [] for n in names}
lock = threading.Lock()
def loop(seed):
    order = list(cmds); random.Random(seed).shuffle(order)
    for i in range(per_loop):
        for n in order:
            w = once(cmds[n])
            with lock: loaded[n].append(w)
t0 = time.perf_counter()
ts = [threading.Thread(target=loop, args=(i,)) for i in range(8)]
for t in ts: t.start()
for t in ts: t.join()
took = time.perf_counter() - t0
print(f"{'what':10s} {'median':>8s} {'p95':>8s}   {'8 loops':>8s} {'p95':>8s}   peak RSS")
for n in ["bare", "cordon", "forbid", "bwrap-net", "bwrap"]:
    m, p = stats(alone[n]); lm, lp = stats(loaded[n])
    print(f"{n:10s} {m:7.2f}ms {p:7.2f}ms   {lm:7.2f}ms {lp:7.2f}ms   {rss[n]/1024:.1f} MiB")
ma, la = stats(alone["cordon"])[0], stats(loaded["cordon"])[0]
ba, bl = stats(alone["bwrap-net"])[0], stats(loaded["bwrap-net"])[0]
print(f"\ncordon/bwrap-net median ratio: alone {ma/ba:.2f} (target <= 0.8), "
      f"8 loops {la/bl:.2f} (target <= 1.0)")
print(f"helper share (cordon - forbid), alone: {ma - stats(alone['forbid'])[0]:.2f} ms")
print(f"8-loop throughput, all kinds: {8*per_loop*len(cmds)/took:.0f} commands/s")
PY
