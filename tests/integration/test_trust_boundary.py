"""A run directory is data (issue 13): nothing in it runs code, no path in it escapes it, every
damaged file is one line and exit 2 with nothing written, and resume cuts only what an
interrupted generation left."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
TINY = ["stop.max_generations=2", "scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8"]


@pytest.fixture
def run(tiny_rps_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the session's finished two-generation ``rps_tiny`` run, to change."""
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "run"
    shutil.copytree(tiny_rps_run, copy, ignore=shutil.ignore_patterns(".lock"))
    return copy


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], *expected: str) -> str:
    capsys.readouterr()
    code = main(argv)
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(err) == 1, err
    for text in expected:
        assert text in err[0], (text, err[0])
    return err[0]


def refused_unchanged(run: Path, argv: list[str], capsys: pytest.CaptureFixture[str], *expected: str) -> str:
    before = tree(run)
    line = one_line_exit_2(argv, capsys, *expected)
    assert tree(run) == before, "a refused resume must not change the run directory"
    assert not (run / "error.log").exists()
    return line


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def tamper(run: Path, cfg: dict) -> None:
    """Write ``cfg`` as the run's config.yaml, with the manifest's config and hash to match: a run
    directory made elsewhere, whole (resume's check of an edited config.yaml then sees nothing)."""
    digest = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]  # config_digest
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    edit_json(run / "manifest.json", lambda m: m.update(config=cfg, config_hash=digest))


def state_path(run: Path) -> Path:
    latest = json.loads((run / "checkpoint" / "latest.json").read_text())
    return run / "checkpoint" / latest["dir"] / "state.json"


# ------------------------------------------------------------------------------- code execution


def test_env_factory_that_is_not_an_env_is_refused_before_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "X"
    argv = [
        "--config",
        RPS,
        "--run-dir",
        str(tmp_path / "new"),
        "env.name=pettingzoo:os:system",
        f"env.options={{command: 'touch {marker}'}}",
    ]
    one_line_exit_2(argv, capsys, "pettingzoo:os:system", "not name a PettingZoo env constructor")
    assert not marker.exists()
    argv[4:] = ["env.name=pettingzoo:shutil:rmtree", f"env.options={{path: '{tmp_path / 'keep'}'}}"]
    (tmp_path / "keep").mkdir()
    one_line_exit_2(argv, capsys, "pettingzoo:shutil:rmtree")
    assert (tmp_path / "keep").is_dir()


