"""The `pdi uri` commands (click's CliRunner on pdi.cli.cli, and one real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner

from pdi.cli import cli


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_uri_parse_json() -> None:
    code, out, _ = run("uri", "parse", "--json", "foo://u@example.com:8042/over/there?name=ferret#nose")
    assert code == 0
    assert json.loads(out) == {
        "scheme": "foo",
        "authority": "u@example.com:8042",
        "userinfo": "u",
        "host": "example.com",
        "host_type": "reg-name",
        "port": "8042",
        "path": "/over/there",
        "query": "name=ferret",
        "fragment": "nose",
    }


def test_uri_parse_table_shows_absent_and_empty() -> None:
    code, out, _ = run("uri", "parse", "urn:x?")
    assert code == 0
    lines = dict(line.split(None, 1) for line in out.splitlines())
    assert lines["scheme"] == '"urn"'
    assert lines["authority"] == "-"
    assert lines["query"] == '""'
    assert lines["fragment"] == "-"


def test_uri_parse_syntax_error_exit_1_names_rule_and_offset() -> None:
    code, out, err = run("uri", "parse", "http://a b/")
    assert code == 1
    assert out == ""
    assert err.strip() == "pdi: syntax error: character ' ' is not allowed in reg-name (rule reg-name, offset 8)"


def test_uri_parse_lenient() -> None:
    code, out, _ = run("uri", "parse", "--lenient", "--json", "http://a b/c d")
    assert code == 0
    assert json.loads(out)["host"] == "a b"


def test_uri_resolve_both_rfcs() -> None:
    assert run("uri", "resolve", "http://a/b/c/d;p?q", "../../../g") == (0, "http://a/g\n", "")
    assert run("uri", "resolve", "--rfc", "2396", "http://a/b/c/d;p?q", "../../../g") == (
        0,
        "http://a/../g\n",
        "",
    )
    assert run("uri", "resolve", "thismessage:/", "images/a.gif")[1] == "thismessage:/images/a.gif\n"
    assert run("uri", "resolve", "--non-strict", "http://a/b/c/d;p?q", "http:g")[1] == "http://a/b/c/g\n"
    assert run("uri", "resolve", "http://a/b/c/d;p?q", "http:g")[1] == "http:g\n"


def test_uri_resolve_relative_base_is_a_syntax_error() -> None:
    code, _, err = run("uri", "resolve", "a/b", "c")
    assert code == 1
    assert "absolute-URI" in err


def test_uri_resolve_bad_rfc_is_usage_error() -> None:
    code, _, _ = run("uri", "resolve", "--rfc", "1808", "http://a/", "b")
    assert code == 2


def test_uri_normalize() -> None:
    assert run("uri", "normalize", "eXAMPLE://a/./b/../b/%63/%7bfoo%7d") == (
        0,
        "example://a/b/c/%7Bfoo%7D\n",
        "",
    )
    assert run("uri", "normalize", "HTTP://Example.COM:80")[1] == "http://example.com/\n"


def test_uri_help_lists_the_commands() -> None:
    code, out, _ = run("uri", "--help")
    assert code == 0
    for name in ("parse", "resolve", "normalize"):
        assert name in out


def test_uri_resolve_as_a_real_process() -> None:
    env = dict(os.environ)  # PYTHONPATH: the pdi under test (tests/conftest.py)
    done = subprocess.run(
        [sys.executable, "-m", "pdi", "uri", "resolve", "pdi://oma.eop.gov.us/1997/01/27/3", "4"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == "pdi://oma.eop.gov.us/1997/01/27/4\n"


def test_uri_iri_option() -> None:
    code, out, err = run("uri", "parse", "--json", "--iri", "http://r\u00e9sum\u00e9.example/d\u00e9j\u00e0")
    assert code == 0, err
    assert json.loads(out)["host"] == "xn--rsum-bpad.example"  # as Chromium writes it
    assert json.loads(out)["path"] == "/d%C3%A9j%C3%A0"
    assert run("uri", "normalize", "--iri", "HTTP://A/\u00e9")[1] == "http://a/%C3%A9\n"
    code, _, err = run("uri", "parse", "http://a/\u00e9")
    assert code == 1
    assert "offset 9" in err


def test_uri_iri_option_says_where_in_the_iri_as_typed() -> None:
    # with --iri the URI parsed is the IRI mapped, "é" three characters of it (%C3%A9) and "😀" twelve: the error's
    # offset is still that of the character typed, never one past the end of what was typed
    for typed, bad in [("http://\u00e9.example/\u00f1 a", " "), ("http://\u00e9.example/\U0001f600%zz", "%"),
                       ("http://[\u00e9]/", "\u00e9"), ("x://\u00e9.example/\u00f1 a", " "),
                       ("http://\u00e9.example:8y/", "y"), ("http://\u00e9\u00e9.\u00e9\u00e9/\u00e9 a", " ")]:
        for command in ("parse", "normalize"):
            code, _, err = run("uri", command, "--iri", typed)
            assert code == 1
            assert f"offset {typed.index(bad)})" in err, (command, typed, err)
    code, _, err = run("uri", "parse", "--iri", "http://a/ b")  # all ASCII: nothing mapped
    assert "offset 9)" in err


def test_uri_parse_table_shows_what_json_quotes_leave_escaped() -> None:
    """--lenient splits what RFC 3986 refuses, a URL pasted from a stranger's page: in the table's JSON quotes a
    right-to-left override, an 8-bit CSI (U+009B) and a line separator would be themselves; they are escaped."""
    given = "http://ex.com/a\u202eb\x9bc\u2028d"
    code, out, _ = run("uri", "parse", "--lenient", given)
    assert code == 0
    lines = dict(line.split(None, 1) for line in out.splitlines())
    assert lines["path"] == '"/a\\u202eb\\x9bc\\u2028d"'
    code, out, _ = run("uri", "parse", "--lenient", "--json", given)
    assert json.loads(out)["path"] == "/a\u202eb\x9bc\u2028d"
