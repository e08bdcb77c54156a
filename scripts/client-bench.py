#!/usr/bin/env python3
"""Client against client, the way sweepbench measures servers: this checkout's sweepbench, an
earlier revision's and sysbench 1.0.20 run the same workload on one throwaway MariaDB in short
slices, in a random order in every round, until each ratio is decided or the budget is spent.

    scripts/client-bench.py [--prev REV] [--budget 20m] [--slice 3] [--threads 1,2,16]
                            [--workloads oltp_point_select,oltp_read_only] [--pin none|same|apart]
                            [--guard]

Per workload and thread count it prints the QPS of each client (geometric means over the
rounds), this checkout's QPS against sysbench's and against REV's, and its client CPU per query
against sysbench's, each a ratio with its interval. Rounds come in pairs: a random order of the
clients, then the same order reversed, so every client sits in every slot equally often and a
drift of the host within the pair cancels; the unit is the pair's mean log ratio. The interval
is a t interval over the pairs at a level that holds the whole run's false-alarm rate at 5 %:
Bonferroni over the looks (pairs 3, 5, 10, 20), the three ratios and every cell. A ratio is
decided when its interval lies wholly on one side of its goal (QPS: 1, ahead or behind; CPU per
query: 0.8), or, against the earlier revision, wholly within ±5 % (the same speed). The tables
are read once end to end before the first cell (prewarm), so no client pays for a cold buffer
pool another does not. `--prev same` holds this checkout against itself (an A/A: the same
binary on both sides), the check that the method decides nothing it should not.
`--pin same` runs the server and every client on one CPU (taskset): the rate is then what
the client's and the server's CPU per query allow, with no wake-up of an idle CPU between them,
so a client that costs less CPU serves more queries. That is the client's cost as the server
feels it, and on a noisy VM at 1-2 threads it decides where the unpinned run cannot: unpinned,
the wake-ups set every client's rate and move by 20-40 % between slices. `--pin apart` puts the
server on the last CPU and the clients on the others. Default `none`.
`--guard` exits 1 when this checkout is decided slower than REV or than sysbench anywhere: the
check to run before a change to the hot path lands. Traffic goes to 127.0.0.1 only.
"""
import argparse
import functools
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Looks, in pairs of rounds.
LOOKS = [3, 5, 10, 20]
RATIOS = 3


def t_cdf(t, df):
    """P(T <= t) for Student's t with `df` degrees of freedom, from the regularized incomplete
    beta function I_x(df/2, 1/2) at x = df / (df + t^2)."""
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def betainc(a, b, x):
    """I_x(a, b), by its continued fraction (Lentz's method) on the side where it converges."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - betainc(b, a, 1.0 - x)
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = tiny if abs(d) < tiny else d
        d = 1.0 / d
        c = 1.0 + num / c
        c = tiny if abs(c) < tiny else c
        f *= c * d
        if abs(1.0 - c * d) < 1e-12:
            break
    return front * (f - 1.0) / a


@functools.lru_cache(maxsize=None)
def t_quantile(p, df):
    """The t quantile at probability p, by bisection on t_cdf."""
    lo, hi = 0.0, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def duration(s):
    m = re.fullmatch(r"(\d+)([smh]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"not a duration: {s} (e.g. 90s, 20m)")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(prev):
    """This checkout's release binary and REV's (built once in a worktree under target/)."""
    run(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    ours = os.path.join(ROOT, "target/release/sweepbench")
    if prev == "same":
        # An A/A: the same file on both sides.
        return ours, ours, "itself"
    rev = subprocess.check_output(["git", "rev-parse", "--short", prev], cwd=ROOT, text=True).strip()
    tree = os.path.join(ROOT, "target/client-bench", f"src-{rev}")
    if not os.path.isdir(tree):
        run(["git", "worktree", "add", "--detach", tree, rev], cwd=ROOT, stdout=subprocess.DEVNULL)
    target = os.path.join(ROOT, "target/client-bench", f"target-{rev}")
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    print(f"[client-bench] building {rev} (once; cached in {target})", file=sys.stderr)
    run(["cargo", "build", "--release", "--quiet"], cwd=tree, env=env)
    return ours, os.path.join(target, "release/sweepbench"), rev


def measure(cmd):
    """One slice: (queries per second, client CPU seconds per query)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    m = re.search(r"queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", out)
    if not m:
        raise SystemExit(f"no 'queries:' line in the output of {' '.join(cmd)}:\n{out}")
    queries, qps = int(m.group(1)), float(m.group(2))
    return qps, cpu / max(queries, 1)


