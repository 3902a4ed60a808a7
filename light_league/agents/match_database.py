"""Match results as an append-only JSON-lines log, indexed in memory.

Each line is one game, or a group of games: ``{"a": ..., "b": ..., "outcome": ..., **extra}``
with ``outcome`` the score of ``a`` in [0, 1] (1 win, 0.5 draw, 0 loss) and, for a group, a
``games`` field (a positive integer; a line without one is one game) whose ``outcome`` is the
mean score over those games. A game counts for both players: it adds ``outcome`` to ``a``'s
record against ``b`` and ``1 - outcome`` to ``b``'s record against ``a``, so
``win_rate(a, b) + win_rate(b, a) == 1``. Record each game once (recording it from both sides
counts it twice; the win rates stay the same but the game counts double).

Opening reads nothing: the in-memory index is built from the file on the first query (a torn
last line left by a killed writer is skipped, and cut off before the next append), so a process
that only appends (the runner) never pays for the games logged before it; all queries use the
index. Extra fields are stored as given; a ``generation`` field lets a
resumed run drop the games of generations it is about to replay (:meth:`truncate_generation`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from light_league.errors import CorruptFileError
from light_league.utils.atomic import JsonlLog, write_jsonl_atomic

_RESERVED = ("a", "b", "outcome")
#: the optional field of a line that stands for several games (its outcome is their mean)
GAMES_FIELD = "games"

MatchSpec = Sequence[Any] | Mapping[str, Any]


def _make_record(a: str, b: str, outcome: float, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Validate one game and build its log record."""
    if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
        raise ValueError(f"players must be non-empty agent id strings, got a={a!r}, b={b!r}")
    try:
        score = float(outcome)
    except (TypeError, ValueError):
        raise ValueError(f"outcome must be a number in [0, 1], got {outcome!r}") from None
    if not (0.0 <= score <= 1.0):
        raise ValueError(
            f"outcome must lie in [0, 1] (1 win, 0.5 draw, 0 loss), got {outcome!r} for {a} vs {b}"
        )
    games = extra.get(GAMES_FIELD, 1)
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ValueError(
            f"{GAMES_FIELD} must be a positive integer (the games a line stands for), got {games!r}"
        )
    clash = [k for k in extra if k in _RESERVED]
    if clash:
        raise ValueError(
            f"extra fields {clash} clash with the record's own keys {list(_RESERVED)}; rename them"
        )
    record = {"a": a, "b": b, "outcome": score, **extra}
    try:
        json.dumps(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"match record {record!r} is not JSON-serialisable ({exc})") from None
    return record


