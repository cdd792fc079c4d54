"""``pdi serve``: the resolver over HTTP (:mod:`pdi.server`) on uvicorn, in one or several worker processes."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from typing import TYPE_CHECKING

import click

from pdi.archive.blobs.memo import DEFAULT_SECONDS as DEFAULT_MEMO_SECONDS
from pdi.archive.catalog.base import DEFAULT_CONNECTIONS
from pdi.cli.archive_cmd import archive_option, checked_base_url
from pdi.server.process.limits import (
    DEFAULT_ANSWER_MIB,
    DEFAULT_BODY_RATE,
    DEFAULT_BODY_SECONDS,
    DEFAULT_EVALUATIONS,
    DEFAULT_HEADER_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_QUEUE_SECONDS,
    DEFAULT_SEND_SECONDS,
    TIMEMAP_PAGE,
)

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.federation.authorities import RegistrySource
    from pdi.federation.naptr import NaptrFinder

#: Mebibytes of whole answers each worker keeps in memory unless told (pdi.server.process.cache).
DEFAULT_CACHE_MIB = 32


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--base-url", callback=checked_base_url,
              help="Public URL of the resolver (http:// or https://, with its host, and the path a proxy serves it at:"
              " https://library.example/pdi/), put in front of the locations N2Ls lists; the pages link under its"
              " path (default: from each request's Host, at its root).")
@click.option("--workers", type=click.IntRange(1, 64), show_default="one a core, at most 4",
              help="Worker processes, all serving the one socket; a worker that dies is replaced.")
@click.option("--cache-mib", default=DEFAULT_CACHE_MIB, show_default=True, type=click.IntRange(0, 1 << 20),
              help="MiB of whole N2R answers (of names with a format, up to 1 MiB each) each worker keeps "
              "in memory, and as many again of what never changes about names asked (their entity tag and "
              "N2L location, some 350 bytes a name); 0: none.")
@click.option("--evaluations", default=DEFAULT_EVALUATIONS, show_default=True, type=click.IntRange(1, 64),
              help="Expensive requests (N2R, N2C, /api/resolve, /api/cite, /view: they read a whole "
              "document) each worker serves at once; the others wait, cheap look-ups do not.")
@click.option("--answer-mib", default=DEFAULT_ANSWER_MIB, show_default=True, type=click.IntRange(1),
              help="MiB of large answers made in memory (a passage, a page; 1 MiB or more each) each worker sends "
              "at once; the next waits for room (--queue-seconds, then 503), however slowly their clients read. "
              "A client holding a quarter of it in answers it has not taken is refused its next at once.")
@click.option("--queue-seconds", default=DEFAULT_QUEUE_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), help="How long an expensive request may wait before it is answered 503.")
@click.option("--header-timeout", default=DEFAULT_HEADER_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), help="Seconds a client has to send a request's line and headers.")
@click.option("--send-timeout", default=DEFAULT_SEND_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="Seconds a client may take none of an answer's octets before its connection is dropped "
              "(nginx's send_timeout): a client that asks and never reads holds nothing for longer.")
@click.option("--body-timeout", default=DEFAULT_BODY_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), metavar="SECONDS",
              help=f"Seconds a request's body may take, and one more for every {DEFAULT_BODY_RATE} octets that "
              "arrive; a slower upload is cut off with 408, a token holder's too.")
@click.option("--max-upload-mib", type=click.IntRange(1), metavar="MIB",
              show_default="no bound but the disk's",
              help="The largest body the write API takes for a deposit, a version, a format or a batch (MiB): a "
              "larger one is refused (413) as its Content-Length is read, or as its octets pass the bound, and nothing "
              "of it is kept.")
@click.option("--max-connections", default=DEFAULT_MAX_CONNECTIONS, show_default=True,
              type=click.IntRange(min=1), help="Connections each worker holds at once; beyond them its requests "
              "are answered 503. One client (an IPv4 address or an IPv6 /64; not a --trusted-proxy) holds a quarter of "
              "them at most (at least 16).")
@click.option("--fixity-memo", "fixity_memo", default=DEFAULT_MEMO_SECONDS, show_default=True,
              type=click.FloatRange(min=0), metavar="SECONDS",
              help="How long chunks of a stored file that one read verified are trusted by the next reads, "
              "while the file is unchanged (its inode, size, mtime and ctime); a file verified whole by one worker "
              "is trusted by every worker; a file changed within the kernel's writeback delay and 10 s (45 s by "
              "default) is hashed at every read, as is any file on tmpfs or ramfs; 0: hash every chunk of every read.")
@click.option("--replay-port", type=click.IntRange(0, 65535), show_default="--port + 1 (any free port with --port 0)",
              help="Port of the replay origin, where archived web pages are served (same host, same workers).")
@click.option("--replay-origin", help="Public URL of the replay origin, framed by /view "
              "(default: each request's host at --replay-port).")
@click.option("--replay-scripts", is_flag=True, help="Let archived pages' own scripts run when replayed "
              "(only in the viewer's sandboxed frame, of an opaque origin, fetching nothing, but still able to reach a "
              "host by WebRTC or a name looked up: for pages you trust; a page opened in a window of its own is sent "
              "to the viewer's page); default: none runs.")
@click.option("--oai-admin-email", metavar="ADDRESS", help="The address OAI-PMH's Identify gives harvesters "
              "(/oai; default: postmaster@ this host).")
@click.option("--timemap-page", default=TIMEMAP_PAGE, show_default=True, type=click.IntRange(1, 100_000),
              metavar="N", help="Captures (documents) of a URL, or versions of a document, one Memento TimeMap "
              "page holds the mementos of: a longer TimeMap comes in pages linked rel=next and rel=prev.")
@click.option("--db-connections", default=DEFAULT_CONNECTIONS, show_default=True, type=click.IntRange(1, 1000),
              help="Catalog connections each worker keeps at most, in a pool (PostgreSQL; through pgbouncer,"
                   " use transaction pooling): a request's transaction takes one and waits while all are taken.")
@click.option("--read-url", envvar="PDI_READ_URL", show_envvar=True, metavar="URL",
              help="A streaming replica of the PostgreSQL archive (a postgresql:// URL): resolution, listings, search"
                   " and every other read go there, deposits and every other write to --archive (the primary). A"
                   " process reads back at once what it wrote, and a name the replica does not have yet is asked of"
                   " the primary (pdi docs how-to/postgresql).")
@click.option("--tsa", metavar="URL",
              help="An RFC 3161 time-stamping authority: /api/manifest.tsr then answers a timestamp of the manifest"
                   " page /api/manifest answers to the same query (asked once a page, then kept).")
@click.option("--indexer", is_flag=True,
              help="Also run `pdi index --watch` in a process of its own, making the full-text passages "
              "large deposits left to the catalog's queue (any number of resolvers and indexers may share it). Refused "
              "(exit 8) when this user may only read the archive (a member of its group, or on media it may not write): its "
              "owner drains the queue.")
@click.option("--registry", "registries", multiple=True, metavar="FILE|URL",
              help="A signed registry of series and their resolvers (the JWS /.well-known/pdi-registry serves), "
              "checked against --registry-key: a name of a series this archive does not hold is sent on to its "
              "resolver. Repeatable; the archive's own registry.json is read first. One issued before the newest "
              "loaded from the same FILE|URL (recorded in the archive, by any resolver on it) is refused: a replay; "
              "pdi registry forget FILE|URL accepts an older one on purpose.")
@click.option("--registry-key", metavar="JWK|FILE|URL",
              help="The public key (a JWK or JWK set, inline, in a file or at a URL: /api/keys) every --registry "
              "must be signed with; a registry it does not verify is refused. Only with --registry.")
@click.option("--dns", metavar="HOST:PORT",
              help="A DNS server to ask for the NAPTR records (RFC 3404) of a series this archive does not "
              "hold: the resolvers they name come after the registries' (the only ones when no registry names the "
              "series).")
@click.option("--dns-private", is_flag=True,
              help="Ask a resolver the DNS names at a loopback, private or link-local address too (a private "
              "network's, or tests'); without it such a resolver is left out: a stranger's DNS zone could make "
              "this resolver probe, and send readers into, its own network. Only with --dns.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How pdi serve logs to standard error: text (uvicorn's warnings and errors), or json: one "
              "JSON object a line, each error and each request with its request id (X-Request-Id).")
@click.option("--log-file", metavar="FILE", help="Write the log records (--log-format) to FILE instead of standard "
              "error; SIGHUP reopens it (after a rotation by renaming).")
@click.option("--access-log", metavar="FILE|-", help="Append a line for each request in the Common Log Format to "
              "FILE (- for standard output); SIGHUP reopens it (after a rotation by renaming).")
@click.option("--metrics-token", envvar="PDI_METRICS_TOKEN", show_envvar=True, metavar="TOKEN",
              help="Who may read the Prometheus metrics at /metrics: whoever sends Authorization: Bearer TOKEN "
              "(better given in the environment than on a command line others can read); without it, clients on "
              "this machine's loopback addresses not forwarded by a proxy.")
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS|NETWORK",
              help="A reverse proxy (127.0.0.1, ::1, 10.0.0.0/8) whose X-Forwarded-Proto, -Host, -Port and -For "
              "fields say the scheme, host and client of the request it forwards: the URLs pdi makes name them, and "
              "a cookie set over https is Secure. Repeatable; default: none, and from anyone else these fields "
              "are ignored (pdi docs reference/deploy).")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN|*|none",
              show_default="*",
              help="Whose scripts may read the public answers (RFC 2169's services, the JSON read API, Memento, "
              "OAI-PMH, manifests, /.well-known/; CORS): * any origin's, none no other origin's, or only "
              "ORIGIN's (https://catalogue.example.edu; repeatable). The write API is never open to other origins "
              "(pdi docs reference/resolver).")
@archive_option
def serve_cmd(
    host: str, port: int, base_url: str | None, workers: int | None, cache_mib: int, evaluations: int,
    answer_mib: int, queue_seconds: float, header_timeout: float, send_timeout: float, body_timeout: float,
    max_upload_mib: int | None, max_connections: int, fixity_memo: float,
    replay_port: int | None, replay_origin: str | None, replay_scripts: bool, oai_admin_email: str | None,
    timemap_page: int, db_connections: int, read_url: str | None, tsa: str | None, indexer: bool,
    registries: tuple[str, ...], registry_key: str | None, dns: str | None, dns_private: bool, log_format: str,
    log_file: str | None,
    access_log: str | None, metrics_token: str | None, trusted_proxies: tuple[str, ...],
    cors_origins: tuple[str, ...], archive: str,
) -> None:
    """Serve the archive: RFC 2169 /uri-res/N2R?urn:pdi:… and friends, /api/… (writes need a token), and a viewer at /.

    Also Memento (RFC 7089) TimeGates and TimeMaps at /timegate/URL and
    /timemap/link/URL (a captured URL, or a document's generic name; in
    pages of --timemap-page captures), and
    an OAI-PMH 2.0 endpoint at /oai for library harvesters.

    A # in a name travels as %23 in an RFC 2169 query (a % before 23 or 25
    as %25). --port 0 takes a free port and says which. Stop with Ctrl-C
    (or SIGTERM): every worker finishes the requests in hand first, for up
    to 5 s; one still at work after that (a request that never ends) is
    ended, 7 s after the signal at the latest, the log saying which worker
    and where it was, and pdi serve exits 1.
    A stranger cannot starve other readers: expensive requests run a few
    at a time (--evaluations), a slow or silent client is disconnected
    (--header-timeout), a slow upload cut off (--body-timeout), a deposit
    past --max-upload-mib refused, one that
    reads none of its answer dropped (--send-timeout), and
    connections are capped (--max-connections).
    Memory is bounded by --workers times (--evaluations documents at once,
    plus --answer-mib of large answers being sent, plus --cache-mib). On PostgreSQL each worker keeps a pool of at most
    --db-connections catalog connections (and as many to --read-url's
    replica, which the reads go to). Archived web pages (captures, MHTML, HTML) are
    replayed from a second origin, --replay-port (default --port + 1), under
    a Content-Security-Policy that loads nothing from the network.
    Every read checks the octets it sends against their SHA-256, but a
    worker trusts for --fixity-memo seconds the chunks of a stored file it
    has already checked (or a file any worker has checked whole), while the
    file is unchanged, and sends them with sendfile.
    For operators: /healthz (alive), /readyz (catalog and blob store
    reachable), Prometheus metrics of all workers at /metrics
    (--metrics-token), JSON logs (--log-format json), an access log
    (--access-log), the replay origin's requests counted and logged too;
    SIGHUP reopens the access log and --log-file (pdi docs how-to/operate).
    Behind a reverse proxy that ends TLS, name it with --trusted-proxy
    (pdi docs reference/deploy; the nginx site: pdi docs deploy/nginx.conf;
    all the deployment files: pdi docs deploy --to DIR).
    """
    from collections.abc import Callable

    from starlette.types import ASGIApp

    from pdi._workdirs import WorkFolder
    # NumPy's OpenBLAS without a thread pool of its own, before NumPy is imported (preload): a thread that does not
    # block signals would take the ones pdi serve holds until it acts on them (run.hold_signals); pdi asks NumPy
    # for no linear algebra a pool would speed up
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from pdi.archive import Archive
    from pdi.errors import ParseError, PDIError
    from pdi.server import ReplaySite, create_app
    from pdi.server.http.cors import CrossOrigin
    from pdi.server.http.forwarded import TrustedForwarding, TrustedProxies
    from pdi.server.http.metrics import MULTIPROC_ENV
    from pdi.server.process.limits import WorkLimits
    from pdi.server.process.observe import AccessLog, Observe, configure_logging
    from pdi.server.process.origins import ByPort
    from pdi.server.process.run import (
        BACKLOG,
        default_workers,
        hold_signals,
        listening_socket,
        serve,
    )
    from pdi.server.replay.origin import create_replay_app
    from pdi.uri import URI

    # every worker counts in its own files of this private directory and /metrics sums them; prometheus_client
    # reads the variable when it is first imported, which is after this (pdi.server.http.metrics.counters)
    # (a server killed outright leaves it: the next one started removes it, pdi._workdirs)
    counts = WorkFolder("pdi-serve-metrics-")
    os.environ[MULTIPROC_ENV] = counts.name
    click.get_current_context().call_on_close(counts.cleanup)
    if oai_admin_email is not None:
        from pdi.server.protocol.memento_oaipmh import check_admin_email

        check_admin_email(oai_admin_email)  # here, not in each worker
    # refused here, before anything is served
    sources, finder = _federation(registries, registry_key, dns, dns_private, archive=archive, read_url=read_url)
    try:
        trusted = TrustedProxies.parse(trusted_proxies)
    except ParseError as exc:
        raise click.BadParameter(exc.reason, param_hint="--trusted-proxy") from None
    try:
        cors = CrossOrigin.parse(cors_origins)
    except ParseError as exc:
        raise click.BadParameter(exc.reason, param_hint="--cors-origin") from None
    # a log that cannot be written is a usage mistake, said as pdi get -o says one in a folder that is not there
    # (one line, exit 2), before anything listens
    try:
        log = AccessLog(access_log) if access_log is not None else None
        own_logging = configure_logging(log_format, log_file)
    except PDIError as exc:
        click.echo(f"pdi: {exc}", err=True)
        click.get_current_context().exit(2)
    count = workers if workers is not None else default_workers()
    what = " for the replay origin (--replay-port, where archived web pages are served)"
    if replay_port is None:
        replay_port = 0 if port == 0 else port + 1
        if replay_port > 65535:
            raise click.BadParameter("--port 65535 leaves no next port for replay: give --replay-port", param_hint="--port")
        if port != 0:
            what = f" for the replay origin (--port {port} + 1, where archived web pages are served)"
    listener = listening_socket(host, port, instead="; give another --port")
    bound = listener.getsockname()[1]
    try:
        replay_listener = listening_socket(host, replay_port, what=what, instead="; give another --replay-port")
    except BaseException:
        listener.close()
        raise
    replay_bound = replay_listener.getsockname()[1]
    resolver_origin = None
    if base_url is not None:
        parsed = URI.parse(base_url)
        if parsed.scheme and parsed.host:
            resolver_origin = f"{parsed.scheme}://{parsed.host}" + (f":{parsed.port}" if parsed.port else "")
    site = ReplaySite(replay_origin, replay_bound, replay_scripts)
    # one for all the workers: by it the resolver knows itself under any name (pdi.server.protocol.elsewhere)
    token = secrets.token_hex(16)

    read_only: list[bool] = []  # whether this user may only read the archive (its group's, read-only media)
    # made before the workers are forked, so that each maps the same memory: a blob file one worker has verified
    # whole is sent by any with sendfile (pdi.archive.blobs.memo.SharedFixity)
    shared = None
    if fixity_memo > 0 and count > 1:
        from pdi.archive.blobs.memo import SharedFixity

        shared = SharedFixity()

    def make_app() -> ASGIApp:
        work = WorkLimits(evaluations, queue_seconds, answer_mib << 20)
        resolver = create_app(archive, base_url=base_url, limits=work, cache_bytes=cache_mib << 20, replay=site,
                              oai_admin_email=oai_admin_email, fixity_memo_seconds=fixity_memo,
                              fixity_shared=shared,
                              connections=db_connections, read_url=read_url, body_seconds=body_timeout,
                              timemap_page=timemap_page, registries=sources, dns=finder, tsa=tsa,
                              access_log=log, json_logs=log_format == "json", metrics_token=metrics_token,
                              max_upload=None if max_upload_mib is None else max_upload_mib << 20,
                              resolver_token=token, cors=cors)
        read_only.append(resolver.state.archive.read_only)
        if indexer:
            _refuse_indexer(resolver.state.archive)
        replay = create_replay_app(archive, archive=resolver.state.archive, resolver_origin=resolver_origin,
                                   resolver_port=bound, scripts=replay_scripts, limits=work,
                                   resolver_base=base_url if resolver_origin is not None else None)
        observed = Observe(replay, access=log, json_logs=log_format == "json", metrics=False)
        both = ByPort(resolver, observed, replay_bound)
        return TrustedForwarding(both, trusted) if trusted else both

    make: Callable[[], ASGIApp]
    if count == 1:
        app = make_app()
        make = lambda: app  # noqa: E731
    else:  # each worker opens the archive itself; a missing or broken one is one error here, not one a worker
        opened = Archive.open(archive, read_url=read_url)
        read_only.append(opened.read_only)
        try:
            if indexer:
                _refuse_indexer(opened)
        finally:
            opened.close()
        make = make_app
    shown = f"[{host}]" if ":" in host else host
    plural = "s" if count > 1 else ""
    from pdi.archive.catalog.opening import shown_location

    named = shown_location(str(archive))  # a PostgreSQL URL's password never goes to a log
    said = (f"pdi: serving {named} at http://{shown}:{bound}/ (replay at http://{shown}:{replay_bound}/) "
            f"with {count} worker{plural} (Ctrl-C stops)")
    if read_only[0]:
        said += (f"; read-only: this user may read {named}, not write it (a member of its group, or a read-only"
                 " file system), so each write is refused (503)")
    in_memory = any(source.memory_only is not None for source in sources)
    if in_memory:  # said once, here: each worker knows it from the first load, made before they were forked
        said += ("; the newest registry each --registry was issued is kept by each worker alone, not in the archive,"
                 " which it may only read: an older one is refused until the worker stops, not after a restart")
    for each in (listener, replay_listener):  # before the line that says so: a connection asked for once it is
        each.listen(BACKLOG)  # read waits in the backlog while the workers are made, rather than being refused
    from pdi.server.process.warm import preload

    preload()  # before the fork: every worker's first answers find their evaluators imported
    drainer = _start_indexer(archive, log_format, log_file) if indexer else None
    # held from before the line that says it serves (after the indexer starts, which would inherit them held)
    hold_signals()
    if log_format == "json" and log_file is None:  # standard error is the JSON log: one object a line, this too
        import logging

        logging.getLogger("pdi.serve").info(said, extra={"fields": {
            "event": "serving", "archive": named, "url": f"http://{shown}:{bound}/",
            "replay": f"http://{shown}:{replay_bound}/", "workers": count, "read_only": read_only[0],
            "registries_in_memory": in_memory}})
    else:
        click.echo(said, err=True)
    try:
        serve(make, listener, workers=count, header_timeout=header_timeout, send_timeout=send_timeout,
              max_connections=max_connections,
              replay=replay_listener, json_logs=log_format == "json", own_logging=own_logging,
              trusted=trusted, companions=lambda: [] if drainer is None else [drainer.pid])
    except PDIError as exc:
        if log_format != "json" or log_file is not None:  # standard error is not the JSON log: the plain line
            raise
        import logging

        from pdi.cli.commands import error_line

        # why it stopped (workers that keep dying), as one of the log's records: a JSON one with JSON logs
        logging.getLogger("pdi.serve").error(error_line(exc), extra={"fields": {"event": "error"}})
        raise SystemExit(exc.exit_code) from None
    finally:
        if drainer is not None:
            drainer.terminate()  # a row it held is leased a while, then taken again: nothing is lost
            drainer.wait()


def _federation(registries: tuple[str, ...], registry_key: str | None, dns: str | None,
                dns_private: bool = False, *, archive: str, read_url: str | None = None,
                ) -> tuple[list[RegistrySource], NaptrFinder | None]:
    """The registries of --registry, each checked against --registry-key now and against the newest of its source
    the archive recorded (one issued before it is refused: a replay), and --dns's finder."""
    from pdi.archive import Archive
    from pdi.federation.authorities import RegistrySource, load_keys
    from pdi.federation.naptr import NaptrFinder

    if registries and registry_key is None:
        raise click.BadParameter("a registry is trusted only when its signature verifies: give the key it is"
                                 " signed with (--registry-key JWK|FILE|URL)", param_hint="--registry")
    if registry_key is not None and not registries:
        raise click.BadParameter("it is the key each --registry is checked with, and no --registry is given: give"
                                 " --registry FILE|URL too, or leave it out", param_hint="--registry-key")
    keys = load_keys(registry_key) if registry_key is not None else []
    sources: list[RegistrySource] = []
    if registries:
        opened = Archive.open(archive, read_url=read_url)
        try:
            for where in registries:
                sources.append(RegistrySource(where, keys, opened))
        finally:
            for source in sources:  # closed before the workers are forked: each keeps them in its own (create_app)
                source.keep_in(None)
            opened.close()
    if dns_private and dns is None:
        raise click.BadParameter("it lets the resolvers --dns names at private addresses be asked, and no --dns is"
                                 " given: give --dns HOST:PORT too, or leave it out", param_hint="--dns-private")
    return sources, (NaptrFinder(dns, private=dns_private) if dns is not None else None)


