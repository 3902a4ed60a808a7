"""The examples the docs walk through, installed with the package: plugins named in a config as
``light_league.examples.<module>:<Class>``, and ``python -m light_league.examples.exported_policy``."""