class MatchDatabase:
    """JSONL log of game outcomes with win rates served from memory.

    ``fsync_every``: fsync the log after this many appended records (0: leave it to the OS;
    call :meth:`sync` at a checkpoint).
    """

    def __init__(self, db_path: str | os.PathLike[str], *, fsync_every: int = 0) -> None:
        self.db_path = Path(db_path)
        self._log = JsonlLog(self.db_path, fsync_every=fsync_every)
        # focal -> opponent -> [sum of focal's outcomes, games]; None until the first query
        self._index_data: dict[str, dict[str, list[float]]] | None = None
        self._n_games = 0
        if not self.db_path.exists() or self.db_path.stat().st_size == 0:
            self._index_data = {}  # nothing to read: the index starts (and stays) in memory

    @property
    def _index(self) -> dict[str, dict[str, list[float]]]:
        if self._index_data is None:
            self.reload()
        assert self._index_data is not None
        return self._index_data

    def reload(self) -> None:
        """Rebuild the index from the file (e.g. after another process appended to it)."""
        self._index_data = {}
        self._n_games = 0
        for lineno, record in enumerate(self._log, start=1):
            try:
                self._add_to_index(record)
            except (KeyError, TypeError, ValueError) as exc:
                self._index_data = None
                raise CorruptFileError(
                    f"{self.db_path} line {lineno} is not a match record ({exc.__class__.__name__}: {exc}); "
                    "remove or fix that line"
                ) from None

    def _add_to_index(self, record: Mapping[str, Any]) -> None:
        a, b, score = record["a"], record["b"], float(record["outcome"])
        games = float(record.get(GAMES_FIELD, 1))
        if not isinstance(a, str) or not isinstance(b, str):
            raise TypeError(f"players must be strings, got {a!r}, {b!r}")
        if not games >= 1:
            raise ValueError(f"{GAMES_FIELD} must be at least 1, got {record.get(GAMES_FIELD)!r}")
        index = self._index_data
        assert index is not None
        for focal, opponent, value in ((a, b, score), (b, a, 1.0 - score)):
            cell = index.setdefault(focal, {}).setdefault(opponent, [0.0, 0.0])
            cell[0] += value * games
            cell[1] += games
        self._n_games += int(games)

    def record(self, a: str, b: str, outcome: float, **extra: Any) -> None:
        """Append one game between ``a`` and ``b`` with ``a``'s score ``outcome`` (with
        ``games=n``: ``n`` games whose mean score is ``outcome``)."""
        self.record_many([(a, b, outcome, extra)])

    def record_many(self, matches: Sequence[MatchSpec]) -> None:
        """Append a batch of games in one write; nothing is written if any game is invalid.

        Each game is ``(a, b, outcome)``, ``(a, b, outcome, extra_dict)`` or a dict with keys
        ``a``, ``b``, ``outcome`` and any extra fields; a ``games`` extra field makes it that many
        games with mean score ``outcome``.
        """
        records = [self._parse(m) for m in matches]
        self._log.append_many(records)
        if self._index_data is not None:  # else the first query reads these from the file
            for record in records:
                self._add_to_index(record)

    @staticmethod
    def _parse(match: MatchSpec) -> dict[str, Any]:
        if isinstance(match, Mapping):
            extra = {k: v for k, v in match.items() if k not in _RESERVED}
            missing = [k for k in _RESERVED if k not in match]
            if missing:
                raise ValueError(f"match {dict(match)!r} lacks keys {missing}")
            return _make_record(match["a"], match["b"], match["outcome"], extra)
        if len(match) not in (3, 4):
            raise ValueError(f"match must be (a, b, outcome) or (a, b, outcome, extra), got {match!r}")
        extra = match[3] if len(match) == 4 else {}
        return _make_record(match[0], match[1], match[2], extra)

    def win_rate(self, a: str, b: str) -> float:
        """Mean score of ``a`` against ``b`` (wins + half the draws, over games); 0.5 if never played."""
        cell = self._index.get(a, {}).get(b)
        if cell is None or cell[1] == 0.0:
            return 0.5
        return cell[0] / cell[1]

    def win_rates_for(self, a: str) -> dict[str, float]:
        """Opponent -> ``win_rate(a, opponent)`` for every opponent ``a`` has played."""
        return {opponent: total / games for opponent, (total, games) in self._index.get(a, {}).items()}

    def games(self, a: str, b: str) -> int:
        """Number of recorded games between ``a`` and ``b`` (either order)."""
        cell = self._index.get(a, {}).get(b)
        return 0 if cell is None else int(cell[1])

    def players(self) -> list[str]:
        """Every agent id that appears in the log."""
        return list(self._index)

    def __len__(self) -> int:
        """The games logged (a line of ``games=n`` counts ``n``)."""
        self._index  # noqa: B018 (built on first use)
        return self._n_games

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Records in log order (read from the file)."""
        return iter(self._log)

    def sync(self) -> None:
        """fsync the log."""
        self._log.sync()

    def cut(self, size: int) -> None:
        """Cut the log at byte ``size`` (a record boundary: resume cuts back to its checkpoint)."""
        self._log.truncate_bytes(size)
        self._index_data = None if size else {}
        self._n_games = 0

    def truncate_generation(self, generation: int) -> int:
        """Drop every record whose ``generation`` is >= ``generation``; return how many were dropped.

        Records without a ``generation`` field are kept. The file is rewritten atomically and
        streamed (memory does not grow with the log); a record whose ``generation`` is not an
        integer is a one-line :class:`CorruptFileError`.
        """
        if not (isinstance(generation, int) and generation >= 0) or isinstance(generation, bool):
            raise ValueError(f"generation must be a non-negative integer, got {generation!r}")
        dropped = 0
        for lineno, record in enumerate(self._log, start=1):
            if _generation_at_least(record, generation, self.db_path, lineno):
                dropped += 1
        if dropped:
            write_jsonl_atomic(
                self.db_path,
                (r for r in self._log if not _generation_at_least(r, generation, self.db_path, 0)),
            )
            self._log = JsonlLog(self.db_path, fsync_every=self._log._fsync_every)
            self._index_data = None
        return dropped


def record_generation(match: Any, path: Path, lineno: int) -> int | None:
    """The ``generation`` of a match-log record (None when it has none), checked."""
    if not isinstance(match, dict):
        raise CorruptFileError(
            f"{path} line {lineno or '?'} is a JSON {type(match).__name__}, not a match record; "
            "remove or fix that line"
        )
    value = match.get("generation")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise CorruptFileError(
            f"{path} line {lineno or '?'} has generation {value!r}, not an integer; remove or fix that line"
        )
    return value


def _generation_at_least(record: Any, generation: int, path: Path, lineno: int) -> bool:
    value = record_generation(record, path, lineno)
    return value is not None and value >= generation
