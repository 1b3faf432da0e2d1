"""os.writev of 2 x 3 MiB to stdout, a pipe, ROUNDS times (the first argument); prints to
stderr what each call returned. Without the measurement every call returns 6291456; a
signal that cuts the call short returns less (the program does not retry: it prints it)."""
import os
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
parts = [b"b" * (3 * 1024 * 1024), b"c" * (3 * 1024 * 1024)]
counts = [os.writev(1, parts) for _ in range(rounds)]
sys.stderr.write(" ".join(map(str, counts)) + "\n")
