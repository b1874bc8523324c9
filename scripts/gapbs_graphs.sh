# The graphs both ChattyGraph and GAPBS run on, made once in the current directory:
# NAME.cgr for chatty, NAME.sg (and NAME.wsg where weighted) for GAPBS, the same
# simple graph (sourced by bench_cpu.sh and bench_gpu_vs_gapbs.sh; needs CHATTY,
# GAPBS (a built checkout) and DATASETS).

# make_graph NAME: NAME.cgr, NAME.sg and (weighted) NAME.wsg, unless NAME.cgr and
# NAME.sg exist (a NAME.cgr alone, made by another script, is made again with its .sg).
make_graph() {
    local name=$1
    [ -f "$name.cgr" ] && [ -f "$name.sg" ] && return
    case $name in
        rmat20) "$CHATTY" generate rmat -s 20 -e 16 --undirected --weights 255 -o raw.cgr -q ;;
        rmat22 | kron22) "$CHATTY" generate rmat -s 22 -e 16 --undirected --weights 255 -o raw.cgr -q ;;
        kron22d) "$CHATTY" generate rmat -s 22 -e 16 --weights 255 -o raw.cgr -q ;;
        urand22) "$CHATTY" generate urand -s 22 -e 16 --undirected --weights 255 -o raw.cgr -q ;;
        grid) "$CHATTY" generate grid --width 2048 --height 2048 -o raw.cgr -q ;;
        path5k) "$CHATTY" generate grid --width 5000 --height 1 -o raw.cgr -q ;;
        road | moscow) "$CHATTY" convert "$DATASETS/road/moscow-osm.gr.gz" -o raw.cgr -q ;;
        roadNE) "$CHATTY" convert "$DATASETS/road/USA-road-NE.pace.gr.gz" -o raw.cgr -q ;;
        roadNEsym) "$CHATTY" convert "$DATASETS/road/USA-road-NE.pace.gr.gz" -o raw.cgr --symmetrize -q ;;
        twittersym) "$CHATTY" convert "$DATASETS/social/ego-Twitter.undirected.el.gz" -o raw.cgr --symmetrize -q ;;
        slashdot) "$CHATTY" convert "$DATASETS/social/soc-Slashdot0902.el.gz" -o raw.cgr --symmetrize -q ;;
        social | twitter) "$CHATTY" convert "$DATASETS/social/ego-Twitter.undirected.el.gz" -o raw.cgr -q ;;
        enron) "$CHATTY" convert "$DATASETS/social/email-Enron.el.gz" -o raw.cgr -q ;;
        wikivote) "$CHATTY" convert "$DATASETS/social/wiki-Vote.txt.gz" -o raw.cgr -q ;;
        web) "$CHATTY" convert "$DATASETS/web/cnr-2000.el.gz" -o raw.cgr -q ;;
        websym) "$CHATTY" convert "$DATASETS/web/cnr-2000.el.gz" -o raw.cgr --symmetrize -q ;;
    esac
    # Both systems get the same simple graph: GAPBS's builder drops self-loops and
    # duplicates, so ours does too.
    "$CHATTY" convert raw.cgr -o "$name.cgr" --dedup --drop-self-loops --transpose -q
    local ext=el
    "$CHATTY" info "$name.cgr" --json | grep -q '"weighted":true' && ext=wel
    "$CHATTY" convert "$name.cgr" -o "$name.$ext" -q
    grep -v '^#' "$name.$ext" > "$name.gapbs.$ext"
    local sym=""
    "$CHATTY" info "$name.cgr" --json | grep -q '"directed":false' && sym="-s"
    "$GAPBS/converter" -f "$name.gapbs.$ext" $sym -b "$name.sg" > /dev/null
    if [ $ext = wel ]; then
        "$GAPBS/converter" -f "$name.gapbs.$ext" $sym -wb "$name.wsg" > /dev/null
    fi
    rm -f raw.cgr "$name.$ext" "$name.gapbs.$ext"
}