def interval(logs, alpha):
    n = len(logs)
    mean = statistics.fmean(logs)
    half = t_quantile(1 - alpha / 2, n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return mean, mean - half, mean + half


def decide(logs, goal, alpha, margin=None):
    """'above' / 'below' the goal ratio when the interval over the pairs' mean log ratios says
    so; 'within' when it lies inside goal × (1 ± margin) (an equivalence, for two builds of one
    client); else 'undecided'."""
    if len(logs) < LOOKS[0]:
        return "undecided", None
    m, lo, hi = interval(logs, alpha)
    g = math.log(goal)
    verdict = "above" if lo > g else "below" if hi < g else "undecided"
    if margin and verdict == "undecided" and lo > math.log(goal * (1 - margin)) and hi < math.log(goal * (1 + margin)):
        verdict = "within"
    return verdict, (math.exp(m), math.exp(lo), math.exp(hi))


def pairs(xs, ys):
    """Each pair of rounds' mean log ratio x / y."""
    logs = [math.log(x / y) for x, y in zip(xs, ys)]
    return [(logs[i] + logs[i + 1]) / 2 for i in range(0, len(logs) - 1, 2)]


def fmt(ci):
    if ci is None:
        return "–"
    return f"{ci[0]:.2f}× [{ci[1]:.2f}, {ci[2]:.2f}]"


def server_pid(port):
    """The throwaway server's pid, from the socket it listens on."""
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    m = re.search(r"pid=(\d+)", out)
    if not m:
        raise SystemExit(f"--pin: no process found listening on 127.0.0.1:{port} (ss -ltnp)")
    return m.group(1)


def pinning(pin, port):
    """Pins the server's threads as `pin` says; returns the prefix for every client's command."""
    if pin == "none":
        return []
    last = (os.cpu_count() or 1) - 1
    client = str(last) if pin == "same" else f"0-{last - 1}"
    # -a: every thread the server has now; its new threads inherit the mask.
    run(["taskset", "-a", "-p", "-c", str(last), server_pid(port)], stdout=subprocess.DEVNULL)
    return ["taskset", "-c", client]


def inner(a):
    port = os.environ["SWEEPBENCH_PORT"]
    conn = [f"--mysql-host=127.0.0.1", f"--mysql-port={port}", "--mysql-user=root", "--mysql-db=sbtest"]
    data = [f"--tables={a.tables}", f"--table-size={a.table_size}"]
    run([a.ours, "bench", "oltp_read_write", "prepare", *conn, *data, "--threads=2"], stdout=subprocess.DEVNULL)
    # Every table read into the buffer pool once: the first slices measured are not the ones
    # that warm it.
    run([a.ours, "bench", "oltp_read_write", "prewarm", *conn, *data, "--threads=2"], stdout=subprocess.DEVNULL)
    pre = pinning(a.pin, port)
    tools = {
        "ours": lambda wl, t, s: [*pre, a.ours, "bench", wl, "run", *conn, *data, f"--threads={t}", f"--time={s}"],
        "prev": lambda wl, t, s: [*pre, a.prev_bin, "bench", wl, "run", *conn, *data, f"--threads={t}", f"--time={s}"],
        "sysbench": lambda wl, t, s: [*pre, "sysbench", wl, *conn, *data, f"--threads={t}", f"--time={s}", "run"],
    }
    cells = [(wl, t) for wl in a.workloads for t in a.threads]
    per_cell = a.budget / len(cells)
    # The whole run's false-alarm rate: Bonferroni over the looks, the ratios and the cells.
    alpha = 0.05 / (len(LOOKS) * RATIOS * len(cells))
    rng = random.Random(a.seed)
    rows, behind = [], []
    for wl, t in cells:
        for name, cmd in tools.items():  # one unmeasured slice each: caches and connections warm
            measure(cmd(wl, t, 1))
        qps = {k: [] for k in tools}
        cpu = {k: [] for k in tools}
        began = time.monotonic()
        n = 0
        while True:
            # A pair of rounds: an order, then the same order reversed.
            order = list(tools)
            rng.shuffle(order)
            for name in order + order[::-1]:
                q, c = measure(tools[name](wl, t, a.slice))
                qps[name].append(q)
                cpu[name].append(c)
            n += 1
            if n not in LOOKS:
                continue
            d_sb, ci_sb = decide(pairs(qps["ours"], qps["sysbench"]), 1.0, alpha)
            d_prev, ci_prev = decide(pairs(qps["ours"], qps["prev"]), 1.0, alpha, 0.05)
            d_cpu, ci_cpu = decide(pairs(cpu["ours"], cpu["sysbench"]), 0.8, alpha)
            spent = time.monotonic() - began
            per_round = spent / n
            next_look = next((k for k in LOOKS if k > n), None)
            undecided = "undecided" in (d_sb, d_prev, d_cpu)
            if not undecided or next_look is None or spent + (next_look - n) * per_round > per_cell:
                break
        gm = {k: math.exp(statistics.fmean(math.log(x) for x in v)) for k, v in qps.items()}
        us = {k: 1e6 * statistics.median(v) for k, v in cpu.items()}
        word = {"above": "ahead", "below": "behind", "within": "same within ±5 %", "undecided": "undecided"}
        cpu_word = {"above": "above 0.8×", "below": "≤ 0.8×", "undecided": "undecided"}
        rows.append(
            f"| {wl} | {t} | {2 * n} | {gm['ours']:,.0f} | {gm['prev']:,.0f} | {gm['sysbench']:,.0f} | "
            f"{fmt(ci_sb)} {word[d_sb]} | {fmt(ci_prev)} {word[d_prev]} | "
            f"{us['ours']:.1f} / {us['sysbench']:.1f}: {fmt(ci_cpu)} {cpu_word[d_cpu]} |"
        )
        print(rows[-1], flush=True)
        if d_sb == "below":
            behind.append(f"{wl} t{t}: behind sysbench")
        if d_prev == "below":
            behind.append(f"{wl} t{t}: behind {a.prev}")
    return rows, behind


def selftest():
    """The method on synthetic rounds with known truth: the t quantiles against their tabled
    values; A/A (no difference, slot and drift effects the pairs cancel) over a run of 6 cells
    decides at most 5 % of runs anywhere; a 15 % difference is found. Exits 1 on a failure."""
    for p, df, want in [(0.975, 4, 2.7764), (0.975, 9, 2.2622), (0.99375, 4, 4.3147), (0.99375, 39, 2.6190)]:
        got = t_quantile(p, df)
        if abs(got - want) > 1e-3:
            sys.exit(f"t quantile {p} at {df} df: {got:.4f}, not {want}")
    rng = random.Random(7)
    cells = 6
    alpha = 0.05 / (len(LOOKS) * RATIOS * cells)

    def rounds(effect, slot):
        # Per pair of rounds: log-normal noise, a host drift shared by both, and a slot effect
        # (whichever runs second in a round is `slot` slower) that the reversed order cancels.
        xs, ys, drift = [], [], 0.0
        for _ in range(LOOKS[-1]):
            x_first = rng.random() < 0.5
            for second in (not x_first, x_first):
                drift += rng.gauss(0, 0.05)
                xs.append(math.exp(drift + effect - (slot if second else 0) + rng.gauss(0, 0.08)))
                ys.append(math.exp(drift - (0 if second else slot) + rng.gauss(0, 0.08)))
        return xs, ys

    def run_decides(effect):
        for _ in range(cells * RATIOS):
            xs, ys = rounds(effect, 0.05)
            for look in LOOKS:
                v, _ = decide(pairs(xs[: 2 * look], ys[: 2 * look]), 1.0, alpha)
                if v in ("above", "below"):
                    return True
        return False

    n = 1000
    aa = sum(run_decides(0.0) for _ in range(n)) / n
    found = sum(run_decides(math.log(1.15)) for _ in range(n)) / n
    # At most 5 %, give or take two of the simulation's own standard errors.
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)
    print(f"selftest: A/A runs of {cells} cells × {RATIOS} ratios deciding anything: {aa:.1%} "
          f"(at most 5 %, {bound:.1%} with the simulation's error); a 15 % difference found: {found:.1%}")
    sys.exit(0 if aa <= bound and found >= 0.9 else 1)


