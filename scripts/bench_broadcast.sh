#!/usr/bin/env bash
# The broadcast benchmark of docs/benchmarks/broadcast.md, one call: the full grid
# (scheme x loss x receivers), a window sweep at 1% loss, and bursty loss. Writes
# JSON, SVG charts and Markdown tables into OUT_DIR and prints the tables.
# usage: CHATTY=target/release/chatty scripts/bench_broadcast.sh [OUT_DIR]
set -euo pipefail
CHATTY=${CHATTY:-target/release/chatty}
OUT=${1:-data/broadcast}
mkdir -p "$OUT/grid" "$OUT/window" "$OUT/burst"
"$CHATTY" bench broadcast --json --charts "$OUT/grid" > "$OUT/grid.json"
"$CHATTY" bench broadcast --json --charts "$OUT/window" --loss 0,0.01 --receivers 1,4,16 \
    --window 65536,262144,1048576,8388608 > "$OUT/window.json"
"$CHATTY" bench broadcast --json --charts "$OUT/burst" --loss 0,0.01,0.05 --receivers 4,16 --burst 8 > "$OUT/burst.json"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
def table(name, title):
    d = json.load(open(os.path.join(out, name + ".json")))
    runs = d["runs"]
    lines = [f"### {title}", "",
             f"{d['message_bytes']}-byte messages; latency phase {d['latency_messages']} messages every {d['interval_us']} us; "
             f"rate phase {d['rate_messages']} messages unpaced; burst {d['burst']}; commit {d['commit']}", "",
             "| scheme | loss | R | window | p50 us | mean us | p99 us | msgs/s | MB/s | lost | dup | reord | recovery us | peak window KiB | model KiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['scheme']} | {r['loss']} | {r['receivers']} | {r['window_limit_bytes']//1024} KiB | {r['p50_us']:.0f} | {r['mean_us']:.0f} | "
                     f"{r['p99_us']:.0f} | {r['rate_msgs_per_s']:.0f} | {r['rate_mb_per_s']:.1f} | {r['lost']} | {r['duplicated']} | {r['reordered']} | "
                     f"{r['recovery_us_mean']:.0f} | {r['peak_window_bytes']/1024:.0f} | {r['model_window_bytes']/1024:.0f} |")
    lines += ["", "RMA-pull against NACK, same loss, receivers and window (positive: RMA better):", "",
              "| loss | R | window | p50 lower | mean lower | p99 lower | rate higher |", "|---|---|---|---|---|---|---|"]
    for n in runs:
        if n["scheme"] != "nack" or n["loss"] == 0:
            continue
        m = [r for r in runs if r["scheme"] == "rma" and r["loss"] == n["loss"] and r["receivers"] == n["receivers"]
             and r["window_limit_bytes"] == n["window_limit_bytes"]]
        if not m:
            continue
        m = m[0]
        low = lambda k: f"{100 * (1 - m[k] / n[k]):.0f}%"
        lines.append(f"| {n['loss']} | {n['receivers']} | {n['window_limit_bytes']//1024} KiB | {low('p50_us')} | {low('mean_us')} | {low('p99_us')} | "
                     f"{100 * (m['rate_msgs_per_s'] / n['rate_msgs_per_s'] - 1):+.0f}% |")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, name + ".md"), "w").write(text)
    print(text)
table("grid", "Grid: scheme x loss x receivers")
table("window", "Window sweep")
table("burst", "Bursty loss (mean burst 8 packets)")
PY