def test_edited_config_on_resume_cannot_run_a_shell_command(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "X"
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["env"] = {"name": "pettingzoo:os:system", "options": {"command": f"touch {marker}"}}
    tamper(run, cfg)
    refused_unchanged(run, ["--resume", str(run)], capsys, "env.name=pettingzoo:os:system", "docs/trust.md")
    assert not marker.exists()
    # even confirmed on the command line, os.system is no env constructor
    refused_unchanged(
        run, ["--resume", str(run), "env.name=pettingzoo:os:system"], capsys, "not name a PettingZoo env"
    )
    assert not marker.exists()


@pytest.mark.parametrize("key", ["scheduler.name", "learner.kind", "league.meta_solver.name"])
def test_resume_imports_no_module_named_only_by_the_run_directory(
    key: str, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    mod = f"evil_plugin_13_{key.split('.')[0]}"  # a fresh module per case (imports are cached)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / f"{mod}.py").write_text(f"open({str(marker)!r}, 'w').close()\nclass Thing: pass\n")
    monkeypatch.syspath_prepend(str(plugins))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    section = key.split(".")[0]
    if section == "scheduler":
        cfg["scheduler"] = {"name": f"{mod}:Thing"}
    elif section == "learner":
        cfg["learner"]["kind"] = f"{mod}:Thing"
    else:
        cfg["league"]["meta_solver"] = {"name": f"{mod}:Thing"}
    tamper(run, cfg)
    refused_unchanged(run, ["--resume", str(run)], capsys, f"{key}={mod}:Thing", "confirm")
    assert not marker.exists()
    # confirmed on the command line, it is the user's code and is imported (then refused: no plugin class)
    one_line_exit_2(["--resume", str(run), f"{key}={mod}:Thing"], capsys, f"{mod}:Thing")
    assert marker.exists()


def test_resume_uploads_nowhere_named_only_by_the_run_directory(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["logging"]["wandb"] = {"mode": "online", "entity": "someone-else", "project": "exfil"}
    tamper(run, cfg)
    refused_unchanged(run, ["--resume", str(run)], capsys, "logging.wandb.mode=online", "someone-else")
    assert main(["--resume", str(run), "logging.wandb.mode=disabled", "stop.max_generations=2"]) == 0


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [("env.name", "biased_rps", "run: rps, file: biased_rps"), ("experiment.seed", 7, "run: 0, file: 7")],
    ids=["env", "seed"],
)
def test_an_edited_config_yaml_is_refused_on_resume_by_key(
    key: str, value: object, shown: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same change as an override is refused by key; in the file it resumed silently before."""
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    section, field = key.split(".")
    cfg[section][field] = value
    (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    refused_unchanged(run, ["--resume", str(run)], capsys, f"{key} was edited", shown, "start a new run")
    edit_json(run / "manifest.json", lambda m: m.pop("config"))  # a manifest that kept only the hash
    refused_unchanged(run, ["--resume", str(run)], capsys, "config.yaml was edited", "manifest.json")


def test_a_budget_edited_in_config_yaml_still_resumes(run: Path) -> None:
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["stop"]["max_generations"] = 3
    (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert main(["--resume", str(run)]) == 0
    assert len((run / "generations.jsonl").read_text().splitlines()) == 3


def test_report_imports_nothing_from_the_run_directory(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "evil_report_13.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["scheduler"] = {"name": "evil_report_13:Thing"}
    cfg["env"] = {"name": "pettingzoo:evil_report_13:x"}
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert main(["report", str(run)]) == 0
    assert not marker.exists()


def listed_commands() -> list[str]:
    """The commands ``main.py --help`` lists (its "commands" section)."""
    from light_league.cli import parser

    text = parser()[0].format_help()
    section = text.split("commands:", 1)[1]
    return re.findall(r"^ {4}(\w+) {2,}", section, flags=re.MULTILINE)


def command_argv(command: str, run: Path, member: str) -> list[str]:
    """``command`` on ``run``: the run directory where it takes one (``--resume`` for run), a
    member for every other positional, and options that keep it tiny."""
    from light_league.cli import parser

    sub = parser()[1][command]
    argv, reads_run = [command], False
    for action in sub._actions:
        if "--resume" in action.option_strings:
            argv += ["--resume", str(run)]
            reads_run = True
        elif not action.option_strings and action.nargs not in ("*", "?"):
            reads_run |= action.dest == "run_dir"
            argv.append(str(run) if action.dest == "run_dir" else member)
    assert reads_run, f"{command} takes no run directory: name how it reads one in this test"
    extra = {"board": ["--host", "256.256.256.256"], "exploit": ["--env-steps", "256", "--games", "8"]}
    return argv + extra.get(command, [])


def test_help_lists_every_command() -> None:
    assert set(listed_commands()) >= {"run", "report", "board", "eval", "watch", "export", "exploit"}


@pytest.mark.parametrize("key", ["env.name", "scheduler.name", "learner.kind"])
@pytest.mark.parametrize("command", listed_commands())
def test_no_command_imports_a_module_named_only_by_the_run_directory(
    command: str,
    key: str,
    run: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every command of ``main.py --help``, on a run whose config.yaml names a planted module:
    none imports it, none prints a traceback; a command that needs the config refuses in one line
    naming the setting that confirms it."""
    marker = tmp_path / "imported"
    mod = f"planted_{command}_{key.split('.')[0]}"  # a fresh module per case (imports are cached)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{mod}.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass Thing: pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    value = f"pettingzoo:{mod}:parallel_env" if key == "env.name" else f"{mod}:Thing"
    if key == "env.name":
        cfg["env"] = {"name": value}
    elif key == "scheduler.name":
        cfg["scheduler"] = {"name": value}
    else:
        cfg["learner"]["kind"] = value
    tamper(run, cfg)
    capfd.readouterr()
    code = main(command_argv(command, run, "main_agent_0-v0"))
    out, err = capfd.readouterr()
    assert not marker.exists(), f"{command} imported {mod}"
    assert "Traceback" not in out + err, (out + err)[-3000:]
    if command not in ("report", "board"):  # they read records and tables, never the config
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1, lines
        assert f"{key}={value}" in lines[0] and "confirm" in lines[0], lines[0]


@pytest.mark.parametrize("name", ["generations.jsonl", "manifest.json", "policies/main_agent_0-v0.pt"])
@pytest.mark.parametrize("command", listed_commands())
def test_a_fifo_in_the_run_directory_is_one_line_for_every_command(
    command: str, name: str, run: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Reading a FIFO blocks until something writes to it: before, every command hung on one."""
    (run / name).unlink()
    os.mkfifo(run / name)
    capfd.readouterr()
    code = main(command_argv(command, run, "main_agent_0-v0"))
    err = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1, err
    assert name in err[0] and "FIFO" in err[0], err[0]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_terminal_escapes_in_member_ids_are_shown_not_sent_to_the_terminal(
    as_json: bool, run: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    planted = "main_agent_0-v0\x1b[2J\x1b]0;owned\x07\x9b1m"
    escaped = json.dumps(planted)[1:-1]
    for path in [run / "generations.jsonl", *(run / "payoff").glob("*.json")]:
        path.write_text(path.read_text().replace("main_agent_0-v0", escaped))
    capfd.readouterr()
    assert main(["report", str(run), *(["--json"] if as_json else [])]) == 0
    out = capfd.readouterr().out
    assert not any(c in out for c in "\x1b\x07\x9b"), repr(out[:400])
    assert "main_agent_0-v0" in out


def test_a_module_the_run_names_is_imported_once_the_command_repeats_it(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "confirmed_env.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["env"] = {"name": "pettingzoo:confirmed_env:parallel_env"}
    tamper(run, cfg)
    argv = ["eval", str(run), "main_agent_0-v0", "random", "--games", "4"]
    one_line_exit_2(argv, capsys, "eval imports no module", "env.name=pettingzoo:confirmed_env:parallel_env")
    assert not marker.exists()
    one_line_exit_2([*argv, "env.name=pettingzoo:confirmed_env:parallel_env"], capsys, "confirmed_env")
    assert marker.exists()  # the user's code now, imported (then refused: the module has no env)


# ------------------------------------------------------------------------------- paths confined


def test_pool_member_id_outside_the_run_directory_is_refused_and_the_file_survives(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    for suffix in (".pt", ".json"):
        (victim / f"precious{suffix}").write_text("keep me")
    pool = json.loads((run / "pool.json").read_text())
    entry = dict(pool["agents"][-1], agent_id="../../victim/precious")
    pool["agents"].append(entry)
    (run / "pool.json").write_text(json.dumps(pool))
    refused_unchanged(run, ["--resume", str(run)], capsys, "pool.json", "../../victim/precious")
    assert (victim / "precious.pt").read_text() == "keep me"
    assert (victim / "precious.json").read_text() == "keep me"


@pytest.mark.parametrize("where", ["dotdot", "symlink"])
def test_checkpoint_pointer_outside_the_run_directory_is_refused(
    where: str, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = run / "checkpoint" / "latest.json"
    data = json.loads(latest.read_text())
    outside = tmp_path / "elsewhere" / "gen_0009"
    shutil.copytree(run / "checkpoint" / data["dir"], outside)
    if where == "dotdot":
        data["dir"] = "../../elsewhere/gen_0009"
    else:
        (run / "checkpoint" / "gen_0009").symlink_to(outside)
        data["dir"] = "gen_0009"
    latest.write_text(json.dumps(data))
    expected = ("latest.json", "inside") if where == "dotdot" else ("gen_0009", "outside the run directory")
    refused_unchanged(run, ["--resume", str(run)], capsys, *expected)


def _outside_file(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "precious.txt"
    target.parent.mkdir(exist_ok=True)
    target.write_text("keep me\n")
    return target


def _link_file(run: Path, tmp_path: Path, name: str) -> Path:
    """Replace ``run/name`` by a symbolic link to a file outside the run (with the same content)."""
    target = _outside_file(tmp_path)
    if (run / name).exists():
        target.write_bytes((run / name).read_bytes())
        (run / name).unlink()
    (run / name).symlink_to(target)
    return target


def _link_dir(run: Path, tmp_path: Path, name: str) -> Path:
    """Move ``run/name`` outside the run and leave a symbolic link to it in its place."""
    target = tmp_path / "outside" / name.replace("/", "_")
    target.parent.mkdir(exist_ok=True)
    shutil.move(str(run / name), str(target))
    (run / name).symlink_to(target, target_is_directory=True)
    return target


@pytest.mark.parametrize(
    ("name", "link"),
    [
        ("matches.jsonl", _link_file),
        ("error.log", _link_file),
        ("generations.jsonl", _link_file),
        ("payoff", _link_dir),
        ("tensorboard", _link_dir),
        ("policies", _link_dir),
        ("checkpoint/gen_0001/learners", _link_dir),
    ],
)
def test_resume_writes_nothing_through_a_link_that_leaves_the_run(
    name: str,
    link: Callable[[Path, Path, str], Path],
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = link(run, tmp_path, name)
    outside, before = tree(tmp_path / "outside"), tree(run)
    one_line_exit_2(["--resume", str(run)], capsys, name.split("/")[-1], "outside the run directory")
    assert tree(run) == before, "a refused resume must not change the run directory"
    assert tree(tmp_path / "outside") == outside, f"{target} was changed through the link"


def test_exploit_writes_nothing_through_a_link_that_leaves_the_run(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``main.py exploit`` writes ``exploit/<target>_gen<G>.json`` into the run: not into a folder
    elsewhere that ``exploit`` links to."""
    outside = tmp_path / "outside" / "exploit"
    outside.mkdir(parents=True)
    (run / "exploit").symlink_to(outside, target_is_directory=True)
    argv = ["exploit", str(run), "--target", "main", "--env-steps", "256", "--games", "8"]
    one_line_exit_2(argv, capsys, "exploit", "outside the run directory")
    assert not any(outside.iterdir())


def test_resume_refuses_an_appended_log_with_another_hard_link(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup_matches.jsonl"
    backup.hardlink_to(run / "matches.jsonl")  # e.g. a backup made with cp -al
    before = backup.read_bytes()
    refused_unchanged(run, ["--resume", str(run)], capsys, "matches.jsonl", "hard links")
    assert backup.read_bytes() == before


def test_resume_replaces_a_hard_linked_charts_written_file_instead_of_writing_through_it(
    run: Path, tmp_path: Path
) -> None:
    written = run / "tensorboard" / "charts_written.txt"
    backup = tmp_path / "backup_charts_written.txt"
    backup.hardlink_to(written)  # e.g. a backup made with cp -al
    before = backup.read_text()
    assert main(["--resume", str(run), "stop.max_generations=3"]) == 0
    assert backup.read_text() == before, "the resume wrote through the other hard link"
    assert written.read_text().split()[-1] == "2"  # the resumed generation's images are noted


def test_a_crash_replaces_an_error_log_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    from light_league.failures import fail as _fail

    run = tmp_path / "run"
    run.mkdir()
    target = _outside_file(tmp_path)
    (run / "error.log").symlink_to(target)
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        assert _fail(run, exc, resumable=True) == 1
    assert target.read_text() == "keep me\n"
    assert not (run / "error.log").is_symlink()
    assert "boom" in (run / "error.log").read_text()


@pytest.mark.parametrize(
    "manifest", [None, {"name": "my notes"}, "not json"], ids=["none", "foreign", "garbage"]
)
def test_resume_of_a_folder_main_py_did_not_start_touches_nothing(
    manifest: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder with a config.yaml (and folders a run would use) is not a run without the manifest
    main.py writes first: --resume says so and deletes, rewrites and creates nothing."""
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(RPS, mine / "config.yaml")
    for folder in ("checkpoint", "policies", "payoff", "tensorboard", "wandb"):
        (mine / folder).mkdir()
        (mine / folder / "notes.txt").write_text(f"my {folder} notes")
    if isinstance(manifest, dict):
        (mine / "manifest.json").write_text(json.dumps(manifest))
    elif manifest is not None:
        (mine / "manifest.json").write_text(str(manifest))
    before = tree(mine)
    one_line_exit_2(["--resume", str(mine)], capsys, "not a run directory", "manifest.json")
    assert tree(mine) == before
    assert sorted(p.name for p in mine.iterdir()) == sorted(
        ["config.yaml", "checkpoint", "policies", "payoff", "tensorboard", "wandb"]
        + (["manifest.json"] if manifest is not None else [])
    )


# ------------------------------------------------------------------------------- damaged files


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("generations.jsonl", lambda p: p.write_bytes(b"")),
        ("generations.jsonl", lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 3])),
        ("generations.jsonl", lambda p: p.write_text(p.read_text().splitlines(keepends=True)[1])),
        ("matches.jsonl", lambda p: p.write_bytes(b"")),
        ("matches.jsonl", lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])),
    ],
    ids=["gens_emptied", "gens_cut", "gens_first_line_lost", "matches_emptied", "matches_cut"],
)
def test_a_log_that_lost_more_than_its_last_line_is_refused(
    name: str, damage: Callable[[Path], object], run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(run / name)
    refused_unchanged(run, ["--resume", str(run)], capsys, name)


def test_a_torn_last_line_is_still_cut(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gens_before = (run / "generations.jsonl").read_text()
    with open(run / "matches.jsonl", "a") as handle:
        handle.write('{"a": "main_agent", "b": "main_ag')
    with open(run / "generations.jsonl", "a") as handle:
        handle.write('{"generation": 2, "wall')
    assert main(["--resume", str(run), "stop.max_generations=2"]) == 0
    assert (run / "generations.jsonl").read_text() == gens_before
    for line in (run / "matches.jsonl").read_text().splitlines():
        json.loads(line)


RECORD_DAMAGE: list[tuple[str, str, object]] = [
    ("env_steps_string", "env_steps", "many"),
    ("population_int", "population", 3),
    ("population_without_id", "population", [{"role": "main_agent"}]),
    ("rating_list", "rating", [1000, 1200]),
    ("nash_string", "nash", "uniform"),
    ("newest_without_id", "newest", [{"learner": "main_agent_0", "rating": 1000}]),
    ("newest_rating_string", "newest", [{"id": "main_agent_0-v0", "rating": "high"}]),
    ("wall_s_list", "wall_s", [1.0]),
    ("nash_entropy_string", "nash_entropy", "0.5"),
    ("timings_not_numbers", "timings", {"train": "slow"}),
    ("meta_nash_conv_string", "meta_nash_conv", "low"),
    ("probe_interval_string", "probe", {"main": {"win_rate": 0.5, "win_rate_ci95": "wide"}}),
]


@pytest.mark.parametrize("command", ["report", "board"])
@pytest.mark.parametrize(
    ("field", "value"), [r[1:] for r in RECORD_DAMAGE], ids=[r[0] for r in RECORD_DAMAGE]
)
def test_a_wrong_type_in_a_generation_record_is_one_line_naming_file_line_and_field(
    command: str, field: str, value: object, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run / "generations.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[-1])
    record[field] = value
    path.write_text("".join(lines[:-1]) + json.dumps(record) + "\n")
    before = tree(run)
    # board: a host that cannot be served, so a TensorBoard started despite the damage ends at once
    argv = [command, str(run), *(["--host", "256.256.256.256"] if command == "board" else [])]
    one_line_exit_2(argv, capsys, "generations.jsonl", f"line {len(lines)}", f"field {field!r}")
    assert tree(run) == before


STATE_DAMAGE: list[tuple[str, Callable[[dict], object]]] = [
    ("members_not_list", lambda s: s.update(members=5)),
    ("member_id_escapes", lambda s: s.update(members=["../../x"])),
    ("env_steps_string", lambda s: s.update(env_steps="many")),
    ("generation_float", lambda s: s.update(generation=2.5)),
    ("payoff_not_pairs", lambda s: s["agents"].update(payoff=3)),
    ("elo_ratings_list", lambda s: s["agents"]["elo"].update(ratings=[1, 2])),
    ("learners_bad_role", lambda s: s["agents"].update(learners={"x": "wizard"})),
    ("scheduler_not_object", lambda s: s.update(scheduler=[1])),
    ("scheduler_rng_garbage", lambda s: s["scheduler"].update(rng={"bit_generator": "nope"})),
    ("steps_since_list", lambda s: s["agents"].update(steps_since=[1])),
    ("matches_bytes_negative", lambda s: s.update(matches_bytes=-1)),
    ("not_an_object", lambda s: s.clear() or s.update(x=1)),
]


@pytest.mark.parametrize("damage", [d for _, d in STATE_DAMAGE], ids=[n for n, _ in STATE_DAMAGE])
def test_wrong_types_in_state_json_are_one_line(
    damage: Callable[[dict], object], run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_json(state_path(run), damage)
    refused_unchanged(run, ["--resume", str(run)], capsys, "state.json")


@pytest.mark.parametrize(
    "pointer",
    [
        {"generation": "2", "dir": "gen_0002"},
        {"generation": 2, "dir": 7},
        [2],
        {"generation": 1, "dir": "gen_0002"},
    ],
    ids=["gen_string", "dir_int", "list", "mismatch"],
)
def test_wrong_types_in_latest_json_are_one_line(
    pointer: object, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run / "checkpoint" / "latest.json").write_text(json.dumps(pointer))
    refused_unchanged(run, ["--resume", str(run)], capsys, "checkpoint")


@pytest.mark.parametrize(
    "content",
    [{"learner": 5, "initial": None, "version": 1}, {"weights": "x"}, {"learner": {"actor": torch.zeros(3)}}],
    ids=["learner_int", "wrong_keys", "wrong_shapes"],
)
def test_wrong_learner_checkpoint_content_is_one_line(
    content: dict, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    learners = state_path(run).parent / "learners"
    torch.save(content, next(learners.glob("*.pt")))
    refused_unchanged(run, ["--resume", str(run)], capsys, "learner checkpoint")


def flip_16_bytes(path: Path) -> None:
    """Four float32 1.0 (a LayerNorm's weights) become -4.0: the file stays a valid archive."""
    data = bytearray(path.read_bytes())
    at = bytes(data).find(np.float32(1.0).tobytes() * 4)
    assert at >= 0
    data[at : at + 16] = np.float32(-4.0).tobytes() * 4
    path.write_bytes(bytes(data))
    torch.load(path, weights_only=True)  # loads: only a checksum tells


POLICY = "policies/main_agent_0-v0"
#: every command that loads a member's weights, on the run's member
READERS = {
    "resume": lambda run: ["--resume", str(run)],
    "eval": lambda run: ["eval", str(run), "main_agent_0-v0", "random", "--games", "4"],
    "export": lambda run: ["export", str(run), "main_agent_0-v0", "--out", str(run.parent / "x.pt2")],
}


@pytest.mark.parametrize("command", list(READERS))
def test_flipped_bytes_in_a_policy_file_are_one_line_naming_it(
    command: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flip_16_bytes(run / f"{POLICY}.pt")
    refused_unchanged(run, READERS[command](run), capsys, f"{POLICY}.pt are damaged")
    assert not (run.parent / "x.pt2").exists()


def test_flipped_bytes_in_a_learner_checkpoint_or_its_state_are_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    learner = next(state_path(run).parent.glob("learners/*.pt"))
    original = learner.read_bytes()
    flip_16_bytes(learner)
    refused_unchanged(run, ["--resume", str(run)], capsys, "learner checkpoint", learner.name, "damaged")
    learner.write_bytes(original)
    edit_json(state_path(run), lambda s: s.update(env_steps=s["env_steps"] + 1))  # valid JSON, one number
    refused_unchanged(run, ["--resume", str(run)], capsys, "state.json", "damaged")


@pytest.mark.parametrize("command", list(READERS))
def test_nan_weights_are_refused_naming_member_and_file_before_config_yaml_is_rewritten(
    command: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from light_league.data_buffer.policy_files import load_policy_files, save_policy

    weights, meta = load_policy_files(run / POLICY)
    weights["actor.7.weight"][0, 0] = np.nan
    save_policy(run / POLICY, weights, meta)  # its checksum fits: the NaN is what was saved
    refused_unchanged(run, READERS[command](run), capsys, "main_agent_0-v0", f"{POLICY}.pt", "NaN")
    assert not (run.parent / "x.pt2").exists()


def test_nan_in_a_learner_checkpoint_is_refused_before_anything_changes(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    learner = next(state_path(run).parent.glob("learners/*.pt"))
    state = torch.load(learner, weights_only=True)
    next(iter(state["learner"]["weights"].values())).view(-1)[0] = float("nan")
    torch.save(state, learner)
    # no checksum to catch it: the finiteness check must
    edit_json(state_path(run), lambda s: s.get("learners_sha256", {}).pop(learner.stem, None))
    edit_json(run / "checkpoint" / "latest.json", lambda d: d.pop("state_sha256", None))
    refused_unchanged(run, ["--resume", str(run)], capsys, "learner checkpoint", learner.name, "NaN")


@pytest.mark.parametrize("command", list(READERS))
def test_a_policy_meta_declaring_a_huge_network_is_one_line_before_anything_is_built(
    command: str, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_json(run / f"{POLICY}.json", lambda m: m["architecture"].update(hidden_size=200_000))
    refused_unchanged(run, READERS[command](run), capsys, f"{POLICY}", "hidden_size=200000")


def test_a_run_written_before_checksums_still_resumes(run: Path) -> None:
    """Policy metas without ``weights_sha256``, a state without ``learners_sha256``, a pointer
    without ``state_sha256``, a manifest without the config: what older versions wrote."""
    for meta in (run / "policies").glob("*.json"):
        edit_json(meta, lambda m: m.pop("weights_sha256"))
    edit_json(state_path(run), lambda s: s.pop("learners_sha256"))
    edit_json(run / "checkpoint" / "latest.json", lambda d: d.pop("state_sha256"))
    edit_json(run / "manifest.json", lambda m: m.pop("config"))
    assert main(["--resume", str(run), "stop.max_generations=3"]) == 0
    assert main(["eval", str(run), "main_agent_0-v0", "random", "--games", "4"]) == 0


def test_wrong_types_in_the_last_committed_match_line_are_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run / "matches.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])
    bad = json.dumps({"a": last["a"], "b": last["b"], "outcome": last["outcome"], "generation": "one"})
    # padded to the length of the line it replaces, so the checkpoint's offset still ends a line
    assert len(bad) < len(lines[-1])
    bad = bad.ljust(len(lines[-1]) - 1) + "\n"
    path.write_text("".join(lines[:-1]) + bad)
    refused_unchanged(run, ["--resume", str(run)], capsys, "matches.jsonl")


# ------------------------------------------------------------------------------- leftovers


def test_resume_removes_temp_files_of_interrupted_writes(run: Path) -> None:
    temps = [run / ".matches.jsonl.ab12cd34.tmp", run / "policies" / ".x.pt.zz99yy88.tmp"]
    for path in temps:
        path.write_bytes(b"x" * 1000)
    keep = run / ".mine.tmp"  # not the atomic-write pattern: left alone
    keep.write_text("mine")
    assert main(["--resume", str(run), "stop.max_generations=2"]) == 0
    assert not any(p.exists() for p in temps)
    assert keep.exists()


def test_kill_before_the_first_checkpoint_is_not_a_dead_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run), *TINY[1:], "stop.max_generations=1"]) == 0
    # what a kill during bootstrap leaves: the config and some files, no checkpoint pointer
    shutil.rmtree(run / "checkpoint")
    (run / "generations.jsonl").write_text("")
    (run / "matches.jsonl").write_text("")
    assert main(["--resume", str(run)]) == 0
    gens = [json.loads(line)["generation"] for line in (run / "generations.jsonl").read_text().splitlines()]
    assert gens == [0]
    # a kill before the manifest was written leaves the lock file only: a new run may use the directory
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".lock").write_text("")
    assert main(["--config", RPS, "--run-dir", str(empty), *TINY[1:], "stop.max_generations=1"]) == 0
    # a kill between the manifest (written first) and config.yaml: nothing to resume, a new run may use it
    started = tmp_path / "started"
    started.mkdir()
    shutil.copy(empty / "manifest.json", started / "manifest.json")
    one_line_exit_2(["--resume", str(started)], capsys, "before its config.yaml was written", "--config")
    assert main(["--config", RPS, "--run-dir", str(started), *TINY[1:], "stop.max_generations=1"]) == 0
