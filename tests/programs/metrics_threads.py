"""Many short threads one after the other, each touching fresh memory, with few file
descriptors allowed: a thread's metric sources (a perf descriptor each) must go when it
ends."""
import resource
import threading

resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


def work():
    block = bytearray(256 * 1024)  # fresh pages (below malloc's mmap threshold: brk)
    for i in range(0, len(block), 4096):
        block[i] = 1


for _ in range(400):
    t = threading.Thread(target=work)
    t.start()
    t.join()
print("done")
