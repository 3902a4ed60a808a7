"""The learner table: what each ``learner.kind`` is built from, resolved once per run.

=============== ================= ========================= =============================== =====================
kind            component         learner                   settings (``learner.by_role``   device
                                                            overrides them per role)
=============== ================= ========================= =============================== =====================
``mappo``       ``LearnerRunner`` ``MAPPOLearner``          ``learner.mappo``               ``learner.device``
``regret``      ``LearnerRunner`` ``RegretLearner``         ``learner.regret`` (its probe   ``learner.device``
                                  (average strategy)        trains ``mappo``)
``exact_br``    ``ExactBRRunner`` exact best responses      none (its probe trains          the CPU
                                  (Kuhn, Leduc)             ``mappo``)
a plugin        ``LearnerRunner`` the plugin class          ``learner.options`` (its        ``learner.device`` when
                                                            ``Config``)                     its constructor takes
                                                                                            ``device``, else the CPU
=============== ================= ========================= =============================== =====================

:func:`learner_kind` resolves ``learner.kind`` (or a role's ``learner.by_role.<role>.kind``) to
its :class:`LearnerKind` (a plugin is imported then: ``module:Class`` or an entry point of
``light_league.learners``); the build and the probe read everything else from it. Adding a built-in kind is one entry of
:data:`LEARNER_KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from light_league.algorithms.base import Learner
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.algorithms.registry import learner_class, takes_device
from light_league.algorithms.regret.learner import RegretLearner
from light_league.config_base import Section
from light_league.errors import ConfigError
from light_league.learner_config import LearnerSection
from light_league.plugins import validate_options
from light_league.training.exact_br import ExactBRRunner
from light_league.training.learner_runner import LearnerRunner

#: the settings of a learner of a role: ``(learner section, role) -> Section`` (None: it takes none)
Settings = Callable[[LearnerSection, str], Section | None]


@dataclass(frozen=True)
class LearnerKind:
    """One row of the learner table."""

    name: str
    #: the learner component the executor places (its constructor: see ``build._learners``)
    component: type
    #: the RL learner the component trains (None: it computes its policy, no learner)
    learner: type[Learner] | None
    #: a learner's settings for a role (``learner.by_role`` applied)
    settings: Settings
    #: trains on ``learner.device`` (False: always the CPU)
    uses_device: bool
    #: needs an env that OpenSpiel plays exactly (``EnvSpec.openspiel_game``)
    exact_game: bool = False
    #: the kind the exploitability probe trains (None: this one)
    probe: str | None = None

    def probe_kind(self) -> LearnerKind:
        """The kind the probe of a run of this kind trains."""
        return self if self.probe is None else LEARNER_KINDS[self.probe]


def _mappo_settings(learner: LearnerSection, role: str) -> Section:
    return learner.mappo_for(role)


def _regret_settings(learner: LearnerSection, role: str) -> Section:
    return learner.regret_for(role)


def _no_settings(learner: LearnerSection, role: str) -> None:
    return None


def _plugin_settings(cls: type[Learner]) -> Settings:
    def settings(learner: LearnerSection, role: str) -> Section:
        path = f"learner.by_role.{role}" if learner.by_role.get(role) else "learner.options"
        return validate_options(cls.Config, learner.options_for(role), path=path)

    return settings


LEARNER_KINDS: dict[str, LearnerKind] = {
    "mappo": LearnerKind("mappo", LearnerRunner, MAPPOLearner, _mappo_settings, uses_device=True),
    "regret": LearnerKind(
        "regret", LearnerRunner, RegretLearner, _regret_settings, uses_device=True, probe="mappo"
    ),
    "exact_br": LearnerKind(
        "exact_br", ExactBRRunner, None, _no_settings, uses_device=False, exact_game=True, probe="mappo"
    ),
}


def learner_kind(learner: LearnerSection, role: str | None = None) -> LearnerKind:
    """The row of ``learner.kind`` (with ``role``: that role's kind, ``by_role.<role>.kind``): a
    built-in, or a plugin learner class (imported here; an unknown or broken one is a one-line
    ConfigError). ``build.validate`` then checks each role's settings through the row."""
    name = learner.kind if role is None else learner.kind_for(role)
    if name in LEARNER_KINDS:
        kind = LEARNER_KINDS[name]
    else:
        cls = learner_class(name, builtins=LEARNER_KINDS)
        kind = LearnerKind(name, LearnerRunner, cls, _plugin_settings(cls), uses_device=takes_device(cls))
    if kind.probe_kind().learner is None:  # pragma: no cover - a table whose probe trains nothing
        raise ConfigError(f"learner.kind={name}: its probe kind {kind.probe} trains no learner")
    return kind
