"""One real Dask LocalCluster per test module that counts on a cluster.

Starting a LocalCluster (a scheduler and worker processes, each importing Dask, pandas
and pyarrow) costs 10-15 s of CPU, and a test that counts a few hundred rows on it
costs well under one; so the tests of a module share one cluster, through a
module-scoped fixture that enters :func:`local_cluster`: started at the module's first
test that asks for it and closed when the module is done (not kept for the rest of the
session, whose other tests would share the machine with idle workers). It is a real
cluster: two worker processes, one thread each, so the files' partitions are computed
in other processes than the test's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def local_cluster() -> Iterator[object]:
    """A running ``distributed.LocalCluster`` of two worker processes, closed on exit
    (the test skips without the dask extra; CI=true refuses to run without it)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        yield cluster
