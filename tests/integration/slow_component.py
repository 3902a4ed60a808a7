"""A component whose call takes a while, for the stop tests (test_signals.py). A module of the
repository, so that Ray workers (whose path holds the driver's working directory) import it."""

from __future__ import annotations

import time


class Waiter:
    def ready(self) -> str:
        return "up"

    def wait(self, seconds: float) -> str:
        time.sleep(seconds)
        return "waited"
