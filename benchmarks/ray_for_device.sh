#!/usr/bin/env bash
# Ray for a machine without a package index (the GPU machine: Python 3.12, x86-64, 64 MiB per transfer): Ray's
# cp312 wheel unpacked, stripped of what a local sweep never loads (Java jars, the dashboard's web client,
# rllib / serve / data / llm / tune / train, tests: 201 -> 138 MB for 2.60.0) and packed as .rayc/ray312.tar.xz
# (27.5 MB), beside wheels of Ray's dependencies that such a machine may lack. docs/sweeps.rst ("Ray on a machine
# without a package index") says how it is used; .rayc/ is git-ignored.
#     bash benchmarks/ray_for_device.sh            # here, with pip access and unzip
#   there:
#     pip install -q --no-index --no-deps --target /tmp/site .rayc/*.whl && tar -xJf .rayc/ray312.tar.xz -C /tmp/site
#     export PYTHONPATH=/tmp/site:$PWD RAY_USAGE_STATS_ENABLED=0
set -euo pipefail
RAY=${RAY_VERSION:-2.60.0}
PLAT=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
dest=$(pwd)/.rayc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"
python3 -m pip download -q --no-deps "${PLAT[@]}" -d "$tmp" "ray==$RAY"
python3 -m pip download -q --no-deps "${PLAT[@]}" -d "$dest" msgpack click jsonschema jsonschema-specifications \
    referencing attrs rpds-py aiohappyeyeballs aiosignal frozenlist 'multidict<7' propcache yarl
mkdir "$tmp/x"
unzip -q "$tmp"/ray-"$RAY"-*.whl -d "$tmp/x"          # unzip keeps the raylet's and gcs_server's exec bits
rm -rf "$tmp"/x/ray/{jars,dashboard/client,rllib,serve,data,llm,tune,train}
find "$tmp/x" -type d -name tests -prune -exec rm -rf {} +
tar -C "$tmp/x" -cf - ray "ray-$RAY.dist-info" | xz -T0 -6 > "$dest/ray312.tar.xz.part"
mv "$dest/ray312.tar.xz.part" "$dest/ray312.tar.xz"
du -sh "$dest"
