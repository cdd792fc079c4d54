"""docs/deploy/pdi-verify.service and .timer: systemd accepts them, the service's hardening scores, its timer runs
often enough for the fixity alert, and its command finds damage.

Serving re-hashes only what is read; the fixity gauges of ``/metrics`` and the ``PdiFixityStale`` alert of
docs/reference/operate.md (a blob's latest check older than 40 days) need ``pdi verify`` run now and then: these
units run it once a month. The checks are those ``tests/test_deploy_systemd.py`` makes of pdi.service, reused.
"""

from __future__ import annotations

import datetime
import itertools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from pdi.archive import Archive
from test_deploy_backup_units import _exposure_is_low
from test_deploy_backup_units import _runnable_copies as _copies
from test_deploy_systemd import _analyze, _settings

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy"
SERVICE = DEPLOY / "pdi-verify.service"
TIMER = DEPLOY / "pdi-verify.timer"
#: docs/reference/operate.md's PdiFixityStale: time() - pdi_fixity_oldest_check_timestamp_seconds > 40 * 86400
STALE_DAYS = 40


def _runnable_copies(tmp_path: Path) -> tuple[Path, Path]:
    return _copies(tmp_path, (SERVICE, TIMER))


def test_systemd_analyze_verify_accepts_the_timer_and_its_service(tmp_path: Path) -> None:
    service, timer = _runnable_copies(tmp_path)
    run = _analyze("verify", str(timer), str(service), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "pdi-verify" not in run.stderr, run.stderr


def test_the_verify_service_exposure_is_low(tmp_path: Path) -> None:
    service, _ = _runnable_copies(tmp_path)
    _exposure_is_low(service, tmp_path)


def test_the_units_agree_with_pdi_service_and_the_fixity_alert() -> None:
    """The check runs as pdi.service's dynamic user on the archive it serves, may write its catalog (each blob's
    check is recorded there), and starts often enough that no blob's check is older than the alert's 40 days."""
    verify = _settings(SERVICE.read_text())
    served = _settings((DEPLOY / "pdi.service").read_text())
    backup = _settings((DEPLOY / "pdi-backup.service").read_text())
    # pdi.service's dynamic user is named after its unit (it sets no User=), as the backup's is
    assert verify["DynamicUser"] == ["yes"] and verify["User"] == backup["User"] == ["pdi"]
    assert verify["Type"] == ["oneshot"]
    assert verify["Environment"] == served["Environment"]
    assert verify["EnvironmentFile"] == backup["EnvironmentFile"]  # the secrets file (a PostgreSQL archive's URL)
    archive = served["Environment"][0].removeprefix("PDI_ARCHIVE=")
    assert verify["StateDirectory"][0].split() == served["StateDirectory"][0].split()
    assert any(archive.startswith(f"{p}/") for p in verify["ReadWritePaths"][0].split()), archive
    assert shlex.split(verify["ExecStart"][0]) == ["/opt/pdi/bin/pdi", "verify"]
    timer = _settings(TIMER.read_text())
    assert timer["Unit"] == ["pdi-verify.service"] and timer["Persistent"] == ["true"]
    run = _analyze("calendar", "--iterations=13", timer["OnCalendar"][0], cwd=DEPLOY)
    assert run.returncode == 0, run.stderr
    elapses = [datetime.datetime.strptime(" ".join(found.split()[1:3]), "%Y-%m-%d %H:%M:%S")
               for found in re.findall(r"(?:Next elapse|Iter\. #\d+):\s+(\w{3} \S+ \S+)", run.stdout)]
    assert len(elapses) == 13, run.stdout
    delay = _seconds(timer["RandomizedDelaySec"][0])
    # the longest time between two runs: the longest gap between elapses, one run late by the whole delay
    longest = max(b - a for a, b in itertools.pairwise(elapses)) + datetime.timedelta(seconds=delay)
    assert longest < datetime.timedelta(days=STALE_DAYS), longest


def _seconds(span: str) -> int:
    """A systemd time span of the forms these units use (``6h``, ``30min``, ``90s``, ``2d``) in seconds."""
    found = re.fullmatch(r"(\d+)(s|min|h|d)", span)
    assert found is not None, span
    return int(found.group(1)) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[found.group(2)]


def _pdi(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from pdi.cli import main; main()", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_services_command_records_each_check_and_fails_on_damage(tmp_path: Path) -> None:
    """ExecStart run as written (its archive under tmp): on a whole archive it exits 0 and records the check in the
    catalog (what the fixity gauges read); a byte flipped in a blob makes it exit 3 naming the name, so the unit
    fails (systemctl is-failed)."""
    argv = shlex.split(_settings(SERVICE.read_text())["ExecStart"][0])
    archive = tmp_path / "archive"
    # the pdi under test (conftest.py puts the checkout's src on PYTHONPATH; none for the installed wheel), nothing else
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PDI_ARCHIVE": str(archive)}
    for args in (["init"], ["series", "add", "verify.example.us"]):
        assert _pdi(*args, env=env).returncode == 0
    # more than 64 KiB, so a blob file of its own (a smaller one is kept in the catalog's pages)
    text = b"".join(b"line %d the monthly check reads again\n" % n for n in range(5000))
    (tmp_path / "kept.txt").write_bytes(text)
    name = _pdi("add", "--series", "verify.example.us", str(tmp_path / "kept.txt"), env=env).stdout.strip()
    whole = _pdi(*argv[1:], env=env)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    with Archive.open(archive) as opened:
        blobs, summary = opened.fixity_summary()  # what /metrics's fixity gauges read
    assert (blobs, summary.whole, summary.damaged) == (1, 1, 0) and summary.oldest is not None
    [blob] = [p for p in (archive / "blobs").rglob("*") if p.is_file() and p.stat().st_size == len(text)]
    data = bytearray(blob.read_bytes())
    data[10] ^= 0x01
    blob.chmod(0o600)
    blob.write_bytes(bytes(data))
    damaged = _pdi(*argv[1:], env=env)
    assert damaged.returncode == 3, damaged.stdout + damaged.stderr
    assert any(line.startswith("altered") and name in line for line in damaged.stdout.splitlines()), damaged.stdout
    with Archive.open(archive) as opened:
        assert opened.fixity_summary()[1].damaged == 1
