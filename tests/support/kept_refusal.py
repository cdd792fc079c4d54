"""What the tests of the element-fragment bounds check of a document deposited past them (HTML and XML alike).

The deposit keeps the document whole, and its element index holds the refusal (``ElementIndex.failure``):
every element fragment of it is refused from there, without parsing (the parse cache is asked for nothing),
and ``pdi get`` of one exits 7 (limit exceeded), saying so without a traceback.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import LimitError
from pdi.fragments import markup
from pdi.fragments.markup.index import ElementIndex


def assert_refused_from_the_index(archive: Archive, name: str, fragments: tuple[str, ...], said: str) -> None:
    """Each of ``fragments`` of ``name`` is a :class:`LimitError` matching ``said``, told by the element index."""
    index = archive.fragment_index(archive.get(name).record)
    assert index is not None
    failure = ElementIndex.from_bytes(index).failure
    assert failure is not None and failure.error is LimitError  # the refusal, kept beside the document
    markup._elements.cache_clear()
    for fragment in fragments:
        with pytest.raises(LimitError, match=said):
            archive.get(f"{name}#{fragment}")
    assert markup._elements.cache_info().misses == 0  # said from the index: nothing parsed


def assert_the_command_line_refuses(location: str, name: str, said: str) -> None:
    """``pdi get NAME`` (with its fragment) exits 7 and says ``said``, with no traceback."""
    result = CliRunner().invoke(cli, ["get", name, "--archive", location])
    assert result.exit_code == 7
    assert said in result.stderr and "Traceback" not in result.output + result.stderr
