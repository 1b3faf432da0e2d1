"""A child with pipes for its standard streams, as CPython's test_subprocess
(test_communicate_pipe_buf) runs it: its parent writes 47 + 4 MiB + 1 bytes to its stdin and
reads both pipes with subprocess.communicate; the child echoes the first 47 bytes, writes
4 MiB + 1 bytes of "x" to stderr (ROUNDS times, the first argument, 1 by default), then
echoes the rest. Under PYTHONUNBUFFERED=1 (or -u) sys.stdout and sys.stderr write straight
to the descriptor and do not look at the count a write returns, so a write that a signal
cuts short loses the rest: measured with --sampling --native, the sampler's signal did that
(tests/test_sampling_native_pipe.py)."""
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
sys.stdout.write(sys.stdin.read(47))
for _ in range(rounds):
    sys.stderr.write("x" * (4 * 1024 * 1024 + 1))
sys.stdout.write(sys.stdin.read())
