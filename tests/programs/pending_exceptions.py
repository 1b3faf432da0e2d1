"""Generators and coroutines entered for the first time with an exception pending: close(),
throw(), and an asyncio task cancelled before its first step (what pandas' groupby and
asyncio do all the time)."""
import asyncio
import gc


def closed_before_start():
    yield 1


def thrown_into():
    yield 1


async def never_started():
    await asyncio.sleep(0)


async def cancelled_task():
    await asyncio.sleep(0)


async def main():
    task = asyncio.ensure_future(cancelled_task())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        print("task cancelled")


closed_before_start().close()
try:
    thrown_into().throw(ValueError("thrown"))
except ValueError as error:
    print("caught", error)
coroutine = never_started()
coroutine.close()
abandoned = never_started()
del abandoned  # "coroutine was never awaited": closed by the garbage collector
gc.collect()
asyncio.run(main())
print("done")
