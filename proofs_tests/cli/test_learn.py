"""``lrnnkit train`` and ``lrnnkit experiment`` as their module runs them (lrnnkit.cli.learn on the command line
parsed by lrnnkit.cli): a tiny training run's JSON, the experiment list, and one-line refusals of bad lengths and
checkpoint intervals before any work."""
import json

import pytest

pytest.importorskip("torch")

from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.cli.learn import VERBS, run_experiment_cmd, run_train  # noqa: E402
from lrnnkit.learn.experiments import list_experiments  # noqa: E402
from lrnnkit.cli import build_parser  # noqa: E402

TINY = ["train", "parity", "--layer", "diagonal", "--width", "8", "--heads", "2", "--steps", "3", "--batch", "4",
        "--train-len", "2:4", "--test-len", "6,8"]


def test_train_runs_and_prints_its_result(capsys):
    assert VERBS == {"train": run_train, "experiment": run_experiment_cmd}
    assert run_train(build_parser().parse_args(TINY + ["--json"])) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["steps"] == 3 and set(res["final_accuracy"]) == {"6", "8"}


@pytest.mark.parametrize("flag,value,needle", [("--train-len", "5:2", "1 <= A <= B"),
                                               ("--train-len", "x", "A:B (integers)"),
                                               ("--test-len", "0", "positive integers"),
                                               ("--checkpoint-every", "soon", "--checkpoint-every expects"),
                                               ("--test-mix", "8,3", "three integers N,LO,HI"),
                                               ("--test-mix", "a,b,c", "N,LO,HI (integers)"),
                                               ("--test-mix", "8,9,3", "1 <= A <= B"),
                                               ("--eval-every", "-1", "eval_every must be >= 0")])
def test_bad_training_flags_are_refused(flag, value, needle):
    args = build_parser().parse_args(TINY + [flag, value])
    with pytest.raises(InputError) as e:
        run_train(args)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_experiment_list_and_a_missing_name(capsys):
    assert run_experiment_cmd(build_parser().parse_args(["experiment", "--list", "--json"])) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(list_experiments()))
    with pytest.raises(InputError, match="give a NAME or --list"):
        run_experiment_cmd(build_parser().parse_args(["experiment"]))


def test_schedule_and_test_mix_reach_the_run(capsys):
    """``--schedule`` and ``--test-mix`` set TrainConfig's fields: the run's config says so and its result has the
    mixture's scores over exactly N words of the lengths asked for."""
    assert run_train(build_parser().parse_args(TINY + ["--schedule", "linear", "--test-mix", "12,3,5", "--json"])) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["config"]["schedule"] == "linear" and res["config"]["test_mix"] == [12, 3, 5]
    mix = res["test_mix"]
    assert mix["words"] == 12 and mix["lengths"] == [3, 5] and sum(mix["count"].values()) == 12
    assert set(mix["count"]) <= {"3", "4", "5"}
    with pytest.raises(InputError, match="invalid choice: 'wavy'"):     # refused before any work
        build_parser().parse_args(TINY + ["--schedule", "wavy"])


def test_experiment_protocol_flags_are_refused_where_they_do_not_apply():
    """``--protocol`` follows the paper's own settings, so it needs ``--scale paper``; ``--seeds`` goes with it;
    a seed list with a repeat is refused; all before any work."""
    for argv, needle in ([["experiment", "000-z60", "--protocol"], "give --scale paper"],
                         [["experiment", "000-z60", "--seeds", "0,1"], "--seeds goes with --protocol"],
                         [["experiment", "000-z60", "--scale", "paper", "--protocol", "--seeds", "1,1"],
                          "each once"],
                         [["experiment", "000-z60", "--lrs", "1e-3"], "--lrs goes with --protocol"],
                         [["experiment", "000-z60", "--scale", "paper", "--protocol", "--lrs", "1e-3,x"],
                          "--lrs expects comma-separated values"],
                         [["experiment", "000-z60", "--scale", "paper", "--protocol", "--lrs", "0"],
                          "distinct finite positive"]):
        with pytest.raises(InputError, match=needle):
            run_experiment_cmd(build_parser().parse_args(argv))


def test_experiment_protocol_runs_are_the_papers_reseeded():
    """``--scale paper --protocol --seeds 0,1`` trains :func:`follow`'s runs, each configuration at each of its
    learning rates at seeds 0 and 1, nothing else changed."""
    from dataclasses import replace

    from lrnnkit.cli.learn import _protocol_runs
    from lrnnkit.learn.protocols import follow
    a = build_parser().parse_args(["experiment", "000-z60", "--scale", "paper", "--protocol", "--seeds", "0,1"])
    got = _protocol_runs(a)
    want = [(lab, replace(c, seed=s)) for lab, c in follow("000-z60") for s in (0, 1)]
    assert sorted((lab, c.seed, c.lr) for lab, c in got) == sorted((lab, c.seed, c.lr) for lab, c in want)
    assert all(replace(c, seed=0) == dict(follow("000-z60"))[lab] for lab, c in got)
    a = build_parser().parse_args(["experiment", "000-z60", "--scale", "paper", "--protocol"])
    assert _protocol_runs(a) == follow("000-z60")
    a = build_parser().parse_args(["experiment", "000-z60", "--scale", "paper", "--protocol", "--seeds", "0",
                                   "--lrs", "1e-2,1e-3"])
    got = _protocol_runs(a)
    assert sorted((lab, c.lr) for lab, c in got) == sorted((lab, lr) for lab, _ in follow("000-z60")
                                                           for lr in (1e-2, 1e-3))
    assert all(replace(c, lr=1e-4) == dict(follow("000-z60"))[lab] for lab, c in got)


def test_eval_every_lists_the_evaluations_and_prints_the_best(capsys):
    """``--eval-every N``: the result lists an evaluation every N steps, the final one last (the run's own test
    numbers), and the text names the best at the longest length with its step."""
    six = [a if a != "3" else "6" for a in TINY]         # 6 steps
    assert run_train(build_parser().parse_args(six + ["--eval-every", "2", "--json"])) == 0
    res = json.loads(capsys.readouterr().out)
    assert [e["step"] for e in res["evaluations"]] == [2, 4, 6] and res["config"]["eval_every"] == 2
    assert res["evaluations"][-1]["test_accuracy"] == res["test_accuracy"]
    assert run_train(build_parser().parse_args(six + ["--eval-every", "2"])) == 0
    best = max(res["evaluations"], key=lambda e: e["test_accuracy"]["8"])
    assert f"accuracy {best['test_accuracy']['8']:.4f} at step {best['step']} (3 evaluations)" in \
        capsys.readouterr().out
