#!/usr/bin/env bash
# The CPU engine on a busy machine (issue 63, class 7): each row runs `chatty run`
# with the default threads and with --threads 1, first on an idle machine, then while
# one other process spins on every core, and reports the median trial time. The
# default's waits must adapt: on the busy machine within 1.5x of --threads 1.
#
# usage: scripts/bench_busy.sh GRAPH:KERNEL...   (e.g. road-NE.cgr:bfs moscow.cgr:sssp)
# Environment: CHATTY (default target/release/chatty; several binaries separated by
# spaces run side by side), TRIALS (default 5).
set -uo pipefail
CHATTY=${CHATTY:-target/release/chatty}
TRIALS=${TRIALS:-5}
cores=$(nproc)
median() { # chatty run arguments... -> median trial milliseconds
    "$@" -n "$TRIALS" --json 2>/dev/null |
        python3 -c 'import json,sys,statistics; print("%.1f" % (statistics.median(json.load(sys.stdin)["trial_seconds"]) * 1e3))'
}
echo "binary,graph,kernel,load,threads,median_ms"
for load in idle busy; do
    spinners=()
    if [ $load = busy ]; then
        for _ in $(seq "$cores"); do
            sh -c 'while :; do :; done' &
            spinners+=($!)
        done
    fi
    for spec in "$@"; do
        graph=${spec%%:*} kernel=${spec##*:}
        for bin in $CHATTY; do
            for threads in default 1; do
                flags=()
                [ $threads = 1 ] && flags=(--threads 1)
                echo "$(basename "$bin"),$(basename "$graph"),$kernel,$load,$threads,$(median "$bin" run "$kernel" "$graph" "${flags[@]}")"
            done
        done
    done
    [ ${#spinners[@]} -gt 0 ] && kill "${spinners[@]}"
done
