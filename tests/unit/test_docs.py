"""The docs stay true: generated reference is current, shown commands validate, complete code runs."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from light_league import config_docs
from light_league.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]  # the user pages (not notes/)
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # the package's metadata


def test_configuration_reference_is_generated_from_the_config_classes() -> None:
    expected = config_docs.render()
    assert (ROOT / "docs" / "configuration.md").read_text() == expected, (
        "docs/configuration.md is stale: run `python -m light_league.config_docs > docs/configuration.md`"
    )


def shown_commands() -> list[tuple[str, list[str]]]:
    out = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            line = line.strip().split(" # ")[0].strip()
            if line.startswith("python main.py --config"):
                out.append((doc.name, shlex.split(line)[2:]))
    return out


@pytest.mark.parametrize(
    ("doc", "argv"), shown_commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v)
)
def test_every_shown_run_command_has_a_valid_config(
    doc: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    config = argv[argv.index("--config") + 1]
    skip = {"--config", config, "--run-dir", "--quiet"}
    overrides = [a for a in argv if a not in skip and "=" in a and not a.startswith("-")]
    load_config(ROOT / config, overrides)


def complete_python_blocks() -> list[tuple[str, str]]:
    blocks = []
    for doc in DOCS:
        if doc.name == "plugins.md":  # its blocks run in order as one file, below
            continue
        for code in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S):
            if "..." not in code and "setup(" not in code and "class " not in code:
                blocks.append((doc.name, code))
    return blocks


@pytest.mark.parametrize(
    ("doc", "code"), complete_python_blocks(), ids=lambda v: v[:30] if isinstance(v, str) else v
)
def test_complete_python_examples_run(
    doc: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"<{doc}>", "exec"), {"__name__": "__docs__"})


def plugins_md_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "plugins.md").read_text(), flags=re.S)


def test_plugins_md_snippets_run_in_order_as_one_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block with its imports; ``setup(...)`` (a plugin package's setup.py) is recorded, not run."""
    import setuptools

    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    called: list[dict[str, object]] = []
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: called.append(kwargs))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    blocks = plugins_md_blocks()
    assert len(blocks) >= 6
    for number, code in enumerate(blocks):
        assert "..." not in code, f"docs/plugins.md python block {number} is not complete"
        exec(compile(code, f"<plugins.md block {number}>", "exec"), namespace)
    assert called and called[0]["entry_points"] == {
        "light_league.schedulers": ["hardest_first = my_league_plugins.hardest_first:HardestFirstScheduler"]
    }


def test_plugins_md_lists_the_registered_envs() -> None:
    from light_league import envs

    text = (ROOT / "docs" / "plugins.md").read_text()
    listed = text.split("Besides the built-in environments (", 1)[1].split("`env.name` accepts", 1)[0]
    assert sorted(re.findall(r"`([a-z_]+)`", listed)) == envs.env_names()


def test_plugin_walkthrough_snippets_are_excerpts_of_the_real_example() -> None:
    """The blocks that show the examples' classes show their lines."""
    source = "\n".join(
        (ROOT / "light_league" / "examples" / name).read_text()
        for name in ("my_scheduler.py", "historical_exploiter.py")
    )
    for code in plugins_md_blocks():
        if not re.search(r"^class (HardestFirst|HistoricalExploiter)", code, flags=re.M):
            continue
        for line in code.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and stripped != "...":
                assert stripped in source, (
                    f"docs/plugins.md shows a line not in light_league/examples/my_scheduler.py or historical_exploiter.py: {stripped}"
                )


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_relative_link_in_the_docs_resolves() -> None:
    """Every ``[text](path#anchor)`` outside code blocks names a file that exists and, for a
    markdown file, a heading it has (a link into the lab notebooks, notes/, included)."""
    pages = [*DOCS, ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md"]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md":
                body = re.sub(r"```.*?```", "", linked.read_text(encoding="utf-8"), flags=re.S)
                if anchor not in {_slug(h) for h in re.findall(r"^#+ (.*)$", body, flags=re.M)}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_console_script_is_named_in_the_readme_and_the_quickstart() -> None:
    (script,) = [name for name, target in PROJECT["scripts"].items() if target == "light_league.cli:main"]
    for page in (ROOT / "README.md", ROOT / "docs" / "quickstart.md"):
        assert f"`{script}`" in page.read_text() and "same as `python main.py`" in page.read_text(), page.name


def test_the_docs_say_how_to_read_the_heatmap_at_its_own_size() -> None:
    """TensorBoard shrinks the heatmap to its card; the pages that show it say which setting reads it."""
    for page in ("metrics.md", "quickstart.md"):
        text = " ".join((ROOT / "docs" / page).read_text().split())
        assert "tick *Show actual image size* in the Images tab's settings" in text, page


def test_the_extra_the_pettingzoo_example_needs_is_in_the_metadata_and_named_beside_it() -> None:
    assert PROJECT["optional-dependencies"]["pettingzoo"] == ["pettingzoo[classic]>=1.24"]
    text = (ROOT / "docs" / "plugins.md").read_text()
    assert text.index('pip install -e ".[pettingzoo]"') < text.index("pettingzoo.classic.rps_v2")