def main():
    if "--selftest" in sys.argv[1:]:
        selftest()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prev", default="52a4e7a", help="the earlier revision to hold this checkout against; 'same' for this checkout's binary (an A/A)")
    p.add_argument("--budget", type=duration, default=duration("20m"), help="measuring time over all cells")
    p.add_argument("--slice", type=int, default=3, help="seconds per slice")
    p.add_argument("--threads", default="1,2,16")
    p.add_argument("--workloads", default="oltp_point_select,oltp_read_only")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=100000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pin", choices=["none", "same", "apart"], default="none",
                   help="same: server and clients on one CPU; apart: server on the last CPU, clients on the rest")
    p.add_argument("--guard", action="store_true", help="exit 1 when decided behind REV or sysbench")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ours", help=argparse.SUPPRESS)
    p.add_argument("--prev-bin", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.threads = [int(x) for x in a.threads.split(",")]
    a.workloads = a.workloads.split(",")
    if a.inner:
        rows, behind = inner(a)
        for b in behind:
            print(f"[client-bench] decided: {b}", file=sys.stderr)
        sys.exit(1 if a.guard and behind else 0)
    if a.pin == "apart" and (os.cpu_count() or 1) < 2:
        sys.exit("--pin apart needs two CPUs and this machine has one: use --pin same")
    if subprocess.run(["sh", "-c", "command -v sysbench"], capture_output=True).returncode:
        sys.exit("sysbench is not installed: scripts/setup.sh installs it (apt-get install sysbench)")
    ours, prev_bin, rev = build(a.prev)
    load = os.getloadavg()[0]
    print(
        f"client-bench {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load:.1f}, "
        f"{a.tables} × {a.table_size:,} rows, slices of {a.slice} s in a random order per round, "
        f"this checkout against {rev} and sysbench 1.0.20, pinned: {a.pin}\n"
    )
    print("| workload | threads | rounds | QPS ours | QPS prev | QPS sysbench | ours/sysbench QPS | "
          "ours/prev QPS | client µs/query ours / sysbench: ratio |")
    print("|---|---:|---:|---:|---:|---:|---|---|---|", flush=True)
    args = [sys.executable, os.path.abspath(__file__), "--inner", "--ours", ours, "--prev-bin", prev_bin,
            "--prev", rev, "--budget", f"{a.budget}s", "--slice", str(a.slice),
            "--threads", ",".join(map(str, a.threads)), "--workloads", ",".join(a.workloads),
            "--tables", str(a.tables), "--table-size", str(a.table_size), "--seed", str(a.seed),
            "--pin", a.pin]
    if a.guard:
        args.append("--guard")
    r = subprocess.run([ours, "sandbox", "--max-connections=300",
                        "--server-option=innodb_buffer_pool_size=1G", "--", *args])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
