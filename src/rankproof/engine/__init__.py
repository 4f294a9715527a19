"""The executor seam: where independent pieces of work run, never what they compute.

Every caller that fans work out (target shards, embedding shards, many runs,
sweep points, judge calls) hands the engine a module-level function and a
list of items, and gets the results back **in the order of the items**,
whichever engine ran them. Seeds travel inside the items, so a result never
depends on which worker ran it or when: ``local`` with one worker, ``local``
with a pool, and ``ray`` give identical output.

``local`` runs in this process when ``workers`` is 1 (the default), on
threads for I/O-bound work (``kind="io"``: HTTP targets, judges) and on
spawned processes for CPU-bound work (``kind="cpu"``). ``ray`` (the ``ray``
extra) submits tasks to a cluster (``address``) or to a local one it starts
and stops itself.
"""

from rankproof.engine._executor import (
    ENGINES,
    Executor,
    Kind,
    executor_for,
    shards,
)
from rankproof.engine._local import LocalExecutor, cpu_count
from rankproof.engine._ray import RayExecutor

__all__ = [
    "ENGINES",
    "Executor",
    "Kind",
    "LocalExecutor",
    "RayExecutor",
    "cpu_count",
    "executor_for",
    "shards",
]
