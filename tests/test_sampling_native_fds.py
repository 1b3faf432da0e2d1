"""--sampling --native reads /proc at every tick (the thread list, each thread's syscall
file) from a helper thread with a descriptor table of its own: the program's table never
holds one of those descriptors, so a program that dup2()s onto a number it just freed and
opens a file right after closing one sees exactly what it sees without measurement."""
from conftest import program, run, run_scorep

ROUNDS = "1000000"
EXPECTED = "dup2 EBUSY 0, open elsewhere 0, rounds %s\n" % ROUNDS


def test_the_program_alone_reuses_its_descriptor_numbers(python, tmp_path):
    plain = run([python, program("native_fds.py"), ROUNDS], cwd=tmp_path, timeout=120)
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, EXPECTED, "")


def test_native_sampling_leaves_the_descriptor_table_to_the_program(python, tmp_path):
    # Three runs: before the helper, one run in two or three met the sampler's descriptor
    # (dup2 EBUSY 1-49 times, open() elsewhere 12-150 times in a million rounds).
    for i in range(3):
        exp = tmp_path / ("exp%d" % i)
        out = run_scorep(python, ["--sampling=5000", "--native", program("native_fds.py"),
                                  ROUNDS], exp, cwd=tmp_path, timeout=180)
        assert (out.returncode, out.stdout, out.stderr) == (0, EXPECTED, ""), i
        manifest = (exp / "MANIFEST.md").read_text()
        assert "native stacks (--native): " in manifest, manifest



def test_the_unwinder_s_pipe_is_opened_at_the_start_above_the_program_s_numbers(python,
                                                                                tmp_path):
    # libunwind (Debian's, built with conservative checks) opens a pipe for its memory checks
    # at its first unwinding: that was the first tick's signal handler, while the program
    # ran, at the two lowest free numbers (5 and 6 here): the program's next open() got 7
    # where it had 5 before; once in about 15 runs of the test above under load, between
    # its close() and its open(). Now opened at the start, above the numbers programs use.
    plain = run([python, program("native_lowest_fd.py")], cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    before, after = plain.stdout.split()[-2:]
    assert before == after
    out = run_scorep(python, ["--sampling=5000", "--native", program("native_lowest_fd.py")],
                     tmp_path / "exp", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, ""), out.stderr
    before, after = out.stdout.split()[-2:]
    assert before == after, out.stdout
    manifest = (tmp_path / "exp" / "MANIFEST.md").read_text()
    assert "native stacks (--native): " in manifest, manifest
