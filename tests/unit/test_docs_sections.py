"""The sections of docs/ generated from the code (light_league/doc_sections.py) equal their rendering:
the generation record's fields in docs/metrics.md, the layer table and module map in
docs/architecture.md."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from light_league import doc_sections as TOOL
from light_league import layers
from light_league.tracking.record import GenerationRecord

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("section", TOOL.SECTIONS, ids=lambda s: s.name)
def test_a_generated_section_equals_its_rendering(section: object) -> None:
    assert not TOOL.stale(section), (
        f"docs/{section.doc} section {section.name} is stale: run python tools/regenerate_docs.py "  # type: ignore[attr-defined]
        f"--only {section.name}"  # type: ignore[attr-defined]
    )


def test_an_edited_section_is_stale_until_rewritten(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("data", "img", "notes"))
    section = next(s for s in TOOL.SECTIONS if s.name == "generation_record")
    path = docs / section.doc
    path.write_text(path.read_text().replace("| `wall_s` | number or null | always |", "| `wall_s` | text |"))
    assert TOOL.stale(section, docs)
    assert TOOL.write(section, docs) and not TOOL.stale(section, docs)


def test_the_record_section_lists_every_field() -> None:
    body = TOOL.rendered(next(s for s in TOOL.SECTIONS if s.name == "generation_record"))
    names = [f.name for f in dataclasses.fields(GenerationRecord) if f.name != "extra"]
    assert [n for n in names if f"| `{n}` |" not in body] == []


def test_the_module_map_names_every_module_of_the_package() -> None:
    body = TOOL.rendered(next(s for s in TOOL.SECTIONS if s.name == "module_map"))
    modules = sorted((ROOT / "light_league").rglob("*.py"))
    top = [p for p in modules if p.parent == ROOT / "light_league" and p.name != "__init__.py"]
    assert [p.name for p in top if f"  {p.name} " not in body] == []
    packages = {p.parent for p in modules if p.parent != ROOT / "light_league"}
    for package in packages:
        rel = package.relative_to(ROOT / "light_league").as_posix()
        shown = f"{rel}/" in body or package.name + "/" in body
        assert shown, f"{rel}/ is not in the module map"
    assert "layers.py" in body and len(layers.LAYERS) == body.count("\n  -- ")
