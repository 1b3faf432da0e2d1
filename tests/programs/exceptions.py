"""An exception raised three calls deep and caught at the top, then one that escapes."""
import sys


def deep(n):
    if n == 0:
        raise ValueError("deep")
    return deep(n - 1)


def catcher():
    try:
        deep(3)
    except ValueError:
        return "caught"


if __name__ == "__main__":
    print(catcher())
    if len(sys.argv) > 1:
        deep(2)
