#!/usr/bin/env bash
# One device call of the papers' protocol grid (benchmarks/protocol_grid.py), made to survive the call's limit:
#
#   bash benchmarks/protocol_call.sh SECONDS [CARRY] -- ARGS...
#
# SECONDS: the call's wall budget (under the device's 600 s per command). CARRY: a folder carried into the call
# (the device tool's `carry`) holding the previous call's `rundirs` (unpacked from its rundirs*.tgz parts); its run
# directories are copied under $OUT/grid so that their jobs resume from their checkpoints. ARGS go to
# `bench_learning.py --scale paper --protocol` (e.g. `--only 003-copy --gpus 1`).
#
# SECONDS count from this script's start (the wheels' install included). The grid gets `--deadline` L - 55,
# L the seconds left after the install (its own job planning, evaluation margin included), and runs under
# `timeout -s INT -k 15` L - 35: if it is still running then, it and its worker processes get SIGINT (each run
# writes its checkpoint, the grid packs), and 15 s later SIGKILL; the last 20 s are for packing here (67 MiB of run
# directories packed in a few seconds on the two-GPU machine). Each job also keeps back protocol_grid.EVAL_MARGIN_S
# (60 s) for its evaluation, so a normal call ends about 75 s before SECONDS. The margins were 150 / 100 / 30 / 70 s
# and 90 s until four calls on 2026-11-29 ended 200 s early each (evaluation and packing took 10-30 s of the 240
# kept), then 80 / 50 / 20 / 30 s until three calls the same day ended 100 s early each (evaluation and horizon
# 22 s, packing a few seconds). Whatever
# happens, $OUT/grid ends with runs.tgz and rundirs*.tgz (the device returns files at most two folders below $OUT)
# and the log is $OUT/call.log. Wheels in .whl/ are installed first (aalpy and pydot for the horizons'
# extraction; the device has no internet). Each worker prints where it is every LRNNKIT_STACKS_EVERY seconds
# (default here 120; 0: never). With KEEP=FOLDER (an ignored folder, e.g. sweep_out/keep), the run directories are
# also copied to FOLDER/rundirs at the end: the next call on the same warm machine passes FOLDER as its CARRY and
# needs no round trip through this machine (the two-GPU calls of 2026-11-29 did so); a CARRY without rundirs/ (the
# machine went cold) stops the call at once, exit status 2, rather than start every job again. A call that writes N
# files of its own under $OUT beside the grid's sets LRNNKIT_RETURNED_FILES=8-N, so that the packed run directories
# leave room for them and for runs.tgz (protocol_grid.returned_files).
set -u
if [ $# -lt 2 ]; then
    echo "usage: bash benchmarks/protocol_call.sh SECONDS [CARRY] -- ARGS..." >&2
    exit 2
fi
budget=$1; shift
carry=""
if [ "$1" != "--" ]; then carry=$1; shift; fi
if [ "${1:-}" != "--" ]; then
    echo "protocol_call.sh: expected -- before the grid's arguments, got '${1:-}'" >&2
    exit 2
fi
shift
case "$budget" in ''|*[!0-9]*) echo "protocol_call.sh: SECONDS must be a whole number, not '$budget'" >&2; exit 2;; esac
if [ "$budget" -lt 300 ]; then
    echo "protocol_call.sh: SECONDS must be at least 300, not $budget" >&2
    exit 2
fi
if [ -z "${OUT:-}" ]; then
    echo "protocol_call.sh: set OUT to the output folder of the device call" >&2
    exit 2
fi
if [ -n "$carry" ] && [ ! -d "$carry/rundirs" ]; then
    # a carry that is not there (a cold machine where KEEP's folder was expected) would start every job again
    echo "protocol_call.sh: CARRY '$carry' holds no rundirs/ folder: nothing to resume (carry it from here)" >&2
    exit 2
fi
mkdir -p "$OUT/grid"
log="$OUT/call.log"
{
    echo "protocol_call.sh $budget ${carry:-(no carry)} -- $*"
    date -u
    git log --oneline -1 2>/dev/null || true
} > "$log"
if ls .whl/*.whl >/dev/null 2>&1; then
    (   # two calls of this script side by side install once (a lock, then a mark)
        flock 9
        if [ ! -f /tmp/site/.installed ]; then
            python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
                .whl/*.whl && touch /tmp/site/.installed || echo "wheels: pip failed (see above)"
        fi
    ) 9>/tmp/site.lock >> "$log" 2>&1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
export TRITON_INTERPRET=0 PYTHONUNBUFFERED=1 LRNNKIT_STACKS_EVERY=${LRNNKIT_STACKS_EVERY:-120}
if [ -n "$carry" ] && [ -d "$carry/rundirs" ]; then
    mkdir -p "$OUT/grid/rundirs"
    cp -r "$carry/rundirs/." "$OUT/grid/rundirs/"
    echo "carried: $(du -sh "$carry/rundirs" | cut -f1) of run directories from $carry" >> "$log"
fi
left=$((budget - SECONDS))
echo "seconds left after the install: $left (grid deadline $((left - 55)), SIGINT at $((left - 35)))" >> "$log"
timeout -s INT -k 15 $((left - 35)) python3 benchmarks/bench_learning.py --scale paper --protocol \
    --deadline $((left - 55)) --out "$OUT/grid" "$@" >> "$log" 2>&1
rc=$?
echo "grid exit status $rc" >> "$log"
date -u >> "$log"
if [ ! -f "$OUT/grid/runs.tgz" ]; then
    python3 -c "import sys; sys.path.insert(0, '.'); from benchmarks.protocol_grid import pack_for_return; \
print('packed after the grid stopped:', ', '.join(pack_for_return(sys.argv[1])))" "$OUT/grid" >> "$log" 2>&1
fi
if [ -n "${KEEP:-}" ] && [ -d "$OUT/grid/rundirs" ]; then
    rm -rf "$KEEP/rundirs" && mkdir -p "$KEEP" && cp -r "$OUT/grid/rundirs" "$KEEP/" \
        && echo "kept: the run directories in $KEEP/rundirs for the next call" >> "$log"
fi
# a device call returns at most 8 files: the grid's own summary (EXPERIMENT.json / .png, summary.json: made again
# from runs.tgz by --summarise here) moves three folders down, out of the way of the run-directory parts
mkdir -p "$OUT/grid/not_returned/summary"
find "$OUT/grid" -maxdepth 1 -type f \( -name "*.json" -o -name "*.png" \) -exec mv {} "$OUT/grid/not_returned/summary/" \;
echo "returned: $(cd "$OUT" && find . -maxdepth 3 -type f | grep -v not_returned | wc -l) files (at most 8 come back)" >> "$log"
grep -v -e "SyntaxWarning" -e "prism_prob_output_regex" -e '^  """' "$log" | tail -40
exit $rc
