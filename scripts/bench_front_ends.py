"""Python and the CLI side by side: the same engine, parameters and graph through
`chattygraph.run` and `chatty run --json`, median kernel time of TRIALS calls each
(Python's after one untimed call, as the CLI's engine warms up its own way), printed
as a table. Both open the engine through `chatty::open` and run the one harness.

usage: python3 scripts/bench_front_ends.py CHATTY GRAPH [--threads 1,16] [--kernels pr,bfs,wcc,sssp] [--trials 9]
"""

import argparse
import json
import statistics
import subprocess

import chattygraph as cg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chatty")
    ap.add_argument("graph")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--kernels", default="pr,bfs,wcc,sssp")
    ap.add_argument("--trials", type=int, default=9)
    a = ap.parse_args()
    g = cg.read(a.graph)
    print(f'{"kernel":6} {"threads":>7} {"python ms":>10} {"cli ms":>10} {"python/cli":>10}')
    for alg in a.kernels.split(","):
        sourced = alg in ("bfs", "sssp", "bc")
        for t in map(int, a.threads.split(",")):
            params = {"source": 0} if sourced else {}
            cg.run(g, alg, engine="cpu", threads=t, **params)
            py = [cg.run(g, alg, engine="cpu", threads=t, **params)[1]["trial_seconds"][0] for _ in range(a.trials)]
            flags = ["-r", "0"] if sourced else []
            out = subprocess.run([a.chatty, "run", alg, a.graph, "--engine", "cpu", "--threads", str(t), "-n", str(a.trials),
                                  "--json", *flags], capture_output=True, text=True, check=True)
            cli = json.loads(out.stdout)["trial_seconds"]
            p, c = statistics.median(py) * 1e3, statistics.median(cli) * 1e3
            print(f"{alg:6} {t:7} {p:10.2f} {c:10.2f} {p / c:10.3f}")


if __name__ == "__main__":
    main()
