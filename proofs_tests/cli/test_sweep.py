"""``lrnnkit sweep`` as its module runs it (lrnnkit.cli.sweep.run on the parsed command line of lrnnkit.cli):
the JSON summary, the exit status (0 all points ok, 1 some failed) and the refusal of Ray-only flags."""
import json

import pytest

from lrnnkit.errors import InputError
from lrnnkit.cli import build_parser
from lrnnkit.cli.sweep import run


def _spec(tmp_path, sources):
    p = tmp_path / "s.toml"
    p.write_text('kind = "collapse"\n[params]\nsteps = 100\n[grid]\nsource = [' +
                 ", ".join(f'"{s}"' for s in sources) + ']\nformat = ["bf16"]\n')
    return str(p)


def test_run_prints_the_summary_and_its_exit_status(tmp_path, capsys):
    args = build_parser().parse_args(["sweep", _spec(tmp_path, ["parity", "counter:3"]), "--out",
                                      str(tmp_path / "o"), "--no-plots", "--json"])
    assert run(args) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["done"] == 2 and res["failed"] == 0 and res["computed"] == 2
    args = build_parser().parse_args(["sweep", _spec(tmp_path, ["parity", "group:NOPE"]), "--out",
                                      str(tmp_path / "p"), "--no-plots"])
    assert run(args) == 1
    assert "records in" in capsys.readouterr().out


def test_num_cpus_needs_a_local_ray(tmp_path):
    args = build_parser().parse_args(["sweep", _spec(tmp_path, ["parity"]), "--num-cpus", "2"])
    with pytest.raises(InputError, match="--num-cpus 2 needs --executor ray"):
        run(args)
