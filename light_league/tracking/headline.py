"""The curves a reader looks for first, and the TensorBoard layout that opens on them.

Each generation the runner logs, for the newest snapshot of each main agent (of each learner when
the run has no main agent, as PSRO's best responses):

- ``headline/<learner>/rating`` with ``rating_low`` and ``rating_high``, its fitted rating and 95%
  interval;
- ``headline/<learner>/win_rate/<baseline>``, its mean outcome against each baseline, with
  ``win_rate_low/<baseline>`` and ``win_rate_high/<baseline>``, that cell's 95% interval;
- ``headline/<learner>/reference_win_rate`` (with ``_low`` and ``_high``): its mean outcome against
  the run's reference opponent, the same baseline in every generation; and
  ``headline/best_main/reference_win_rate``, the best main agent's so far (the record's ``best_main``).

:func:`custom_scalars_layout` groups those, the exact NashConv, the probe's readings and the
meta-strategy's entropy into TensorBoard's *Custom Scalars* dashboard (``main.py board`` opens on
it), charts only for the tags a run has logged. Each question has a category of its own (the
dashboard keeps the categories' order, not always the charts' within one), and each headline
chart is a margin chart: a line with its band, of zero width where the number has no interval.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from light_league.tracking.logger import PayoffSnapshot, versus_baselines
from light_league.types import AgentType, newest_snapshots

HEADLINE = "headline"
_RATING = re.compile(rf"^{HEADLINE}/([^/]+)/rating$")


def headline_members(snapshot: PayoffSnapshot) -> list[str]:
    """The newest snapshot of each main agent; of each learner when no member is a main agent."""
    newest = newest_snapshots(snapshot.agent_ids, snapshot.roles)
    main = [i for i in newest if snapshot.roles[i] == AgentType.MAIN_AGENT]
    return [snapshot.agent_ids[i] for i in (main or newest)]


#: the name under ``headline/`` of the best main agent so far
BEST_MAIN = "best_main"


def headline_scalars(
    snapshot: PayoffSnapshot,
    rating: Mapping[str, float],
    rating_ci95: Mapping[str, Sequence[float]],
    *,
    reference: str | None = None,
    best: str | None = None,
) -> dict[str, float]:
    """The ``headline/`` scalars of one generation (see the module docstring); ``reference``: the
    run's reference opponent, ``best``: the best main agent so far (None: none)."""
    out: dict[str, float] = {}
    members = [(m.rsplit("-v", 1)[0], m) for m in headline_members(snapshot)]
    for learner, member in [*members, *([(BEST_MAIN, best)] if best else [])]:
        versus = versus_baselines(snapshot, member).get(reference) if reference else None
        if versus is not None:
            low, high = versus.ci95 or (versus.win_rate, versus.win_rate)
            tag = f"{HEADLINE}/{learner}/reference_win_rate"
            out.update({tag: versus.win_rate, f"{tag}_low": float(low), f"{tag}_high": float(high)})
    for learner, member in members:
        if member in rating:
            out[f"{HEADLINE}/{learner}/rating"] = float(rating[member])
            low, high = rating_ci95.get(member, (rating[member], rating[member]))
            out[f"{HEADLINE}/{learner}/rating_low"] = float(low)
            out[f"{HEADLINE}/{learner}/rating_high"] = float(high)
        for baseline, cell in versus_baselines(snapshot, member).items():
            if cell is not None:
                low, high = cell.ci95 or (cell.win_rate, cell.win_rate)
                out[f"{HEADLINE}/{learner}/win_rate/{baseline}"] = cell.win_rate
                out[f"{HEADLINE}/{learner}/win_rate_low/{baseline}"] = float(low)
                out[f"{HEADLINE}/{learner}/win_rate_high/{baseline}"] = float(high)
    return out


Chart = tuple[str, str, list[str]]  #: (title, "multiline" or "margin", tags or regular expressions)
_WIN_RATE = re.compile(rf"^{HEADLINE}/([^/]+)/win_rate/([^/]+)$")
_PROBE = re.compile(r"^probe/([^/]+)/win_rate$")


def _band(title: str, tag: str, low: str | None = None, high: str | None = None) -> Chart:
    return (title, "margin", [tag, low or tag, high or tag])


_REFERENCE = re.compile(rf"^{HEADLINE}/([^/]+)/reference_win_rate$")


