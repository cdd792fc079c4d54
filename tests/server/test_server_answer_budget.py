"""The worker's budget of large answers in memory (:class:`pdi.server.process.limits.AnswerBudget`): given in the
order asked for, never more than it holds, every wait bounded, nothing lost when a wait ends early."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.server.http.problems import Busy
from pdi.server.process.limits import AnswerBudget


def test_an_answer_waits_until_room_is_given_back_and_they_go_in_order() -> None:
    got: list[str] = []

    async def main() -> None:
        budget = AnswerBudget(100)
        first = await budget.take(70, 1)

        async def wants(label: str, octets: int) -> None:
            taken = await budget.take(octets, 5)
            got.append(label)
            await anyio.sleep(0.05)
            budget.give(taken)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(wants, "big", 60)
            await anyio.sleep(0.01)
            tasks.start_soon(wants, "small", 10)  # fits now, but waits behind the one asked before it
            await anyio.sleep(0.05)
            assert got == [] and budget.free == 30
            budget.give(first)
        assert budget.free == 100

    anyio.run(main)
    assert got == ["big", "small"]


def test_an_answer_larger_than_the_budget_takes_all_of_it() -> None:
    async def main() -> None:
        budget = AnswerBudget(100)
        assert await budget.take(1_000, 1) == 100 and budget.free == 0
        with pytest.raises(Busy):
            await budget.take(1, 0.05)
        assert budget.free == 0 and not budget._waiting  # the wait that ended left no trace
        budget.give(100)
        assert await budget.take(1, 0.05) == 1

    anyio.run(main)


def test_a_wait_cancelled_gives_nothing_away_and_unblocks_those_behind() -> None:
    async def main() -> None:
        budget = AnswerBudget(100)
        held = await budget.take(90, 1)
        with anyio.move_on_after(0.05):
            await budget.take(50, 5)  # cancelled while it waits
        assert budget.free == 10 and not budget._waiting
        budget.give(held)
        assert budget.free == 100

    anyio.run(main)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 150), st.integers(0, 3)), min_size=1, max_size=12))
def test_never_more_than_the_budget_is_out_and_all_of_it_comes_back(asks: list[tuple[int, int]]) -> None:
    """Answers of random sizes, each kept a few turns: the octets out never exceed the budget, each answer gets
    what it asked for (at most all of it), and once they are done the budget is whole."""
    async def main() -> None:
        budget = AnswerBudget(100)
        out = 0
        most = 0

        async def answer(octets: int, turns: int) -> None:
            nonlocal out, most
            taken = await budget.take(octets, 10)
            assert taken == min(octets, 100)
            out += taken
            most = max(most, out)
            for _ in range(turns):
                await anyio.sleep(0)
            out -= taken
            budget.give(taken)

        async with anyio.create_task_group() as tasks:
            for octets, turns in asks:
                tasks.start_soon(answer, octets, turns)
        assert most <= 100 and budget.free == 100 and not budget._waiting

    anyio.run(main)


def test_a_client_holding_its_share_is_refused_at_once_and_others_are_not() -> None:
    """A quarter of the budget is one client's share: past it, its next large answer is refused at once (its
    place freed), not kept waiting; another client's is given room; once given back, the first may again."""
    async def main() -> None:
        budget = AnswerBudget(100 << 20)
        assert budget.share == 25 << 20
        held = await budget.take(30 << 20, 1, "192.0.2.7")
        started = anyio.current_time()
        with pytest.raises(Busy, match="this client holds 30 MiB of large answers it has not yet taken"):
            await budget.take(1 << 20, 5, "192.0.2.7")
        assert anyio.current_time() - started < 1  # at once, not after the 5 s a wait would take
        assert await budget.take(30 << 20, 1, "192.0.2.8") == 30 << 20
        budget.give(held, "192.0.2.7")
        assert budget.held_by == {"192.0.2.8": 30 << 20}
        assert await budget.take(1 << 20, 1, "192.0.2.7") == 1 << 20

    anyio.run(main)


def test_the_octets_of_an_answer_are_counted_in_json_values_too() -> None:
    """/api/rfc5147's answer is a dict whose text is the passage: its octets count as a body's do."""
    from pdi.server.process.limits import answer_octets

    passage = "x" * 3_000_000
    assert answer_octets({"name": "urn:pdi://a.example.us/2026/11/26/1.text.1", "text": passage}) >= 3_000_000
    assert answer_octets([{"pages": [{"text": passage}]}]) >= 3_000_000
    assert answer_octets({"a": {"b": {"c": {"d": {"e": passage}}}}}) == 0  # deeper than pdi's JSON answers go
    assert answer_octets(passage.encode()) == answer_octets(passage) == 3_000_000


def test_each_budget_gets_back_what_it_gave_and_a_head_holds_none() -> None:
    """An app whose request runs work on two pools (the resolver's, and another such as the federation's
    look-ups): the room each result took goes back to its own pool, and after the answer both are whole. Found
    in review: the room a request held was given back to the first budget, whatever budget it came from. A
    HEAD, whose answer has no body, holds none."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from pdi.server.process.limits import PACED_FROM, PacedAnswers, WorkLimits

    first, second = WorkLimits(answer_octets=64 << 20), WorkLimits(answer_octets=32 << 20)
    seen: list[tuple[int, int]] = []

    async def both(request: Request) -> Response:
        small = await first.run(lambda: "x" * PACED_FROM)
        large = await second.run(lambda: b"y" * (2 * PACED_FROM))
        seen.append((first.answers.free, second.answers.free))
        return Response(small.encode() + large)

    app = PacedAnswers(Starlette(routes=[Route("/", both, methods=["GET", "HEAD"])]))
    with TestClient(app) as client:
        answer = client.get("/")
        assert len(answer.content) == 3 * PACED_FROM
        # meanwhile: the later, larger result holds its own pool's room; the earlier (which went into it, as a
        # request's results do) was given back to its own pool when the later took
        assert seen[-1] == (64 << 20, (32 << 20) - 2 * PACED_FROM)
        assert (first.answers.free, second.answers.free) == (64 << 20, 32 << 20)  # and whole after
        assert not first.answers.held_by and not second.answers.held_by
        assert client.head("/").status_code == 200
        assert seen[-1] == (64 << 20, 32 << 20)  # a HEAD held none
