set -u
export PYTHONPATH=$PWD
P="python3 benchmarks/profile_gh.py --no-fla --nh ''"
run() { eval timeout 300 python3 benchmarks/profile_gh.py --no-fla --nh "''" "$@"; }
for a in "--varlen" "--gate" "--varlen --gate"; do
  for sp in "state_fwd=32:4,64:4,32:8,64:8,128:8" "split=0,1" "state_rec=32:4,64:4"; do
    run $a --sweep "$sp" --set split=1 --compile-only > /dev/null 2>&1 &
    run $a --sweep "$sp" --compile-only > /dev/null 2>&1 &
  done
done
wait
date -u
for a in "--varlen" "--gate" "--varlen --gate"; do
  echo "== $a"
  run $a --sweep "state_fwd=32:4,64:4,32:8,64:8,128:8" 2>&1 | grep -E "^sweep|Error"
  run $a --sweep "split=0,1" 2>&1 | grep -E "^sweep|Error"
  run $a --sweep "state_rec=32:4,64:4" --set split=1 2>&1 | grep -E "^sweep|Error"
done
date -u
