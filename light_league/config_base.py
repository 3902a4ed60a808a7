"""Base class for every typed config section.

Each component declares its own section as a subclass of :class:`Section` (fields with
defaults, ranges and a ``description``); ``light_league.config`` assembles them. Unknown keys
are refused (``extra="forbid"``) and reported with their dotted path and a did-you-mean.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)
