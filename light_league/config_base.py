"""Base class for every typed config section.

Each component declares its own section as a subclass of :class:`Section` (fields with
defaults, ranges and a ``description``); ``light_league.config`` assembles them. Unknown keys
are refused (``extra="forbid"``) and reported with their dotted path and a did-you-mean.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from light_league.errors import ConfigError, did_you_mean


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)


def _fields_at(model: type[Section], loc: list[str]) -> list[str]:
    """Field names of the (nested) section at ``loc`` inside ``model`` (empty if not a section)."""
    current: Any = model
    for part in loc:
        field = current.model_fields.get(part)
        ann = getattr(field, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        current = ann
    return sorted(current.model_fields)


def format_validation_error(
    exc: ValidationError, model: type[Section], *, path: str = "", source: str = ""
) -> str:
    """The first problem of ``exc`` as one line: ``[source: ]dotted.path: what is wrong[; fix]``."""
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    dotted = ".".join([*([path] if path else []), *loc])
    prefix = f"{source}: " if source else ""
    if err["type"] == "extra_forbidden":
        choices = _fields_at(model, loc[:-1])
        hint = did_you_mean(loc[-1], choices) or (f"; valid keys: {', '.join(choices)}" if choices else "")
        return f"{prefix}{dotted}: unknown key{hint}"
    value = err.get("input")
    shown = "{...}" if isinstance(value, dict) else repr(value)
    message = err["msg"].removeprefix("Value error, ").rstrip(".")
    return f"{prefix}{dotted}: {shown} is invalid: {message}"


def validate_section(model: type[Section], raw: Any, *, path: str = "", source: str = "") -> Any:
    """Validate ``raw`` into ``model``; the first problem becomes a one-line :class:`ConfigError`."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, path=path, source=source)) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b.c=value`` → (["a", "b", "c"], value typed by YAML rules)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.path=value")
    key, _, raw = text.partition("=")
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override {text!r} has an empty key part")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return parts, value
