"""One shape for what holds a resource: ``with`` it, and it is closed on the way out."""

from __future__ import annotations

from typing import Self


class Closing:
    """A context manager that is itself: ``__enter__`` gives it back, ``__exit__`` calls its :meth:`close`."""

    def close(self) -> None:
        """Release what it holds (a subclass says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
