"""A program that reuses the descriptor number it just freed, as programs restoring their
standard descriptors do: in a loop it closes a descriptor, dup2()s another onto its number,
closes it again and opens a file, which must get that number back (the lowest free one).
Sixteen threads wait meanwhile, so a sampler that reads /proc once a thread a tick does so
often. It prints how often dup2 failed and how often open() got another number: nothing
changes the program's descriptor table but the program, so both are 0."""
import errno
import os
import sys
import threading

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
done = threading.Event()
waiters = [threading.Thread(target=done.wait) for _ in range(16)]
for t in waiters:
    t.start()

source = os.open(os.devnull, os.O_RDONLY)
mine = os.open(os.devnull, os.O_RDONLY)  # the lowest free number after `source`
busy = elsewhere = 0


def one_round():
    global busy, elsewhere, mine
    os.close(mine)
    try:
        os.dup2(source, mine)
    except OSError as e:
        if e.errno != errno.EBUSY:
            raise
        busy += 1
    else:
        os.close(mine)
    got = os.open(os.devnull, os.O_RDONLY)
    if got != mine:
        elsewhere += 1
        mine = got  # carry on with the number the program got


try:
    for _ in range(rounds):
        one_round()
finally:
    done.set()
    for t in waiters:
        t.join()
print("dup2 EBUSY %d, open elsewhere %d, rounds %d" % (busy, elsewhere, rounds))
