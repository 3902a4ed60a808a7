"""Bad input: exit status 2, one line on stderr that names the value, and no change to existing files."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
TINY = ["stop.max_generations=1", "scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8"]


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("good") / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), *TINY]) == 0
    return run_dir


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# (case id, argv builder given (tmp dir, good run copy), expected substrings of the message)
Case = tuple[str, Callable[[Path, Path], list[str]], tuple[str, ...]]
CASES: list[Case] = [
    (
        "typo_key",
        lambda t, r: ["--config", RPS, "execution.num_wrokers=2"],
        ("execution.num_wrokers", "did you mean num_workers"),
    ),
    (
        "wrong_type",
        lambda t, r: ["--config", RPS, "execution.num_workers=two"],
        ("execution.num_workers", "'two'"),
    ),
    (
        "out_of_range",
        lambda t, r: ["--config", RPS, "execution.num_workers=0"],
        ("execution.num_workers", "0", "greater than or equal to 1"),
    ),
    ("unknown_section", lambda t, r: ["--config", RPS, "trainer.lr=1"], ("trainer", "unknown key")),
    (
        "mappo_wrong_type",
        lambda t, r: ["--config", RPS, "learner.mappo.lr=fast"],
        ("learner.mappo.lr", "'fast'"),
    ),
    (
        "mappo_typo",
        lambda t, r: ["--config", RPS, "learner.mappo.clip_parm=0.1"],
        ("learner.mappo.clip_parm", "did you mean clip_param"),
    ),
    (
        "unknown_backend",
        lambda t, r: ["--config", RPS, "execution.backend=spark"],
        ("execution.backend", "spark"),
    ),
    (
        "unknown_learner",
        lambda t, r: ["--config", RPS, "learner.kind=ppo"],
        ("learner", "'ppo'", "exact_br, mappo"),
    ),
    (
        "learner_plugin_not_a_learner",
        lambda t, r: ["--config", RPS, "learner.kind=collections:OrderedDict"],
        ("collections:OrderedDict", "not a subclass of light_league.algorithms.base.Learner"),
    ),
    (
        "unknown_env",
        lambda t, r: ["--config", RPS, "env.name=battalon"],
        ("battalon", "did you mean battalion"),
    ),
    ("bad_env_option", lambda t, r: ["--config", RPS, "env.options={bogus: 1}"], ("env", "bogus")),
    (
        "unknown_scheduler",
        lambda t, r: ["--config", RPS, "scheduler.name=leage"],
        ("leage", "did you mean league"),
    ),
    (
        "missing_plugin_module",
        lambda t, r: ["--config", RPS, "scheduler={name: 'nowhere.mod:Sched'}"],
        ("nowhere.mod",),
    ),
    (
        "missing_plugin_class",
        lambda t, r: ["--config", RPS, "scheduler={name: 'light_league.examples.my_scheduler:Nope'}"],
        ("Nope",),
    ),
    (
        "scheduler_option_typo",
        lambda t, r: ["--config", RPS, "scheduler.steps_per_generaton=5"],
        ("scheduler.steps_per_generaton", "did you mean steps_per_generation"),
    ),
    (
        "unknown_baseline",
        lambda t, r: ["--config", RPS, "env.name=battalion", "evaluation.baselines=[scripted_l9]"],
        ("scripted_l9", "did you mean"),
    ),
    (
        "exact_br_on_battalion",
        lambda t, r: ["--config", RPS, "env.name=battalion", "learner.kind=exact_br"],
        ("exact_br", "battalion"),
    ),
    ("missing_config", lambda t, r: ["--config", str(t / "nope.yaml")], ("nope.yaml", "does not exist")),
    (
        "config_not_yaml",
        lambda t, r: ["--config", str(write(t / "bad.yaml", "env: [unclosed\n"))],
        ("bad.yaml", "not valid YAML"),
    ),
    (
        "config_is_a_list",
        lambda t, r: ["--config", str(write(t / "list.yaml", "- 1\n- 2\n"))],
        ("list.yaml", "mapping"),
    ),
    (
        "bad_override_syntax",
        lambda t, r: ["--config", RPS, "execution.num_workers"],
        ("execution.num_workers", "key.path=value"),
    ),
    ("no_config", lambda t, r: [], ("--config",)),
    ("run_dir_holds_a_run", lambda t, r: ["--config", RPS, "--run-dir", str(r)], ("{run}", "--resume")),
    ("resume_not_a_run", lambda t, r: ["--resume", str(t)], ("{tmp}", "not a run directory")),
    (
        "resume_corrupt_pointer",
        lambda t, r: _corrupt(r / "checkpoint" / "latest.json", "{oops"),
        ("latest.json", "corrupt"),
    ),
    ("resume_corrupt_pool", lambda t, r: _corrupt(r / "pool.json", "[1, 2"), ("pool.json",)),
    ("resume_corrupt_policy", lambda t, r: _corrupt_policy(r), (".pt",)),
    (
        "resume_corrupt_match_log",
        lambda t, r: _corrupt(
            r / "matches.jsonl", '{"a": "x", "b": "y", "outcome": 1.0, "generation": 0}\nnot json\n{"a": 2}\n'
        ),
        ("matches.jsonl", "games were lost"),  # resume checks the committed length, not every line
    ),
    ("resume_corrupt_learner_checkpoint", lambda t, r: _corrupt_learner(r), ("learner checkpoint",)),
    (
        "resume_corrupt_config",
        lambda t, r: _corrupt(r / "config.yaml", "execution: {num_workers: -3}\n"),
        ("config.yaml", "execution.num_workers"),
    ),
    ("report_missing_dir", lambda t, r: ["report", str(t / "absent")], ("absent", "does not exist")),
    (
        "report_corrupt_payoff",
        lambda t, r: ["report", str(_corrupt_payoff(r, "{not json"))],
        ("gen_0000.json",),
    ),
    (
        "report_wrong_shape_payoff",
        lambda t, r: [
            "report",
            str(
                _corrupt_payoff(
                    r,
                    '{"generation": 0, "agent_ids": ["a", "b"], "roles": ["x", "y"], "win_rates": [[0.5]], '
                    '"games": [[0]], "meta_strategy": [1.0]}',
                )
            ),
        ],
        ("gen_0000.json", "shape"),
    ),
]


def _corrupt(path: Path, text: str) -> list[str]:
    path.write_text(text)
    return ["--resume", str(path.parent if path.parent.name != "checkpoint" else path.parent.parent)]


def _corrupt_policy(run: Path) -> list[str]:
    pt = sorted((run / "policies").glob("*.pt"))[0]
    pt.write_bytes(pt.read_bytes()[:40])
    return ["--resume", str(run)]


def _corrupt_learner(run: Path) -> list[str]:
    pt = sorted((run / "checkpoint").glob("gen_*/learners/*.pt"))[0]
    pt.write_bytes(b"garbage")
    return ["--resume", str(run)]


def _corrupt_payoff(run: Path, text: str) -> Path:
    for p in (run / "payoff").glob("gen_*.json"):
        p.unlink()
    (run / "payoff" / "gen_0000.json").write_text(text)
    return run


def test_there_are_at_least_twenty_cases() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_with_one_line_and_changes_nothing(
    case: Case,
    good_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / ".lock").unlink(missing_ok=True)
    name, build, expected = case
    argv = build(tmp_path, run)
    before = tree_digest(run)
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (name, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    for text in expected:
        text = text.replace("{run}", str(run)).replace("{tmp}", str(tmp_path))
        assert text in lines[0], (text, lines[0])
    assert tree_digest(run) == before, "bad input must not change existing files"
