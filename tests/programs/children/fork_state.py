"""A fork while another thread is inside os.system and a fork is half-way (a number
reserved): the child starts with this process's state of its own, fresh (issue 35)."""
import os
import threading

from scorep.measure import children


def fields(state):
    return {k: v for k, v in vars(state).items() if k != "system_lock"}


parent = children._state.here
parent.system_running = 1           # as if a thread were inside os.system now
parent.system_replaced = {b"X": b"1"}
parent.threads_in_fork_exec.add(12345)
parent.saved_environ = ("a", "b")
parent.system_lock.acquire()        # ... holding the lock, in another thread
pid = os.fork()
if pid == 0:
    here = children._state.here
    fresh = fields(here) == fields(children._ThisProcess())
    print("child", here is not parent, fresh, not here.system_lock.locked(), flush=True)
    os._exit(0)
parent.system_lock.release()
os.waitpid(pid, 0)
print("parent", children._state.here is parent, parent.system_running)
