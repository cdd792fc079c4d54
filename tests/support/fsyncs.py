"""What a test sees ``os.fsync`` called on: the blob files' durability tests count them."""

from __future__ import annotations

import os

import pytest


def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of every file and folder ``os.fsync`` is called on from here (each still synced)."""
    inodes: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        real(fd)
        inodes.append(os.fstat(fd).st_ino)

    monkeypatch.setattr(os, "fsync", fsync)
    return inodes
