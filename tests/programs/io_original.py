# The original bindings' test case (test/cases/file_io.py at tag v4.5.1 of
# score-p/scorep_binding_python), rewritten: a file written and read inside a user region.
import os
import scorep.instrumenter

with scorep.instrumenter.enable("expect io"):
    with open("test.txt", "w") as f:
        f.write("test")

    with open("test.txt", "r") as f:
        data = f.read()
        print(data)

    os.remove("test.txt")
