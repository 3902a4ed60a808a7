"""Package metadata for light_league (tool settings live in pyproject.toml)."""

from setuptools import find_packages, setup

setup(
    name="light_league",
    version="0.1.0",
    description="Population-based multi-agent RL: AlphaStar-style leagues, PSRO-Nash evaluation, MAPPO, Ray.",
    python_requires=">=3.11",
    packages=find_packages(include=["light_league", "light_league.*", "envs", "envs.*"]),
    include_package_data=True,
    # Ranges, so that the package installs beside others; the tested set is constraints.txt
    # (pip install -c constraints.txt -e ".[dev]", as .ci/run does).
    install_requires=[
        "torch>=2.4,<3",
        "ray>=2.40,<3",
        "numpy>=1.26",
        "scipy>=1.11",
        "gymnasium>=1.0",
        "pettingzoo>=1.24",
        "pyyaml>=6.0",
        "pydantic>=2.6",
        "tensorboard>=2.15",
        "filelock>=3.13",
        "rich>=13.0",
        "matplotlib>=3.8",
        "pillow>=10.0",
        "psutil>=5.9",
    ],
    extras_require={
        # open_spiel's own LP solver (used as a reference in tests and bench) needs cvxpy with ECOS;
        # its PyTorch NFSP (bench/openspiel_nfsp.py, the neural peer) needs dm-tree
        "openspiel": ["open-spiel>=1.5", "cvxpy>=1.4", "ecos>=2.0", "dm-tree>=0.1.8"],
        "wandb": ["wandb>=0.17"],
        # PettingZoo's classic games (docs/plugins.md's pettingzoo.classic.rps_v2 example) import pygame
        "pettingzoo": ["pettingzoo[classic]>=1.24"],
        # bench/rllib_comparison.py only (RLlib's PPO on OpenSpiel's kuhn_poker); not in "dev"
        "rllib": ["ray[rllib]>=2.40,<3", "open-spiel>=1.5"],
        "dev": [
            "pytest>=8.0",
            "pytest-timeout>=2.3",
            "ruff>=0.5",
            "mypy>=1.10",
            "types-PyYAML",
            "open-spiel>=1.5",
            "cvxpy>=1.4",
            "ecos>=2.0",
            "dm-tree>=0.1.8",
            "wandb>=0.17",
        ],
    },
    entry_points={
        "console_scripts": ["light-league = light_league.cli:main"],
        "light_league.schedulers": [],
    },
)
