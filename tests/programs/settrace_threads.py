"""Threads started while threading.settrace's hook is set and an audit hook written in Python
is installed (regrtest installs one; CPython's test_threading leaves a threading.settrace
hook behind): each new thread calls sys.settrace first. Before 3.12 CPython guards
_PyEval_SetTrace with one flag for the whole process, held while the audit hook runs: a
thread that gets the GIL meanwhile and calls sys.settrace dies ("Cannot install a trace
function while another trace function is being installed"). Prints how many did."""
import sys
import threading

sys.addaudithook(lambda name, args: None)
threading.settrace(lambda *args: None)
failed = 0


def count(args):
    global failed
    failed += 1


sys.unraisablehook = count
threading.excepthook = count
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 600
for _ in range(rounds):
    threads = [threading.Thread(target=lambda: None) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
threading.settrace(None)
print("threads that died in sys.settrace: %d of %d" % (failed, rounds * 10))
