"""Faults that used to print a traceback or many lines, or that passed the checks and failed
mid-run (issue 13): each is now one line on stderr, exit 2, before anything runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
TINY = ["stop.max_generations=1", "scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8"]

LAUGHS = "\n".join(
    [
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
        *(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi")),
        "env: {name: rps, options: {x: *i}}",
    ]
)


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("good") / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), *TINY]) == 0
    return run_dir


def one_line(argv: list[str], capfd: pytest.CaptureFixture[str], *expected: str) -> str:
    capfd.readouterr()
    code = main(argv)
    err = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    err = [line for line in err if "Token authentication" not in line]  # Ray's own banner
    assert code == 2, err
    assert len(err) == 1, err
    for text in expected:
        assert text in err[0], (text, err[0])
    return err[0]


def test_duplicate_yaml_keys_are_refused(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "dup.yaml"
    cfg.write_text("env: {name: rps}\nstop: {max_generations: 5}\nstop: {max_env_steps: 100}\n")
    one_line(
        ["--config", str(cfg), "--run-dir", str(tmp_path / "r")], capfd, "line 3", "'stop' appears twice"
    )
    assert not (tmp_path / "r").exists()


def test_nested_yaml_aliases_are_refused(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "laughs.yaml"
    cfg.write_text(LAUGHS)
    assert len(LAUGHS) < 2000
    one_line(
        ["--config", str(cfg), "--run-dir", str(tmp_path / "r")], capfd, "laughs.yaml", "expands to more than"
    )


def test_yaml_merge_keys_work_and_the_mapping_s_own_keys_win(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "merge.yaml"
    cfg.write_text(
        "env: {name: rps}\n"
        "scheduler:\n"
        "  name: league\n"
        "  main_agent: &role {checkpoint_min_steps: 2048, checkpoint_max_steps: 4096}\n"
        "  main_exploiter:\n"
        "    <<: *role\n"
        "    checkpoint_max_steps: 8192\n"
    )
    capfd.readouterr()
    assert main(["--config", str(cfg), "--print-config"]) == 0
    resolved = yaml.safe_load(capfd.readouterr().out)
    assert resolved["scheduler"]["main_exploiter"]["checkpoint_min_steps"] == 2048
    assert resolved["scheduler"]["main_exploiter"]["checkpoint_max_steps"] == 8192
    cfg.write_text(cfg.read_text() + "    checkpoint_max_steps: 1\n")  # its own key twice: refused
    one_line(
        ["--config", str(cfg), "--print-config"], capfd, "line 8", "'checkpoint_max_steps' appears twice"
    )


def test_yaml_nested_thousands_deep_is_one_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "deep.yaml"
    cfg.write_text("env: {name: rps}\nx: " + "[" * 3000 + "]" * 3000 + "\n")
    one_line(
        ["--config", str(cfg), "--run-dir", str(tmp_path / "r")], capfd, "deep.yaml", "nests more deeply"
    )
    override = "env.options={a: " + "[" * 3000 + "]" * 3000 + "}"
    one_line(
        ["--config", RPS, "--print-config", override], capfd, "override env.options", "nests more deeply"
    )
    assert not (tmp_path / "r").exists()


def test_a_key_twice_in_one_override_is_refused(capfd: pytest.CaptureFixture[str]) -> None:
    one_line(
        ["--config", RPS, "--print-config", "env.options={a: 1, a: 2}"],
        capfd,
        "env.options",
        "'a' appears twice",
    )


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("experiment.seed=true", ("experiment.seed", "True")),
        ("learner.options.lr=0.1", ("learner.options", "learner.mappo")),
        ("league.pool_max_size=2", ("league.pool_max_size=2", "set league.pool_max_size=3")),
        ("env.name=openspiel:kuhn_pokr", ("kuhn_pokr", "did you mean kuhn_poker")),
        ("env.name=openspiel:kuhn_poker(players=x)", ("kuhn_poker(players=x)",)),
    ],
    ids=["seed_bool", "options_for_mappo", "pool_too_small", "unknown_openspiel_game", "bad_openspiel_param"],
)
def test_config_values_caught_before_the_run(
    override: str, expected: tuple[str, ...], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    if override.startswith("env.name=openspiel"):
        pytest.importorskip("pyspiel")
    one_line(["--config", RPS, "--run-dir", str(tmp_path / "r"), *TINY, override], capfd, *expected)
    assert not (tmp_path / "r").exists()


def test_run_dir_that_is_a_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "afile"
    target.write_text("mine")
    one_line(["--config", RPS, "--run-dir", str(target), *TINY], capfd, "afile", "is a file")
    assert target.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no light_league-error.log here


def test_report_on_a_malformed_generation_record(
    good_run: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    path = run / "generations.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    path.write_text(json.dumps({**record, "generation": "zero"}) + "\n")
    one_line(["report", str(run)], capfd, "generations.jsonl line 1", "'zero'")


def test_report_csv_under_a_file(good_run: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("mine")
    one_line(["report", str(good_run), "--csv", str(tmp_path / "afile" / "t.csv")], capfd, "--csv", "afile")
    assert (tmp_path / "afile").read_text() == "mine"


def test_resume_on_a_run_directory_that_cannot_be_locked(
    good_run: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # root ignores file modes, so an unwritable lock is made another way: a directory in its place
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / ".lock").unlink(missing_ok=True)
    (run / ".lock").mkdir()
    one_line(["--resume", str(run)], capfd, "cannot write to run directory")
    assert not (run / "error.log").exists()


def test_a_misspelt_scheduler_option_is_refused_before_the_runner_is_built(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from light_league.runner import Runner

    def never(*args: object, **kwargs: object) -> Runner:
        raise AssertionError("the runner was built for a config the loader should refuse")

    monkeypatch.setattr(Runner, "build", never)
    league = str(ROOT / "expr_configs" / "league.yaml")
    override = "scheduler.main_agent.steps_per_generaton=5"
    one_line(
        ["--config", league, override, "--run-dir", str(tmp_path / "r")],
        capfd,
        f"command-line override {override!r}: scheduler.main_agent.steps_per_generaton: unknown key; "
        "did you mean steps_per_generation?",
    )
    assert not (tmp_path / "r").exists()
