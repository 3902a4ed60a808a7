"""The gate between a run directory and every command that reads one (docs/trust.md).

A run directory is data. Every command that reads one (``--resume``, ``report``, ``board``,
``eval``, ``watch``, ``export``, ``exploit``) opens it here, and decides here what its stored
config may import:

* :func:`open_run_dir`: the directory exists, holds nothing a read would block on (a FIFO), and is
  one ``main.py`` made (its manifest);
* :func:`stored_config`: the stored ``config.yaml`` with the command's ``key=value`` overrides,
  refused in one line when it names a module to import (a plugin, a ``pettingzoo:`` env outside
  the trusted packages) that the command line does not repeat, and, for ``--resume``, when it
  would upload the run (W&B online) or was edited since the run wrote it (:func:`check_unedited`).

``report`` and ``board`` read records and tables only and never load the config.
"""

from __future__ import annotations

from pathlib import Path

from light_league.config import ExperimentConfig, config_digest, load_config, read_yaml
from light_league.errors import ConfigError, CorruptFileError, LeagueError
from light_league.plugins import check_stored_imports
from light_league.run_dir import RunDir
from light_league.utils.atomic import read_json

#: the command that resumes a run, as messages name it
RESUME = "--resume"


def open_run_dir(path: str | Path, *, command: str) -> RunDir:
    """The run directory at ``path``, checked for ``command`` (named in the messages): it exists,
    holds files and folders only, and has the manifest ``main.py`` writes first."""
    run_dir = RunDir(path)
    if not run_dir.root.is_dir():
        raise LeagueError(f"run directory {path} does not exist; pass a directory written by main.py")
    run_dir.check_plain()
    if not run_dir.is_run():
        raise LeagueError(
            f"{path} is not a run directory (no manifest.json written by main.py); {command} reads only a "
            "run that main.py started: pass its RUN_DIR"
            + (", or start a run with --config" if command == RESUME else "")
        )
    return run_dir


def stored_config(
    run_dir: RunDir, overrides: list[str], *, command: str, uploads: bool = False
) -> ExperimentConfig:
    """The run's ``config.yaml`` with ``overrides``, once nothing in it imports a module (or, with
    ``uploads``, sends the run anywhere) that ``overrides`` do not confirm."""
    if not run_dir.config.is_file():
        raise LeagueError(
            f"{run_dir.root} was stopped before its config.yaml was written: there is nothing to "
            + (
                f"resume; start the run again with --config FILE --run-dir {run_dir.root}"
                if command == RESUME
                else f"read; {command} needs a run that completed a generation"
            )
        )
    config = load_config(run_dir.config, overrides)
    check_stored_imports(config, overrides, source=str(run_dir.config), command=command, uploads=uploads)
    return config


def check_unedited(run_dir: RunDir) -> None:
    """``config.yaml`` is the config the run last wrote: its hash is the manifest's. A file that
    differs from the config the manifest keeps in a key that defines what the run computes is
    refused by key; a manifest written before it kept the config names no key."""
    from light_league.resume_rules import flatten, forbidden_change, shown  # what may change on resume

    manifest = read_json(run_dir.manifest, what="run manifest", fix="restore it or start a new run")
    if not isinstance(manifest, dict):
        raise CorruptFileError(
            f"run manifest {run_dir.manifest} is not a JSON object; restore it or start a new run"
        )
    raw = read_yaml(run_dir.config)
    digest = config_digest(raw)
    sessions = manifest.get("sessions")
    hashes = {manifest.get("config_hash")} | {
        s.get("config_hash") for s in (sessions if isinstance(sessions, list) else []) if isinstance(s, dict)
    }
    if digest == manifest.get("config_hash"):
        return
    written = manifest.get("config")
    if isinstance(written, dict):
        change = forbidden_change(flatten(written), flatten(raw))
        if change is None:
            return  # budgets, execution, logging: what an override may change too
        key, old, new = change
        raise ConfigError(
            f"{run_dir.config}: {key} was edited after the run wrote it (run: {shown(old)}, file: {shown(new)}); "
            f"it changes what the run computes: set it back to {shown(old)} in the file, or start a new run "
            "with --config to change it (a budget, execution or logging key may be changed with key=value)"
        )
    if digest in hashes:
        return  # a manifest from before the config was kept, and a session wrote this file
    raise CorruptFileError(
        f"{run_dir.config} was edited after the run wrote it (its hash {digest} is not the "
        f"{manifest.get('config_hash')} of manifest.json): restore the file the run wrote, and pass a "
        "change of budget, execution or logging as key=value instead; or start a new run with --config"
    )