def _reference_charts(keys: set[str]) -> list[Chart]:
    """The newest main agents and the best one against the reference opponent: one chart with
    every line, then each line with its band."""
    learners = sorted({m[1] for k in keys if (m := _REFERENCE.match(k))}, key=lambda x: (x == BEST_MAIN, x))
    charts: list[Chart] = [
        (
            "newest and best main agent against the reference opponent: win rate",
            "multiline",
            [rf"^{HEADLINE}/[^/]+/reference_win_rate$"],
        )
    ]
    for learner in learners:
        tag = f"{HEADLINE}/{learner}/reference_win_rate"
        name = "the best main agent so far" if learner == BEST_MAIN else f"{learner}'s newest snapshot"
        charts.append(
            _band(f"{name} against the reference opponent, 95% interval", tag, f"{tag}_low", f"{tag}_high")
        )
    return charts


def _charts(keys: set[str]) -> dict[str, list[Chart]]:
    """The layout's categories, each a list of charts, before leaving out those with no data."""
    rating: list[Chart] = []
    for learner in sorted({m[1] for k in keys if (m := _RATING.match(k))}):
        tag = f"{HEADLINE}/{learner}/rating"
        rating.append(
            _band(f"{learner}: rating of the newest snapshot, 95% interval", tag, f"{tag}_low", f"{tag}_high")
        )
    versus: list[Chart] = []
    for learner, baseline in sorted({(m[1], m[2]) for k in keys if (m := _WIN_RATE.match(k))}):
        tag = f"{HEADLINE}/{learner}/win_rate/{baseline}"
        low, high = (f"{HEADLINE}/{learner}/win_rate_{end}/{baseline}" for end in ("low", "high"))
        versus.append(_band(f"{learner} against {baseline}: win rate, 95% interval", tag, low, high))
    exploitability: list[Chart] = []
    for target in sorted({m[1] for k in keys if (m := _PROBE.match(k))}):
        tag = f"probe/{target}/win_rate"
        exploitability.append(
            _band(
                f"probe against {target}: a fresh learner's win rate, 95% interval",
                tag,
                f"{tag}_low",
                f"{tag}_high",
            )
        )
    exploitability += [
        _band("exact NashConv of the newest main agent", "exploitability/main_nash_conv"),
        _band("exact NashConv of the meta-strategy", "exploitability/meta_nash_conv"),
        _band("exact NashConv of the average policy", "exploitability/average_nash_conv"),
    ]
    league: list[Chart] = [
        ("population size", "multiline", [r"^league/population_size$"]),
        ("behaviour diversity", "multiline", [r"^league/diversity_score$"]),
        ("meta-strategy stability (TV distance)", "multiline", [r"^league/meta_stability$"]),
        ("main exploiters' win rate against the main agents", "multiline", [r"^exploiter/"]),
        ("probe payoff against main / meta", "multiline", [r"^probe/[^/]+/(payoff|best_response_payoff)$"]),
        ("least exploitable mixture's exact NashConv", "multiline", [r"^exploitability/least_exploitable"]),
    ]
    training: list[Chart] = [
        ("policy entropy per learner", "multiline", [r"^train/[^/]+/entropy$"]),
        ("approximate KL per learner", "multiline", [r"^train/[^/]+/approx_kl$"]),
        ("env steps per second", "multiline", [r"^rollout/env_steps_per_s$"]),
        ("seconds per phase", "multiline", [r"^timing/[^/]+_s$"]),
    ]
    return {
        "against the reference opponent: the newest and the best main agent": _reference_charts(keys),
        "rating of the newest main agent": rating,
        "its win rate against each baseline": versus,
        "exploitability (probe; exact NashConv where the game allows)": exploitability,
        "meta-strategy entropy": [_band("meta-strategy entropy (nats)", "league/meta_entropy")],
        "league": league,
        "training": training,
    }


def _has_data(chart: Chart, keys: set[str]) -> bool:
    _, kind, tags = chart
    if kind == "margin":
        return tags[0] in keys
    return any(re.search(pattern, key) for pattern in tags for key in keys)


#: the categories shown closed (the others, the headline, open)
CLOSED = ("league", "training")


def custom_scalars_layout(keys: Iterable[str]) -> dict[str, list[Chart]]:
    """The Custom Scalars categories for a run that has logged ``keys``, in this order: the
    newest and the best main agent against the reference opponent, the rating of the newest main
    agent, its win rate against each baseline, exploitability, the meta-strategy's entropy (open),
    then ``league`` and ``training`` (closed); a chart only where one of its tags has data."""
    seen = set(keys)
    out = {}
    for category, charts in _charts(seen).items():
        kept = [c for c in charts if _has_data(c, seen)]
        if kept:
            out[category] = kept
    return out
