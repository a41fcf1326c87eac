set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
P="timeout 150 python3 benchmarks/profile_gh.py"
date -u
(bash benchmarks/gpu_checks.sh "not setting or state_bwd or wy_bwd" > $OUT/checks.log 2>&1;
 TRITON_INTERPRET=0 timeout 200 python3 -m pytest -q proofs_tests/test_kernels_deltaproduct_layer.py proofs_tests/test_kernels_layers.py > $OUT/layers.log 2>&1) &
( $P --no-fla --nh 1,2,3 --compile-only; $P --no-fla --nh 1 --gate --compile-only ) > /dev/null 2>&1 &
$P --no-fla --nh 1 --dtype float32 --prec tf32 --compile-only > /dev/null 2>&1 &
$P --no-fla --nh 1 --dtype float32 --prec tf32 --set keep=1 --compile-only > /dev/null 2>&1 &
$P --no-fla --nh 1 --dtype float32 --compile-only > /dev/null 2>&1 &
$P --no-fla --nh 1 --dtype float32 --set keep=1 --compile-only > /dev/null 2>&1 &
wait
date -u
echo "checks: $(grep -c PASS $OUT/checks.log) pass"; grep -v PASS $OUT/checks.log; tail -1 $OUT/layers.log
B=$OUT/bench.log
$P --nh 1,2,3 --errors --no-profile 2>&1 | grep "^n_h" >> $B
$P --no-fla --nh 1 --dtype float32 --prec tf32 --errors --roofline 2>&1 | grep -v -i warn >> $B
$P --no-fla --nh 1 --dtype float32 --prec tf32 --set keep=1 --no-profile 2>&1 | grep "^n_h" >> $B
$P --no-fla --nh 1 --dtype float32 --errors --no-profile 2>&1 | grep "^n_h" >> $B
$P --no-fla --nh 1 --dtype float32 --set keep=1 --no-profile 2>&1 | grep "^n_h" >> $B
$P --nh 1 --gate --errors 2>&1 | grep "^n_h" >> $B
date -u >> $B
sed 's/void at::native::vectorized_elementwise_/ew/g' $B
