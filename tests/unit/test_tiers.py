"""The test tiers of tests/conftest.py, run on a small suite of their own (pytester, in-process):
each test is in one tier, and a unit test that starts a run fails with the marker to add."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

SUITE = """
import pytest
from light_league.runner import Runner

def test_starts_a_run():
    Runner.run(None)

@pytest.mark.integration
def test_integration():
    pass

def test_asks_for_a_run_fixture(tiny_kuhn_league):
    pass
"""


def test_a_unit_test_that_starts_a_run_fails_with_the_marker_to_add(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess("-m", "unit or integration", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    assert (
        "test_suite.py::test_starts_a_run is a unit test and started a run (Runner.run): the unit tier "
        "starts no run, subprocess or Ray. Mark the test @pytest.mark.integration" in out
    )
    assert (
        "test_suite.py::test_asks_for_a_run_fixture is a unit test and uses the fixture tiny_kuhn_league"
        in out
    )


def test_each_test_is_in_one_tier(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(
        test_suite="""
import pytest

def test_unit(): pass

@pytest.mark.integration
def test_integration(): pass

@pytest.mark.slow
def test_slow(): pass
"""
    )
    tiers = {}
    for tier in ("unit", "integration", "slow"):
        result = pytester.runpytest_inprocess("-m", tier, "--collect-only", "-q", "-p", "no:cacheprovider")
        tiers[tier] = [line for line in result.outlines if "::" in line]
    assert tiers == {
        "unit": ["test_suite.py::test_unit"],
        "integration": ["test_suite.py::test_integration"],
        "slow": ["test_suite.py::test_slow"],
    }
