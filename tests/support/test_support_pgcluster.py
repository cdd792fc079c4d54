"""``TemporaryCluster(shared_buffers=…)``: the benchmark's cluster sized as a deployment would be."""

from __future__ import annotations

import psycopg
import pytest

from pdi.errors import StoreError
from support.pgcluster import TemporaryCluster


def test_a_cluster_started_with_shared_buffers_has_them() -> None:
    with TemporaryCluster(shared_buffers="48MB") as cluster, psycopg.connect(cluster.url()) as conn:
        # SHOW spells the setting as PostgreSQL reads it; pg_settings gives it in 8 kB pages: 48 MB is 6,144
        assert conn.execute("SHOW shared_buffers").fetchone() == ("48MB",)
        assert conn.execute("SELECT setting, unit FROM pg_settings WHERE name = 'shared_buffers'").fetchone() == (
            "6144", "8kB")


@pytest.mark.parametrize("value", ["6 GB", "6gb", "-1MB", "0", "lots", "6GB; fsync=on"])
def test_a_shared_buffers_postgresql_would_not_read_is_refused_before_anything_starts(value: str) -> None:
    with pytest.raises(StoreError, match=rf"shared_buffers '{value}' is not an amount of memory"):
        TemporaryCluster(shared_buffers=value)
