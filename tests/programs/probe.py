"""Prints what python sets up for the main module."""
import sys

print("argv", sys.argv)
print("path0", sys.path[0])
print("file", globals().get("__file__"))
print("name", __name__)
print("globals", sorted(k for k in globals() if k != "sys"))
print("main is me", sys.modules["__main__"].__dict__ is globals())
