"""A small simulation to measure: particles on a grid, a worker thread that computes
statistics, user regions and a parameter. Run it with

    python -m scorep examples/demo_app.py [steps]
"""
import random
import sys
import threading

import scorep.user


class Particle:
    def __init__(self, x, y):
        self.x, self.y = x, y
        self.vx, self.vy = random.uniform(-1, 1), random.uniform(-1, 1)

    def move(self, dt):
        self.x = (self.x + self.vx * dt) % 1.0
        self.y = (self.y + self.vy * dt) % 1.0


def make_particles(n):
    return [Particle(random.random(), random.random()) for _ in range(n)]


def density(particles, cells):
    grid = [[0] * cells for _ in range(cells)]
    for p in particles:
        grid[int(p.y * cells)][int(p.x * cells)] += 1
    return grid


def step(particles, dt):
    for p in particles:
        p.move(dt)


def statistics(grids, results):
    for grid in grids:
        counts = [c for row in grid for c in row]
        mean = sum(counts) / len(counts)
        results.append(sum((c - mean) ** 2 for c in counts) / len(counts))


def main(steps):
    random.seed(1)
    particles = make_particles(2000)
    grids = []
    scorep.user.parameter_int("steps", steps)
    with scorep.user.region("simulation"):
        for _ in range(steps):
            step(particles, 0.01)
            grids.append(density(particles, 16))
    results = []
    worker = threading.Thread(target=statistics, args=(grids, results), name="statistics")
    worker.start()
    worker.join()
    print("steps: %d, mean variance of the density: %.3f" % (steps, sum(results) / len(results)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
