"""A generator resumed 4 times (3 yields and the final return) and a coroutine driven by
hand (2 resumes), so every resume is an enter and every yield/await a leave."""


def numbers():
    yield 1
    yield 2
    yield 3


class Pause:
    def __await__(self):
        yield


async def task():
    await Pause()
    return 5


def drive(coro):
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


if __name__ == "__main__":
    print(sum(numbers()), drive(task()))
