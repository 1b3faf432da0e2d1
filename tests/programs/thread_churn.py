"""Many short-lived threads, one after the other."""
import sys
import threading


def work():
    return sum(i for i in range(10))


for _ in range(int(sys.argv[1])):
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
print("done")
