"""``dgt.tasks.cancel_and_wait``: a task cancelled and waited for, its cancellation
swallowed, an error it ended with raised; ``dgt.tasks.cancelling``: whether a task is being
cancelled, its cancel swallowed or not."""

from __future__ import annotations

import asyncio

import pytest

from dgt.tasks import cancel_and_wait, cancelling


async def test_a_running_task_is_cancelled_and_has_ended() -> None:
    task = asyncio.create_task(asyncio.sleep(60))
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert task.cancelled()


async def test_none_and_the_calling_task_are_left_alone() -> None:
    await cancel_and_wait(None)
    current = asyncio.current_task()
    assert current is not None
    await cancel_and_wait(current)
    assert not current.cancelled()
    assert current.cancelling() == 0


async def test_an_error_the_task_ended_with_is_raised() -> None:
    async def fail() -> None:
        raise ValueError("broken")

    task = asyncio.create_task(fail())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="broken"):
        await cancel_and_wait(task)


async def test_cancelling_tells_a_task_being_cancelled_from_one_that_is_not() -> None:
    seen: list[bool] = []

    async def swallowing() -> None:
        seen.append(cancelling())
        with pytest.raises(asyncio.CancelledError):
            await asyncio.sleep(10)
        seen.append(cancelling())  # the cancel swallowed: still being cancelled

    task = asyncio.get_running_loop().create_task(swallowing())
    await asyncio.sleep(0)
    task.cancel()
    await task
    assert seen == [False, True]
