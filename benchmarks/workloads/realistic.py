"""A realistic pure-Python workload: an object-oriented task scheduler simulation, text
diffing with difflib (pure Python from the standard library) and a JSON round trip."""
import difflib
import json
import random
import sys
import time


class Task:
    def __init__(self, ident, priority, work):
        self.ident = ident
        self.priority = priority
        self.work = work
        self.done = 0

    def run(self, quantum):
        step = min(quantum, self.work - self.done)
        self.done += step
        return step

    @property
    def finished(self):
        return self.done >= self.work


class Scheduler:
    def __init__(self, tasks):
        self.queue = sorted(tasks, key=lambda t: -t.priority)
        self.clock = 0

    def tick(self, quantum):
        task = self.queue.pop(0)
        self.clock += task.run(quantum)
        if not task.finished:
            self.insert(task)

    def insert(self, task):
        for i, other in enumerate(self.queue):
            if other.priority < task.priority:
                self.queue.insert(i, task)
                return
        self.queue.append(task)

    def run(self, quantum):
        while self.queue:
            self.tick(quantum)
        return self.clock


def simulate(rng):
    tasks = [Task(i, rng.randint(1, 9), rng.randint(5, 60)) for i in range(300)]
    return Scheduler(tasks).run(4)


def make_text(rng, lines):
    words = ["alpha", "beta", "gamma", "delta", "sigma", "omega", "tau", "phi"]
    return [" ".join(rng.choice(words) for _ in range(8)) for _ in range(lines)]


def diff_texts(rng):
    a = make_text(rng, 300)
    b = list(a)
    for _ in range(40):
        b[rng.randrange(len(b))] = " ".join(rng.sample(a[0].split(), 4))
    return sum(1 for _ in difflib.unified_diff(a, b, lineterm=""))


def json_round_trip(rng):
    records = [{"id": i, "value": rng.random(), "tags": [rng.choice("xyz") for _ in range(3)]}
               for i in range(2000)]
    return len(json.loads(json.dumps(records)))


def main(rounds):
    rng = random.Random(7)
    result = 0
    for _ in range(rounds):
        result += simulate(rng) + diff_texts(rng) + json_round_trip(rng)
    return result


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
start, cpu_start = time.perf_counter(), time.process_time()
main(rounds)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
