"""Example plugins for light_league (run from the repository root so that ``examples`` imports)."""