def _refuse_indexer(opened: Archive) -> None:
    """A :class:`~pdi.errors.ReadOnlyArchiveError` saying to leave ``--indexer`` out when this user may only read
    ``opened`` (a member of its group, read-only media): its indexer writes what it makes of the catalog's queue, and
    would be refused each write; said before the resolver starts, not by an indexer that stops as it starts."""
    from pdi.errors import ReadOnlyArchiveError

    try:
        opened.refuse_if_read_only()
    except ReadOnlyArchiveError as exc:
        raise ReadOnlyArchiveError(
            f"{exc}; --indexer writes the full text of the texts queued in its catalog, so this user cannot run it:"
            " serve without --indexer (each read is served, each write refused), and let the archive's owner drain"
            " the queue (pdi index --watch, or pdi serve --indexer)") from None


def _start_indexer(archive: str, log_format: str = "text", log_file: str | None = None) -> subprocess.Popen[bytes]:
    """``pdi index --watch`` in its own process (its own GIL), draining the queue the deposits write; it says what
    it does in the server's log (``--log-format``, ``--log-file``: with JSON logs, as JSON records)."""
    logs = ["--log-format", log_format, *(["--log-file", log_file] if log_file is not None else [])]
    return subprocess.Popen(
        [sys.executable, "-c", "from pdi.cli import main; main()", "index", "--watch", *logs],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        env={**os.environ, "PDI_ARCHIVE": archive},  # not on a command line others can read
    )


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    cli.add_command(serve_cmd)
