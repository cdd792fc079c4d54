"""``s3://bucket/prefix``: what pdi init --blobs accepts, and the canonical form it records (no server needed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.blobs.s3 import S3Location
from pdi.errors import ParseError

# S3's bucket naming rules (3 to 63 characters of lower-case letters, digits, dots, hyphens,
# beginning with a letter or digit) are a subset of what parse accepts.
buckets = st.from_regex(r"[a-z0-9][a-z0-9.-]{2,62}", fullmatch=True)
segments = st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True), max_size=4)


@given(buckets, segments)
def test_a_location_round_trips_through_its_canonical_form(bucket: str, parts: list[str]) -> None:
    prefix = "/".join(parts)
    parsed = S3Location.parse(f"s3://{bucket}/{prefix}")
    assert parsed.bucket == bucket
    assert parsed.prefix == (prefix + "/" if prefix else "")
    assert str(parsed) == f"s3://{bucket}/{parsed.prefix}"
    assert S3Location.parse(str(parsed)) == parsed


@given(buckets, segments)
def test_a_trailing_slash_names_the_same_prefix(bucket: str, parts: list[str]) -> None:
    prefix = "/".join(parts)
    assert S3Location.parse(f"s3://{bucket}/{prefix}") == S3Location.parse(
        f"s3://{bucket}/{prefix}/" if prefix else f"s3://{bucket}"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://bucket/prefix",  # not s3://
        "s3://",  # no bucket
        "s3://a/prefix",  # a bucket of one character
        "s3://Bad_Bucket!/x",  # not a bucket name
        "s3://bucket/a//b",  # an empty segment
        "s3://bucket/a?b",  # a query in a key prefix
        "s3://bucket/staging/x",  # inside another archive's staging area at the bucket's root
    ],
)
def test_what_is_not_a_blob_store_is_refused(url: str) -> None:
    with pytest.raises(ParseError):
        S3Location.parse(url)
