"""A thread that never runs Python: started with libc's pthread_create on libc's own
pthread_mutex_lock, it waits for a mutex the main thread holds until the main thread has
slept for a while, then takes it and ends."""
import ctypes
import ctypes.util
import sys
import time

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER
assert libc.pthread_mutex_lock(mutex) == 0
thread = ctypes.c_ulong()
start = ctypes.cast(libc.pthread_mutex_lock, ctypes.c_void_p)
assert libc.pthread_create(ctypes.byref(thread), None, start, mutex) == 0


def wait(seconds):
    time.sleep(seconds)


wait(float(sys.argv[1]) if len(sys.argv) > 1 else 0.6)
assert libc.pthread_mutex_unlock(mutex) == 0
assert libc.pthread_join(thread, None) == 0
print("joined")
