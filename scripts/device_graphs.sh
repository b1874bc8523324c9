# The graphs of the GPU scripts: the benchmark graphs, built on the GPU machine on
# first use, and the correctness graphs
# (sourced by gpu_suite.sh, gpu_mpi.sh and bench_multi_gpu.sh; needs CHATTY, DATASETS, WORK, OUT).

bench_graph() { # name -> path of a .cgr on the device
    local name=$1 path="$WORK/$1.cgr"
    if [ ! -f "$path" ]; then
        case $name in
            rmat22) "$CHATTY" generate rmat -s 22 -e 16 --weights 255 -o "$path" -q ;;
            rmat22u) "$CHATTY" generate rmat -s 22 -e 16 --undirected -o "$path" -q ;;
            path5k) "$CHATTY" generate grid --width 5000 --height 1 -o "$path" -q ;;
            rmat24) "$CHATTY" generate rmat -s 24 -e 16 --weights 255 -o "$path" -q ;;
            rmat25) "$CHATTY" generate rmat -s 25 -e 16 --weights 255 -o "$path" -q ;;
            rmat24sym) "$CHATTY" generate rmat -s 24 -e 16 --undirected --weights 255 -o "$path" -q ;;
            rmat26) "$CHATTY" generate rmat -s 26 -e 16 -o "$path" -q ;;
            urand24) "$CHATTY" generate urand -s 24 -e 16 --weights 255 -o "$path" -q ;;
            grid16m) "$CHATTY" generate grid --width 4096 --height 4096 -o "$path" -q ;;
            road-NE) "$CHATTY" convert "$DATASETS/road/USA-road-NE.pace.gr.gz" -o "$path" -q ;;
            moscow) "$CHATTY" convert "$DATASETS/road/moscow-osm.gr.gz" -o "$path" -q ;;
            twitter) "$CHATTY" convert "$DATASETS/social/ego-Twitter.undirected.el.gz" -o "$path" -q ;;
            web) "$CHATTY" convert "$DATASETS/web/cnr-2000.el.gz" -o "$path" -q ;;
        esac 2>> "$OUT/generate.log"
        # Store the transpose of directed graphs once, instead of building it per run.
        "$CHATTY" convert "$path" -o "$WORK/tmp.cgr" --transpose -q 2>> "$OUT/generate.log" && mv "$WORK/tmp.cgr" "$path"
    fi
    echo "$path"
}


correctness_graphs() { # -> every dataset and four generated graphs, one path a line
    (cd "$DATASETS" && find . -name '*.gz' ! -name '*.co.gz' | sort) | sed "s|^\./|$DATASETS/|"
    "$CHATTY" generate rmat -s 16 -e 16 --weights 255 -o "$WORK/c-rmat16.cgr" -q 2>/dev/null
    "$CHATTY" generate rmat -s 16 -e 8 --undirected --weights 100 -o "$WORK/c-rmat16u.cgr" -q 2>/dev/null
    "$CHATTY" generate urand -s 15 -e 8 -o "$WORK/c-urand15.cgr" -q 2>/dev/null
    "$CHATTY" generate grid --width 300 --height 200 -o "$WORK/c-grid.cgr" -q 2>/dev/null
    printf '%s\n' "$WORK/c-rmat16.cgr" "$WORK/c-rmat16u.cgr" "$WORK/c-urand15.cgr" "$WORK/c-grid.cgr"
}
