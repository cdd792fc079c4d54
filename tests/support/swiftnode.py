"""A throw-away OpenStack Swift node speaking S3, for tests and benchmarks.

Runs Debian's Swift servers (packages ``swift-proxy``, ``swift-object``,
``swift-container``, ``swift-account``, installed by ``scripts/bootstrap
--dev``) from a fresh temporary directory: a one-replica ring of one device
directory, the account, container and object servers and the proxy on free
loopback ports, the proxy's pipeline with ``s3api`` in front of ``tempauth``
(whose user ``test:tester`` with key ``testing`` is the S3 access key and
secret). Everything is deleted on :meth:`TemporarySwift.stop`. The servers
run as the current user (as root too: Swift then keeps root, which is
fine for a directory only it uses).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from pdi._ports import free_port
from pdi.errors import StoreError

ACCESS_KEY = "test:tester"
SECRET_KEY = "testing"

_SERVERS = ("object", "container", "account")

_PROXY = """\
[DEFAULT]
swift_dir = {dir}
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
user = {user}
log_level = WARNING

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
# one node of each server: one that failed (stopped by a test) must not be left out for a minute once it is back
error_suppression_interval = 0

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:cache]
use = egg:swift#memcache

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:s3api]
use = egg:swift#s3api

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
"""

_SERVER = """\
[DEFAULT]
swift_dir = {dir}
devices = {dir}/devices
mount_check = false
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
user = {user}
log_level = WARNING

[pipeline:main]
pipeline = {kind}-server

[app:{kind}-server]
use = egg:swift#{kind}
"""

_SWIFT_CONF = """\
[swift-hash]
swift_hash_path_suffix = pdi-test
swift_hash_path_prefix = pdi-test

[storage-policy:0]
name = Policy-0
default = yes
"""


def _need(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        raise StoreError(
            f"{program} not found: run scripts/bootstrap --dev, which installs Debian's swift-proxy,"
            " swift-object, swift-container and swift-account"
        )
    return found


class TemporarySwift:
    """A one-node Swift with the S3 API, for one test session."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="pdi-swift-"))
        self.ports = {kind: free_port() for kind in (*_SERVERS, "proxy")}
        self._processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def endpoint(self) -> str:
        """The S3 endpoint URL (``AWS_ENDPOINT_URL``)."""
        return f"http://127.0.0.1:{self.ports['proxy']}"

    def environment(self) -> dict[str, str]:
        """The variables an S3 client reads to reach this node."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def _configure(self) -> None:
        user = pwd.getpwuid(os.geteuid()).pw_name
        values = {"dir": str(self.directory), "user": user}
        (self.directory / "devices" / "d1").mkdir(parents=True)
        (self.directory / "swift.conf").write_text(_SWIFT_CONF)
        builder = _need("swift-ring-builder")
        for kind in _SERVERS:
            port = self.ports[kind]
            ring = str(self.directory / f"{kind}.builder")
            for args in (
                ["create", "4", "1", "0"],
                ["add", "--region", "1", "--zone", "1", "--ip", "127.0.0.1", "--port", str(port),
                 "--device", "d1", "--weight", "1"],
                ["rebalance"],
            ):
                result = subprocess.run([builder, ring, *args], capture_output=True, text=True, check=False)
                if result.returncode not in (0, 1):  # 1: a warning (a one-device ring is not balanced)
                    raise StoreError(f"swift-ring-builder {' '.join(args)} failed: {result.stdout}{result.stderr}")
            (self.directory / f"{kind}-server.conf").write_text(_SERVER.format(kind=kind, port=port, **values))
        (self.directory / "proxy-server.conf").write_text(_PROXY.format(port=self.ports["proxy"], **values))

    def start(self, timeout: float = 120.0) -> TemporarySwift:
        """Configure and start the servers, and wait until the proxy answers S3 requests; returns self."""
        self._configure()
        for kind in (*_SERVERS, "proxy"):
            self._spawn(kind)
        self._wait(timeout)
        return self

    def _spawn(self, kind: str) -> None:
        program = _need(f"swift-{kind}-server")
        log = open(self.directory / f"{kind}.log", "ab")  # noqa: SIM115 - the server's for its lifetime
        try:
            self._processes[kind] = subprocess.Popen(
                [program, str(self.directory / f"{kind}-server.conf")],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        finally:
            log.close()

    def stop_server(self, kind: str) -> None:
        """Stop one server (``proxy``, ``object``, ``container``, ``account``): the store fails as when it dies."""
        process = self._processes.pop(kind)
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def start_server(self, kind: str, timeout: float = 120.0) -> None:
        """Start again a server :meth:`stop_server` stopped, and wait until it takes connections and the proxy
        answers S3 requests."""
        self._spawn(kind)
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.ports[kind]), timeout=1).close()
                break
            except OSError:
                if self._processes[kind].poll() is not None or time.monotonic() > deadline:
                    raise StoreError(f"swift-{kind}-server did not start again: {self._log(kind)}") from None
                time.sleep(0.2)
        self._wait(max(1.0, deadline - time.monotonic()))

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for kind, process in self._processes.items():
                if process.poll() is not None:
                    raise StoreError(f"swift-{kind}-server exited: {self._log(kind)}")
            if self._answers():
                return
            if time.monotonic() > deadline:
                raise StoreError(f"Swift did not answer within {timeout:.0f} s: {self._log('proxy')}")
            time.sleep(0.3)

    def _answers(self) -> bool:
        """Whether the proxy and the servers behind it answer an S3 request (a listing of the buckets)."""
        import boto3
        import botocore.exceptions
        from botocore.config import Config

        client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
            config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=10),
        )
        try:
            client.list_buckets()
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
            return False
        return True

    def _log(self, kind: str) -> str:
        try:
            return (self.directory / f"{kind}.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop the servers and delete the directory."""
        try:
            for process in self._processes.values():
                process.terminate()
            for process in self._processes.values():
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self._processes = {}
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> TemporarySwift:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
