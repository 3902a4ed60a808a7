"""The run directory: every file a run produces, a lock against concurrent writers, the manifest.

Layout::

    RUN_DIR/
      manifest.json          written first: what makes the directory a run ("format"), package
                             versions, config hash, git revision, command line; one entry in
                             "sessions" per start or --resume (config.yaml is the latest one's)
      config.yaml            resolved config (what ran, after overrides)
      generations.jsonl      one line per completed generation
      matches.jsonl          the match log (training and evaluation games)
      pool.json              the population (AgentPool manifest)
      elo.json               Elo ratings
      payoff/gen_XXXX.json   per-generation payoff table (+ .npy)
      policies/<id>.pt/.json frozen snapshots (tensors only + JSON metadata)
      checkpoint/            league state of the last completed generation (resume point):
                             gen_XXXX/ after generation XXXX, initial/ before generation 0
      tensorboard/           event files
      placement.jsonl        (Ray) which node each component runs on, and replacements
      .lock                  exists only while a process writes here
      error.log              the traceback of a run that failed (replaced, never written through)

Nothing a run writes leaves the directory: :meth:`RunDir.check_confined` refuses a directory in
which a symbolic link leads outside it, or in which a file that is appended to in place has
another hard link. Nothing a command reads can hang it: :meth:`RunDir.check_plain` refuses a
directory holding anything but files and folders (a FIFO would block the first read of it).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml
from filelock import FileLock, Timeout

from light_league.errors import ConfigError, CorruptFileError, RunDirLockedError
from light_league.utils.atomic import (
    TEMP_FILE,
    atomic_write_json,
    atomic_write_text,
    read_json,
    remove_temp_files,
)

_VERSIONED = (
    "light_league",
    "torch",
    "ray",
    "numpy",
    "scipy",
    "pettingzoo",
    "gymnasium",
    "open_spiel",
    "pydantic",
    "tensorboard",
    "wandb",
)


#: ``manifest.json``'s ``format``: the mark of a directory that ``main.py`` made a run directory
RUN_FORMAT = "light_league run"
#: the keys of a manifest written before ``format`` existed (every one of them has these)
_LEGACY_MANIFEST_KEYS = frozenset({"created", "config_hash", "packages", "sessions"})
#: files a run appends to or cuts in place (every other file is replaced whole, atomically)
IN_PLACE_FILES = ("matches.jsonl", "generations.jsonl", "placement.jsonl")

#: what a name read from a run directory's files (a member id, a checkpoint dir) may look like
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}$")


def safe_name(value: object) -> bool:
    """A plain file name: no separator, not ``.`` or ``..``, nothing a path could escape with."""
    return isinstance(value, str) and bool(SAFE_NAME.match(value)) and ".." not in value


class RunDir:
    """Paths of one run plus its writer lock."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._lock: FileLock | None = None

    # paths
    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def generations(self) -> Path:
        return self.root / "generations.jsonl"

    @property
    def matches(self) -> Path:
        return self.root / "matches.jsonl"

    @property
    def pool(self) -> Path:
        return self.root / "pool.json"

    @property
    def elo(self) -> Path:
        return self.root / "elo.json"

    @property
    def policies(self) -> Path:
        return self.root / "policies"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint"

    @property
    def tensorboard(self) -> Path:
        return self.root / "tensorboard"

    def is_run(self) -> bool:
        """The directory holds a manifest that ``main.py`` wrote (the first file of every run)."""
        try:
            manifest = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(manifest, dict):
            return False
        return manifest.get("format") == RUN_FORMAT or _LEGACY_MANIFEST_KEYS <= manifest.keys()

    # lifecycle
    @staticmethod
    def fresh(runs_root: str | Path, name: str) -> RunDir:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = Path(runs_root) / f"{name}-{stamp}"
        candidate, n = base, 1
        while candidate.exists():
            n += 1
            candidate = Path(f"{base}-{n}")
        return RunDir(candidate)

    #: what a run writes at its top level (removed when a run that never completed a generation
    #: restarts; its manifest and config stay)
    ARTEFACTS = (
        "generations.jsonl",
        "matches.jsonl",
        "pool.json",
        "pool.json.bak",
        "elo.json",
        "placement.jsonl",
        "payoff",
        "policies",
        "checkpoint",
        "tensorboard",
        "wandb",
    )

    def _contents(self) -> list[Path]:
        """Entries of the directory other than the lock file and interrupted-write temp files."""
        return [p for p in self.root.iterdir() if p.name != ".lock" and not TEMP_FILE.match(p.name)]

    def create(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"--run-dir {self.root} is a file, not a directory; pick a directory path")
        contents = self._contents() if self.root.exists() else []
        if contents:
            if self.is_run() and self.config.exists():
                raise ConfigError(
                    f"run directory {self.root} already holds a run; continue it with --resume {self.root} "
                    "or pick another --run-dir"
                )
            # a start killed between its manifest and its config left nothing else: use it again
            if not (self.is_run() and contents == [self.manifest]):
                raise ConfigError(f"run directory {self.root} is not empty; pick an empty or new --run-dir")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create run directory {self.root} ({exc.strerror}); pick another --run-dir"
            ) from None

    def inside(self, path: Path) -> bool:
        """Whether ``path`` (symlinks followed) lies inside the run directory."""
        return path.resolve().is_relative_to(self.root.resolve())

    def check_plain(self) -> None:
        """Refuse a directory holding, at any depth, anything but regular files, folders and links
        to them: opening a FIFO (named pipe) blocks until something writes to it, a device or a
        socket is no file of a run. One-line :class:`CorruptFileError`; opens nothing."""
        kinds = {
            stat.S_IFIFO: "a FIFO (named pipe)",
            stat.S_IFSOCK: "a socket",
            stat.S_IFCHR: "a character device",
            stat.S_IFBLK: "a block device",
        }
        for folder, dirs, files in os.walk(self.root):
            for name in (*dirs, *files):
                path = Path(folder) / name
                try:
                    mode = path.stat().st_mode  # a link: what it points to
                except OSError:  # a dangling link or a link loop: nothing to open
                    continue
                kind = kinds.get(stat.S_IFMT(mode))
                if kind is not None:
                    raise CorruptFileError(
                        f"{path} is {kind}, not a file: a run directory holds files and folders only, "
                        "and reading it would block; remove it and try again"
                    )

    def check_confined(self) -> None:
        """Refuse a directory through which a write could land outside it: a symbolic link (at any
        depth) that leads out of it, or a file written in place (:data:`IN_PLACE_FILES`) that has
        another hard link; and anything :meth:`check_plain` refuses. One-line
        :class:`CorruptFileError`; reads only."""
        self.check_plain()
        root = self.root.resolve()
        for folder, dirs, files in os.walk(self.root):
            for name in (*dirs, *files):
                path = Path(folder) / name
                if not path.is_symlink():
                    continue
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):  # a link loop
                    target = None
                if target is None or not target.is_relative_to(root):
                    raise CorruptFileError(
                        f"{path} is a symbolic link to {os.readlink(path)}, outside the run directory "
                        f"{self.root}: a run writes only inside its directory; replace the link by a copy "
                        "of what it points to (or remove it) and try again"
                    )
        for name in IN_PLACE_FILES:
            path = self.root / name
            links = path.lstat().st_nlink if path.is_file() else 1
            if links > 1:
                raise CorruptFileError(
                    f"{path} has {links} hard links: the run appends to it in place, which would change "
                    f"the other names too; replace it by a copy (cp {name} {name}.copy && mv {name}.copy {name}) "
                    "and try again"
                )

    def has_completed_generation(self) -> bool:
        """A checkpoint pointer exists or ``generations.jsonl`` holds a record."""
        if (self.checkpoint / "latest.json").exists():
            return True
        return self.generations.exists() and self.generations.stat().st_size > 0

    def clear_artefacts(self) -> None:
        """Remove what a run that never completed a generation wrote, except its manifest and config.

        Only the names in :data:`ARTEFACTS` are touched; call it while holding the lock, on a
        directory :meth:`is_run` recognises.
        """
        for name in self.ARTEFACTS:
            path = self.root / name
            if not (path.exists() or path.is_symlink()):
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        remove_temp_files(self.root)

    def lock(self) -> None:
        """Take the writer lock or fail at once with a clear error."""
        lock = FileLock(str(self.root / ".lock"))
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout=0)
        except Timeout:
            raise RunDirLockedError(
                f"run directory {self.root} is in use by another process; wait for it to finish or stop it"
            ) from None
        except OSError as exc:
            raise RunDirLockedError(
                f"cannot write to run directory {self.root} ({exc.strerror}); "
                "make it writable or copy it somewhere writable"
            ) from None
        self._lock = lock

    def unlock(self) -> None:
        """Release the lock and remove its file (while still held, so no second writer slips in)."""
        if self._lock is not None:
            Path(self._lock.lock_file).unlink(missing_ok=True)
            self._lock.release()
            self._lock = None

    def write_config(self, resolved: dict[str, Any]) -> None:
        atomic_write_text(self.config, yaml.safe_dump(resolved, sort_keys=False))

    def write_manifest(self, config_hash: str, argv: list[str], config: dict[str, Any] | None = None) -> None:
        """The manifest of a new run; ``config``: the resolved config it runs (kept, so that resume can
        name a key of ``config.yaml`` edited since)."""
        session = _session(config_hash, argv)
        atomic_write_json(
            self.manifest,
            {
                "format": RUN_FORMAT,
                "created": session["started"],
                "config_hash": config_hash,
                "git_revision": session["git_revision"],
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "packages": package_versions(),
                "argv": argv,
                "sessions": [session],
                **({"config": config} if config is not None else {}),
            },
        )

    def add_session(self, config_hash: str, argv: list[str], config: dict[str, Any] | None = None) -> None:
        """Record a ``--resume`` session in the manifest (its command line and config hash, and the
        resolved ``config`` it runs)."""
        manifest = read_json(self.manifest, what="run manifest", fix="restore it or start a new run")
        if not isinstance(manifest, dict):
            raise ConfigError(
                f"run manifest {self.manifest} is not a JSON object; restore it or start a new run"
            )
        manifest.setdefault("sessions", []).append(_session(config_hash, argv))
        manifest["config_hash"] = config_hash
        if config is not None:
            manifest["config"] = config
        atomic_write_json(self.manifest, manifest)


def _session(config_hash: str, argv: list[str]) -> dict[str, Any]:
    return {
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "argv": argv,
        "overrides": [a for a in argv[1:] if "=" in a and not a.startswith("-")],
        "config_hash": config_hash,
        "git_revision": git_revision(),
        "packages": package_versions(),
    }


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _VERSIONED:
        try:
            out[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            try:
                out[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                out[name] = None
    return out


def git_revision() -> str | None:
    """The project's git revision (with ``-dirty`` when the tree has changes), if it is a checkout."""
    here = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{rev}-dirty" if dirty else rev
