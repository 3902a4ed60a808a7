"""The generation record is read through its type, never through its JSON keys.

:mod:`light_league.tracking.record` is the one module that knows how a generation record is
spelled on disk (and how it was spelled before). Everywhere else in ``light_league/``, ``bench/``,
``tools/`` and ``main.py`` a record is a :class:`GenerationRecord` read by attribute. This test
reads those files' syntax trees and fails on a string-keyed lookup of a record field:

- ``X["key"]`` (read, write or delete), ``X.get("key", ...)``, ``X.pop("key", ...)``,
  ``X.setdefault("key", ...)`` and ``"key" in X`` / ``"key" not in X``,
- where ``key`` is a top-level field of the record, current (:data:`RECORD_KEYS`) or former
  (``nash``, ``nash_entropy``, ``elo``, ``nash_conv``),
- unless ``X`` names another format that shares a key name: its *name* (the variable, attribute or
  called function it is read from, ``state`` in ``state["generation"]``, ``records`` in
  ``records[-1]["wall_s"]``, ``loads`` in ``json.loads(line)["games"]``) is one of
  :data:`OTHER_FORMATS`, each listed with what it holds.

A new dict that shares a key name with the record either gets a name from that list or a line
in it saying what it holds; a record read as a dict is what this test is there to catch.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from light_league.tracking.record import FORMER_NAMES, GenerationRecord

ROOT = Path(__file__).resolve().parents[2]
RECORD_MODULE = ROOT / "light_league" / "tracking" / "record.py"
SCANNED = ("light_league", "bench", "tools", "main.py")

#: every top-level key a generation record has been written with
RECORD_KEYS = frozenset(
    [f.name for f in dataclasses.fields(GenerationRecord) if f.name != "extra"]
    + [*FORMER_NAMES, "elo", "nash_conv", "latest_probe"]
)

#: names of the other formats whose keys share a name with a record field (the name of the
#: object a key is read from, see the module docstring), with what each holds
OTHER_FORMATS = {
    "state": "a component's or the checkpoint's saved state (state.json, state_dict)",
    "data": "a JSON file read as it is: payoff table, checkpoint pointer, Elo registry, bench output",
    "d": "PayoffSnapshot.from_json's argument (payoff/gen_XXXX.json)",
    "message": "the chart process's messages",
    "request": "the chart process's requests",
    "match": "a line of matches.jsonl, or a regular-expression match",
    "META_SOLVERS": "the meta-solvers by name (``nash`` is one)",
    "ref": "bench/adaptive_evaluation.py's reference table",
    "reading": "a probe's reading in exploit/<target>_gen<G>.json",
    "readings": "probe readings by target and seed (bench/probe_league.py)",
    "meta": "a probe's reading of the meta-strategy (bench/probe_league.py)",
    "p": "a league_scale bench row",
    "ours": "a bench's measured row (bench/rllib_comparison.py)",
    "theirs": "a bench's measured row (bench/rllib_comparison.py)",
    "first": "a probe's first curve point (bench/probe_play.py)",
    "versus": "a row of tools/regenerate_docs.py's newest_vs_baselines.jsonl",
    "q": "a bench's text output parsed by tools/regenerate_docs.py",
    "point": "a point of an OpenSpiel PSRO / NFSP curve (bench/exploitability_per_minute.py)",
    "sides": "bench/league_vs_self_play.py's per-side run summaries (in its JSON output)",
    "mixtures": "bench/probe_validity.py's mixtures by output kind",
    "metadata": "a pool member's metadata in pool.json (the generation it joined, steps, archived)",
}


def object_name(node: ast.AST) -> str | None:
    """The name a lookup's object is read from: ``records`` for ``records[-1]``, ``record`` for
    ``run.record()``, ``loads`` for ``json.loads(line)``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def key_lookups(tree: ast.AST) -> list[tuple[int, str, str]]:
    """``(line, key, object name)`` of every lookup of a record key in ``tree``, whatever its object."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and (key := _key(node.slice)):
            found.append((node.lineno, key, object_name(node.value)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
            and (key := _key(node.args[0]))
        ):
            found.append((node.lineno, key, object_name(node.func.value)))
        elif isinstance(node, ast.Compare) and (key := _key(node.left)):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, ast.In | ast.NotIn):
                    found.append((node.lineno, key, object_name(right)))
    return sorted((line, key, str(name)) for line, key, name in found if key in RECORD_KEYS)


def record_lookups(tree: ast.AST) -> list[tuple[int, str, str]]:
    """The lookups of :func:`key_lookups` whose object is not one of :data:`OTHER_FORMATS`."""
    return [(line, key, name) for line, key, name in key_lookups(tree) if name not in OTHER_FORMATS]


def scanned_files() -> list[Path]:
    files = []
    for entry in SCANNED:
        path = ROOT / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [p for p in files if p != RECORD_MODULE]


def test_no_generation_record_is_read_by_its_json_keys() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}[{key!r}]"
        for path in scanned_files()
        for line, key, name in record_lookups(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    ]
    assert offenders == [], (
        "read generation records through light_league.tracking.record.GenerationRecord's fields, "
        f"not their JSON keys (or name another format in OTHER_FORMATS): {offenders}"
    )


def test_every_other_format_named_is_in_use() -> None:
    """The list of other formats names only objects the scanned files read record keys from."""
    used = {
        name
        for path in scanned_files()
        for _, _, name in key_lookups(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    }
    assert sorted(set(OTHER_FORMATS) - used) == []


def test_the_check_catches_the_patterns_records_were_read_with() -> None:
    code = """
record["meta_strategy"]
records[-1]["wall_s"]
run.record().get("population", [])
r.get("rating", r.get("elo", {}))
record["newest"] = entries
"newest" not in record
stats.get("rating_ci95") or {}
self.measured.get("meta_nash_conv")
json.loads(line)["generation"]
"""
    names = [(key, name) for _, key, name in record_lookups(ast.parse(code))]
    assert names == [
        ("meta_strategy", "record"),
        ("wall_s", "records"),
        ("population", "record"),
        ("elo", "r"),
        ("rating", "r"),
        ("newest", "record"),
        ("newest", "record"),
        ("rating_ci95", "stats"),
        ("meta_nash_conv", "measured"),
        ("generation", "loads"),
    ]


def test_the_check_lets_other_formats_and_other_keys_pass() -> None:
    code = """
state["generation"]
data.get("games")
record["learner"]
config["population_size"]
record[key]
"""
    assert record_lookups(ast.parse(code)) == []


def test_every_record_field_has_a_docstring() -> None:
    from light_league.tracking.record import field_docs

    docs = field_docs(GenerationRecord)
    assert [f.name for f in dataclasses.fields(GenerationRecord) if not docs.get(f.name)] == []
