"""Render ``docs/configuration.md`` from the config classes (so the docs cannot drift).

Regenerate with ``python -m light_league.config_docs > docs/configuration.md``; a test checks the
committed file equals this rendering.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from light_league.config import ExperimentConfig
from light_league.config_base import Section

HEADER = """# Configuration

An experiment is one YAML file under `expr_configs/`, validated into typed sections; each
component receives only its own section. Any key can be overridden on the command line as
`key.path=value` (typed like YAML: `3`, `0.5`, `true`, `[a, b]`). An unknown key, a wrong type or
an out-of-range value stops the run before anything starts, with one line naming the dotted path
(and a *did you mean*), exit status 2. The resolved config is saved as `RUN_DIR/config.yaml`.

This file is generated from the config classes (`python -m light_league.config_docs`).
"""


def _section_type(field: FieldInfo) -> type[Section] | None:
    ann = field.annotation
    return ann if isinstance(ann, type) and issubclass(ann, Section) else None


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, Section):
        return "(section)"
    return f"`{value!r}`" if not isinstance(value, str) else f"`{value}`"


def _range(field: FieldInfo) -> str:
    parts = []
    for meta in field.metadata:
        for attr, sym in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            v = getattr(meta, attr, None)
            if v is not None:
                parts.append(f"{sym} {v}")
    return ", ".join(parts)


def _type_name(field: FieldInfo) -> str:
    text = str(field.annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
    return text.replace("|", "\\|")


def render_section(model: type[Section], prefix: str) -> list[str]:
    doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    lines = (
        [f"## `{prefix}`", ""]
        + ([doc, ""] if doc else [])
        + ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
    )
    nested: list[tuple[str, type[Section]]] = []
    for name, field in model.model_fields.items():
        sub = _section_type(field)
        if sub is not None:
            nested.append((f"{prefix}.{name}", sub))
            continue
        desc = (field.description or "").replace("\n", " ")
        lines.append(
            f"| `{prefix}.{name}` | {_type_name(field)} | {_default(field)} | {_range(field)} | {desc} |"
        )
    lines.append("")
    for path, sub in nested:
        lines.extend(render_section(sub, path))
    return lines


def render() -> str:
    from light_league.scheduling.registry import SCHEDULERS

    lines = [HEADER]
    for name, field in ExperimentConfig.model_fields.items():
        sub = _section_type(field)
        if sub is not None:
            lines.extend(render_section(sub, name))
    lines += [
        "## `scheduler`",
        "",
        "`scheduler.name` picks the scheduler: a built-in name below, `package.module:ClassName`, or a",
        "name registered under the entry-point group `light_league.schedulers` (see docs/plugins.md).",
        "The other keys of the section are that scheduler's own options, checked when the config is",
        "loaded and filled in with their defaults (`--print-config` and `config.yaml` show them all; a",
        "`package.module:ClassName` scheduler's are checked when the run is built, and kept as given):",
        "",
    ]
    for sname, cls in SCHEDULERS.items():
        body = render_section(cls.Config, "scheduler")
        body[0] = f"### `scheduler.name: {sname}`"
        lines.extend(body)
    from light_league.agents.meta_solvers import META_SOLVERS, NoOptions

    lines += [
        "## `league.meta_solver`",
        "",
        '`league.meta_solver.name` picks the meta-solver (docs/league.md, "Meta-solvers"): a built-in',
        "name below, `package.module:function`, or a name registered under the entry-point group",
        "`light_league.meta_solvers` (see docs/plugins.md). The other keys are that solver's options;",
        "`meta_solver: prd` is short for `meta_solver: {name: prd}`.",
        "",
    ]
    for mname, solver in META_SOLVERS.items():
        if solver.Config is NoOptions:
            lines += [f"### `league.meta_solver.name: {mname}`", "", "No options.", ""]
            continue
        body = render_section(solver.Config, "league.meta_solver")
        body[0] = f"### `league.meta_solver.name: {mname}`"
        lines.extend(body)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
