"""Chunks for truncated backpropagation through time, over the :class:`SampleBatch` layout.

A recurrent learner trains on sequences, not on shuffled samples. Each stream of a batch (one
agent's decisions in time order, possibly several episodes, ``dones`` at each episode's last
decision) is cut into **chunks**: a chunk starts at every episode's first entry and every
``chunk_length`` entries after it, so a chunk never crosses an episode boundary and no hidden
state has to be reset inside one. Each chunk is trained from the hidden state the rollout stored
at its first entry (zero at an episode's start); gradients stop at a chunk's start. An episode no
longer than ``chunk_length`` is therefore one chunk, trained exactly as the whole sequence would
be.

The reference (``onpolicy/utils/shared_buffer.py``, ``recurrent_generator``) cuts fixed windows of
``data_chunk_length`` steps over its flattened buffer and resets hidden states inside a window
with masks; windows there may start mid-episode where ours start at the episode. The stream's
first entry may continue an episode begun in an earlier batch: its chunks count from there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChunkIndex:
    """Where each valid entry of a ``(T, N)`` batch goes in ``(length, C)`` chunk arrays.

    Entries and chunks are in stream-major order (stream, then time)."""

    time: np.ndarray  #: (M,) time index of each valid entry in the batch
    stream: np.ndarray  #: (M,) its stream
    chunk: np.ndarray  #: (M,) its chunk
    offset: np.ndarray  #: (M,) its position in the chunk
    start_time: np.ndarray  #: (C,) time index of each chunk's first entry
    start_stream: np.ndarray  #: (C,) its stream
    length: int  #: entries of the longest chunk (the chunk arrays' first axis)

    @property
    def num_chunks(self) -> int:
        return int(self.start_time.size)


def chunk_index(valid: np.ndarray, dones: np.ndarray, chunk_length: int) -> ChunkIndex:
    """The chunks of the valid entries of ``(T, N)`` streams (see the module docstring)."""
    if chunk_length < 1:
        raise ValueError(f"chunk_length must be at least 1, got {chunk_length}")
    ok = np.asarray(valid, dtype=bool)
    done = np.asarray(dones, dtype=bool)
    if ok.ndim != 2 or done.shape != ok.shape:
        raise ValueError(f"valid and dones must share one (T, N) shape, got {ok.shape} and {done.shape}")
    t_idx = np.arange(ok.shape[0])[:, None]
    starts = np.zeros(ok.shape, dtype=bool)
    starts[0] = True
    starts[1:] = done[:-1]
    # position of each entry within its episode (the first entry of a stream counts as a start)
    last_start = np.maximum.accumulate(np.where(starts, t_idx, 0), axis=0)
    first = ok & ((t_idx - last_start) % chunk_length == 0)
    stream, time = np.nonzero(ok.T)  # stream-major order
    is_first = first.T[stream, time]
    chunk = np.cumsum(is_first) - 1
    start_time, start_stream = time[is_first], stream[is_first]
    offset = time - start_time[chunk]
    length = int(offset.max()) + 1 if offset.size else 0
    return ChunkIndex(time, stream, chunk, offset, start_time, start_stream, length)


def to_chunks(x: np.ndarray, index: ChunkIndex) -> np.ndarray:
    """``x`` (T, N, ...) as ``(index.length, C, ...)`` chunks, zero past each chunk's end."""
    arr = np.asarray(x)
    out = np.zeros((index.length, index.num_chunks, *arr.shape[2:]), dtype=arr.dtype)
    out[index.offset, index.chunk] = arr[index.time, index.stream]
    return out
