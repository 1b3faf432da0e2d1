"""Two named threads calling work() 5 times each; the main thread calls it once."""
import threading


def work():
    return sum(range(100))


def worker():
    for _ in range(5):
        work()


if __name__ == "__main__":
    threads = [threading.Thread(target=worker, name="worker-%d" % i) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    work()
    print("threads done")
