"""Throw-away servers for the tests and the benchmarks, kept out of the ``pdi`` package.

- :mod:`support.pgcluster`: a PostgreSQL cluster in a temporary directory
  (``TemporaryCluster``) and pgbouncer in front of one of its databases
  (``TemporaryBouncer``); :mod:`support.pgguard` ends each cluster (and its
  pgbouncer) when the process that started it dies without stopping it;
- :mod:`support.swiftnode`: a one-node OpenStack Swift speaking S3
  (``TemporarySwift``).

How it is imported: ``tests/`` is on ``sys.path`` (pytest's ``pythonpath``
in ``pyproject.toml`` puts it there, as it does ``src``), so tests say
``from support.pgcluster import TemporaryCluster``. A benchmark in ``bench/``
puts the same directory first on its path before importing it
(``sys.path.insert(0, str(ROOT / "tests"))``). The name is ``support`` and not
``tests.support`` because a package of our test tools (pywb) installs a
top-level ``tests`` package of its own in site-packages, which would shadow ours.
"""
