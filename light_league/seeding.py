"""Every seed of a run derived from the run seed, in one place.

``derive_seed(seed, "learner", "main_agent_0")`` hashes a path of names and indices into a seed
(strings through CRC-32) with numpy's ``SeedSequence``, so the scheduler, each learner, each
worker and each of a worker's episode loops get independent streams that repeat under the same
run seed.
"""

from __future__ import annotations

import zlib

import numpy as np

#: the path part of a rollout worker's evaluation stream (a number, so that no learner id, hashed
#: to a number by CRC-32, is likely to name the same stream)
EVALUATION_STREAM = 7919


def derive_seed(seed: int, *parts: int | str, bits: int = 31) -> int:
    """A ``bits``-bit seed (31: a non-negative int32; 32: the full word) from the run seed and a
    path of names / indices."""
    ints = [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]
    word = int(np.random.SeedSequence([seed, *ints]).generate_state(1)[0])
    if bits == 32:
        return word
    if bits != 31:
        raise ValueError(f"bits must be 31 or 32, got {bits}")
    return word & 0x7FFFFFFF
