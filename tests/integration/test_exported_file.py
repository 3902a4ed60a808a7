"""An exported member is safe to load as the docs say (issue 56): ``main.py export`` stores every
tensor as raw bytes (nothing pickled), and the loader of ``light_league/examples/exported_policy.py`` refuses,
before torch reads the file, everything ``torch.export.load`` would unpickle or run: a pickled
weight, pickled sample inputs, compiled code, an operator outside ATen, an expression or a guard
that is Python. ``export --out DIR`` writes into the directory."""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from light_league.cli import main
from light_league.examples import exported_policy

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
TINY = ["stop.max_generations=1", "scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8"]
MEMBER = "main_agent_0-v0"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    assert main(["--config", RPS, "--run-dir", str(root / "run"), *TINY]) == 0
    out = root / f"{MEMBER}.pt2"
    assert main(["export", str(root / "run"), MEMBER, "--out", str(out)]) == 0
    return out


def entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(source: Path, target: Path, change: Callable[[dict[str, bytes], str], None]) -> Path:
    """A copy of the exported file with ``change(entries, top folder)`` applied."""
    files = entries(source)
    change(files, next(iter(files)).split("/", 1)[0] + "/")
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return target


class Planted:
    """Unpickling it runs ``open(marker, 'w')`` (what an attacker's ``os.system`` would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def pickled_weight(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    def change(files: dict[str, bytes], root: str) -> None:
        config_name = root + "data/weights/model_weights_config.json"
        config = json.loads(files[config_name])
        first = next(iter(config["config"].values()))
        first["use_pickle"] = True
        files[config_name] = json.dumps(config).encode()
        files[root + "data/weights/" + first["path_name"]] = pickle.dumps(Planted(marker))

    return change


def pickled_sample_inputs(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    def change(files: dict[str, bytes], root: str) -> None:
        files[root + "data/sample_inputs/model.pt"] = pickle.dumps(Planted(marker))

    return change


def program_change(edit: Callable[[dict], None]) -> Callable[[dict[str, bytes], str], None]:
    def change(files: dict[str, bytes], root: str) -> None:
        program = json.loads(files[root + "models/model.json"])
        edit(program)
        files[root + "models/model.json"] = json.dumps(program).encode()

    return change


def python_target(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    def edit(program: dict) -> None:
        program["graph_module"]["graph"]["nodes"][0]["target"] = "torch.os.system"

    return program_change(edit)


def python_expression(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    code = f"__import__('builtins').open('{marker}', 'w') and Symbol('s9')"

    def edit(program: dict) -> None:
        for value in program["graph_module"]["graph"]["tensor_values"].values():
            for size in value["sizes"]:
                if "as_expr" in size:
                    size["as_expr"]["expr_str"] = code

    return program_change(edit)


def python_guard(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    def edit(program: dict) -> None:
        program["guards_code"] = [f"open('{marker}', 'w') is not None"]

    return program_change(edit)


def compiled_code(marker: Path) -> Callable[[dict[str, bytes], str], None]:
    def change(files: dict[str, bytes], root: str) -> None:
        files[root + "data/aotinductor/model/model.so"] = b"\x7fELF"

    return change


TAMPERS = {
    "pickled_weight": pickled_weight,
    "pickled_sample_inputs": pickled_sample_inputs,
    "python_target": python_target,
    "python_expression": python_expression,
    "python_guard": python_guard,
    "compiled_code": compiled_code,
}


def test_export_stores_every_tensor_raw_and_the_loader_plays_it(
    exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = entries(exported)
    root = next(iter(files)).split("/", 1)[0] + "/"
    for name in ("data/weights/model_weights_config.json", "data/constants/model_constants_config.json"):
        config = json.loads(files[root + name])["config"]
        assert not [k for k, v in config.items() if v["use_pickle"]], name
    exported_policy.check_exported(exported)
    assert exported_policy.main([str(exported), "--games", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"{MEMBER} (rps) against random: ")


@pytest.mark.parametrize("tamper", list(TAMPERS.values()), ids=list(TAMPERS))
def test_the_loader_refuses_a_file_that_would_run_code_before_torch_reads_it(
    tamper: Callable[[Path], Callable[[dict[str, bytes], str], None]],
    exported: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    marker = tmp_path / "ran"
    bad = rewrite(exported, tmp_path / "bad.pt2", tamper(marker))
    capsys.readouterr()
    assert exported_policy.main([str(bad), "--games", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refusing to load it" in err[0], err
    assert not marker.exists()


def test_torch_export_load_alone_runs_a_pickled_weight(exported: Path, tmp_path: Path) -> None:
    """What the loader guards against: torch.export.load unpickles an entry marked so."""
    marker = tmp_path / "ran"
    bad = rewrite(exported, tmp_path / "bad.pt2", pickled_weight(marker))
    with pytest.raises(Exception):  # noqa: B017 - whatever fails after the pickle ran
        torch.export.load(str(bad))
    assert marker.exists()


def test_export_out_into_a_directory_or_an_unwritable_place_is_one_line(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = exported.parent / "run"
    into = tmp_path / "into"
    into.mkdir()
    assert main(["export", str(run), MEMBER, "--out", str(into)]) == 0  # before: a traceback
    assert os.listdir(into) == [f"{MEMBER}.pt2"]
    exported_policy.check_exported(into / f"{MEMBER}.pt2")
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    capsys.readouterr()
    assert main(["export", str(run), MEMBER, "--out", str(blocker / "x.pt2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0], err
    assert blocker.read_text() == "mine"
