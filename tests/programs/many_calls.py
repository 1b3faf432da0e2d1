"""200000 calls of tiny(): 400000 events, far beyond a 1M trace buffer."""


def tiny():
    return None


for _ in range(200000):
    tiny()
print("done")
