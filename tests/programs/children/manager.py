"""A multiprocessing Manager (its server is a process) shared by four processes; then a
nested python -m scorep, which measures into an experiment of its own."""
import multiprocessing
import os
import subprocess
import sys


def bump(shared, key):
    with shared["lock"]:
        shared[key] = shared.get(key, 0) + 1


if __name__ == "__main__":
    context = multiprocessing.get_context(sys.argv[1])
    with context.Manager() as manager:
        shared = manager.dict()
        shared["lock"] = manager.Lock()
        workers = [context.Process(target=bump, args=(shared, i % 2)) for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        print(shared[0], shared[1])
    nested = subprocess.run([sys.executable, "-m", "scorep", "-c", "print('nested')"],
                            capture_output=True, text=True,
                            env=dict(os.environ, SCOREP_EXPERIMENT_DIRECTORY=sys.argv[2]))
    print(nested.stdout.strip(), nested.returncode, nested.stderr)
