"""light_league: population-based multi-agent RL (league training, PSRO-Nash, MAPPO, Ray)."""

__version__ = "0.1.0"
