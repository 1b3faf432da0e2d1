"""What one trace file per location costs the file system: OTF2's POSIX substrate (the only
one Debian's libotf2 has besides "none": `otf2-config --features substrates`) writes a .evt and
a .def file per location into one directory, traces/. This creates 10^4 and 10^5 such files
in one directory on the file system of --dir (default: a temporary directory), each with a
small payload, and measures per phase: create+write+close, listing the directory, stat of
every file (what a reader's open does first) and removing them. Printed: seconds and
operations per second per phase, and the model of a parallel file system's metadata server
at the rates given (--mds-rates, creates per second).

    python3 benchmarks/trace_files.py [--files 10000,100000] [--bytes 1024] [--dir PATH]
"""

import argparse
import os
import shutil
import tempfile
import time


def measure(directory, count, payload):
    os.mkdir(directory)
    t0 = time.perf_counter()
    for i in range(count):
        fd = os.open(os.path.join(directory, "%d.evt" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                     0o644)
        os.write(fd, payload)
        os.close(fd)
    t1 = time.perf_counter()
    names = os.listdir(directory)
    t2 = time.perf_counter()
    for name in names:
        os.stat(os.path.join(directory, name))
    t3 = time.perf_counter()
    for name in names:
        os.unlink(os.path.join(directory, name))
    t4 = time.perf_counter()
    os.rmdir(directory)
    return {"create": t1 - t0, "list": t2 - t1, "stat": t3 - t2, "remove": t4 - t3}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="10000,100000")
    parser.add_argument("--bytes", type=int, default=1024)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--mds-rates", default="5000,20000,50000")
    args = parser.parse_args()
    counts = [int(x) for x in args.files.split(",")]
    payload = b"\0" * args.bytes
    base = tempfile.mkdtemp(prefix="scorep-files-", dir=args.dir)
    try:
        st = os.statvfs(base)
        print("file system of %s: %d-byte blocks; %d bytes per file" % (base, st.f_bsize,
                                                                        args.bytes))
        print("%8s %10s %10s %10s %10s %14s" % ("files", "create[s]", "list[s]", "stat[s]",
                                                "remove[s]", "creates/s"))
        for n in counts:
            r = measure(os.path.join(base, "traces%d" % n), n, payload)
            print("%8d %10.3f %10.3f %10.3f %10.3f %14.0f" % (n, r["create"], r["list"],
                                                              r["stat"], r["remove"],
                                                              n / r["create"]))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    rates = [int(x) for x in args.mds_rates.split(",")]
    print()
    print("model: a parallel file system's metadata server creating the files of one run "
          "(2 per location: .evt and .def; 1 thread per rank)")
    print("%8s %12s " % ("ranks", "files") + " ".join("%12s" % ("%d/s" % r) for r in rates))
    for ranks in (10 ** 3, 10 ** 4, 10 ** 5):
        files = 2 * ranks
        print("%8d %12d " % (ranks, files) + " ".join("%11.1fs" % (files / r) for r in rates))


if __name__ == "__main__":
    main()
