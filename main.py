"""Entry point: ``python main.py --config expr_configs/league.yaml`` (see README.md)."""

import sys

from light_league.cli import main

if __name__ == "__main__":
    sys.exit(main())
