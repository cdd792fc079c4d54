"""docs/deploy/pdi-backup.service and .timer: systemd accepts them, the service's hardening scores, and its command backs up.

The operator's guide (docs/how-to/operator-guide.md) installs them beside
pdi.service; the checks are those ``tests/test_deploy_systemd.py`` makes of
that unit, reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from test_deploy_systemd import _analyze, _settings

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy"
SERVICE = DEPLOY / "pdi-backup.service"
TIMER = DEPLOY / "pdi-backup.timer"
EXPOSURE_AT_MOST = 2.0


def _runnable_copies(tmp_path: Path, units: tuple[Path, Path] = (SERVICE, TIMER)) -> tuple[Path, Path]:
    """Both ``units`` (a service and its timer) copied into ``tmp_path``, ExecStart's /opt/pdi/bin/pdi replaced by a
    binary that exists here (verify checks it does)."""
    service, timer = tmp_path / units[0].name, tmp_path / units[1].name
    service.write_text(units[0].read_text().replace("/opt/pdi/bin/pdi", "/bin/true"))
    timer.write_text(units[1].read_text())
    return service, timer


def _exposure_is_low(service: Path, cwd: Path) -> None:
    """``systemd-analyze security --offline=yes`` scores ``service`` at most :data:`EXPOSURE_AT_MOST`."""
    run = _analyze("security", "--offline=yes", f"--threshold={int(EXPOSURE_AT_MOST * 10)}", str(service), cwd=cwd)
    level = re.search(rf"Overall exposure level for {re.escape(service.name)}: (\d+\.\d)", run.stdout)
    assert level is not None, run.stdout + run.stderr
    assert float(level.group(1)) <= EXPOSURE_AT_MOST, run.stdout
    assert run.returncode == 0, run.stdout + run.stderr


def test_systemd_analyze_verify_accepts_the_timer_and_its_service(tmp_path: Path) -> None:
    service, timer = _runnable_copies(tmp_path)
    run = _analyze("verify", str(timer), str(service), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "pdi-backup" not in run.stderr, run.stderr


def test_systemd_analyze_verify_catches_a_broken_timer(tmp_path: Path) -> None:
    service, timer = _runnable_copies(tmp_path)
    timer.write_text(timer.read_text().replace("Persistent=true", "Persistent=true\nOnCalender=daily"))
    run = _analyze("verify", str(timer), str(service), cwd=tmp_path)
    assert "OnCalender" in run.stderr


def test_the_backup_service_exposure_is_low(tmp_path: Path) -> None:
    service, _ = _runnable_copies(tmp_path)
    _exposure_is_low(service, tmp_path)


def test_the_units_agree_with_pdi_service() -> None:
    """The backup runs as pdi.service's dynamic user (named after its unit), on the archive it serves, once a day."""
    backup = _settings(SERVICE.read_text())
    served = _settings((DEPLOY / "pdi.service").read_text())
    assert backup["DynamicUser"] == ["yes"] and backup["User"] == ["pdi"]
    assert backup["Type"] == ["oneshot"]
    assert backup["Environment"] == served["Environment"]
    archive = served["Environment"][0].removeprefix("PDI_ARCHIVE=")
    state = backup["StateDirectory"][0].split()
    assert served["StateDirectory"][0] in state
    dest = shlex.split(backup["ExecStart"][0])[-1]
    for path in (archive, dest):
        assert any(path.startswith(f"/var/lib/{directory}/") for directory in state), path
        assert any(path.startswith(f"{p}/") for p in backup["ReadWritePaths"][0].split()), path
    timer = _settings(TIMER.read_text())
    assert timer["Unit"] == ["pdi-backup.service"] and timer["Persistent"] == ["true"]
    run = _analyze("calendar", timer["OnCalendar"][0], cwd=DEPLOY)
    assert run.returncode == 0 and "Next elapse" in run.stdout, run.stderr


def _pdi(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from pdi.cli import main; main()", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_services_command_backs_up_and_the_backup_restores(tmp_path: Path) -> None:
    """ExecStart run as written (its archive and destination moved under tmp): a second run is incremental."""
    argv = shlex.split(_settings(SERVICE.read_text())["ExecStart"][0])
    assert argv[:2] == ["/opt/pdi/bin/pdi", "backup"]
    dest = tmp_path / argv[-1].lstrip("/")
    # the pdi under test (conftest.py puts the checkout's src on PYTHONPATH; none for the installed wheel), nothing else
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PDI_ARCHIVE": str(tmp_path / "archive")}
    for args in (["init"], ["series", "add", "backup.example.us"]):
        assert _pdi(*args, env=env).returncode == 0
    text = b"a deposit the timer's backup keeps\n" * 4000
    (tmp_path / "kept.txt").write_bytes(text)
    name = _pdi("add", "--series", "backup.example.us", str(tmp_path / "kept.txt"), env=env).stdout.strip()
    for _ in range(2):
        done = _pdi(*argv[1:-1], str(dest), env=env)
        assert done.returncode == 0, done.stderr
    assert json.loads((dest / "pdi-backup.json").read_text())["finished_at"]
    restored = tmp_path / "restored"
    assert _pdi("restore", str(dest), "--to", str(restored), env=env).returncode == 0
    checked = _pdi("verify", "--archive", str(restored), env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    got = subprocess.run([sys.executable, "-m", "pdi", "get", name, "-o", "-", "--archive", str(restored)],
                         capture_output=True, timeout=120, check=True).stdout
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(text).hexdigest()
