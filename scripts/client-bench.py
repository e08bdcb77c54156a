#!/usr/bin/env python3
"""Client against client, the way sweepbench measures servers: this checkout's sweepbench, an
earlier revision's and sysbench 1.0.20 run the same workload on one throwaway MariaDB in short
slices, in a random order in every round, until each ratio is decided or the budget is spent.

    scripts/client-bench.py [--prev REV] [--budget 20m] [--slice 3] [--threads 1,2,16]
                            [--workloads oltp_point_select,oltp_read_only] [--pin none|same|apart]
                            [--guard]

Per workload and thread count it prints the QPS of each client (geometric means over the
rounds), this checkout's QPS against sysbench's and against REV's, and its client CPU per query
against sysbench's, each a ratio with its interval: the mean of the rounds' log ratios, a t
interval at 95 % with Bonferroni over the looks (rounds 5, 10, 20, 40). A ratio is decided when
its interval lies wholly on one side of its goal (QPS: 1, ahead or behind; CPU per query: 0.8),
or, against the earlier revision, wholly within ±5 % (the same speed).
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
LOOKS = [5, 10, 20, 40]
ALPHA = 0.05 / len(LOOKS)
# Two-sided t quantiles at 1 - ALPHA/2 = 0.99375 by degrees of freedom (4 .. 39); beyond, z.
T_Q = {4: 4.315, 9: 3.111, 19: 2.759, 39: 2.619}


def t_quantile(df):
    if df in T_Q:
        return T_Q[df]
    # Between the tabled looks (an interrupted cell): the next smaller df's, conservative.
    smaller = [d for d in T_Q if d <= df]
    return T_Q[max(smaller)] if smaller else 12.0


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


def interval(logs):
    n = len(logs)
    mean = statistics.fmean(logs)
    half = t_quantile(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return mean, mean - half, mean + half


def decide(logs, goal, margin=None):
    """'above' / 'below' the goal ratio when the interval says so; 'within' when it lies
    inside goal × (1 ± margin) (an equivalence, for two builds of one client); else
    'undecided'."""
    if len(logs) < LOOKS[0]:
        return "undecided", None
    m, lo, hi = interval(logs)
    g = math.log(goal)
    verdict = "above" if lo > g else "below" if hi < g else "undecided"
    if margin and verdict == "undecided" and lo > math.log(goal * (1 - margin)) and hi < math.log(goal * (1 + margin)):
        verdict = "within"
    return verdict, (math.exp(m), math.exp(lo), math.exp(hi))


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
    pre = pinning(a.pin, port)
    tools = {
        "ours": lambda wl, t, s: [*pre, a.ours, "bench", wl, "run", *conn, *data, f"--threads={t}", f"--time={s}"],
        "prev": lambda wl, t, s: [*pre, a.prev_bin, "bench", wl, "run", *conn, *data, f"--threads={t}", f"--time={s}"],
        "sysbench": lambda wl, t, s: [*pre, "sysbench", wl, *conn, *data, f"--threads={t}", f"--time={s}", "run"],
    }
    cells = [(wl, t) for wl in a.workloads for t in a.threads]
    per_cell = a.budget / len(cells)
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
            order = list(tools)
            rng.shuffle(order)
            for name in order:
                q, c = measure(tools[name](wl, t, a.slice))
                qps[name].append(q)
                cpu[name].append(c)
            n += 1
            if n not in LOOKS:
                continue
            vs_sb = [math.log(x / y) for x, y in zip(qps["ours"], qps["sysbench"])]
            vs_prev = [math.log(x / y) for x, y in zip(qps["ours"], qps["prev"])]
            cpu_sb = [math.log(x / y) for x, y in zip(cpu["ours"], cpu["sysbench"])]
            d_sb, ci_sb = decide(vs_sb, 1.0)
            d_prev, ci_prev = decide(vs_prev, 1.0, 0.05)
            d_cpu, ci_cpu = decide(cpu_sb, 0.8)
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
            f"| {wl} | {t} | {n} | {gm['ours']:,.0f} | {gm['prev']:,.0f} | {gm['sysbench']:,.0f} | "
            f"{fmt(ci_sb)} {word[d_sb]} | {fmt(ci_prev)} {word[d_prev]} | "
            f"{us['ours']:.1f} / {us['sysbench']:.1f}: {fmt(ci_cpu)} {cpu_word[d_cpu]} |"
        )
        print(rows[-1], flush=True)
        if d_sb == "below":
            behind.append(f"{wl} t{t}: behind sysbench")
        if d_prev == "below":
            behind.append(f"{wl} t{t}: behind {a.prev}")
    return rows, behind


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prev", default="52a4e7a", help="the earlier revision to hold this checkout against")
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
