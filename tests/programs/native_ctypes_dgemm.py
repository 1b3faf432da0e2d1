"""Matrix products through BLAS without numpy (for interpreters Debian's numpy is not built
for): multiply() calls libblas's cblas_dgemm through ctypes on 300x300 matrices, `rounds`
times (argv[1], default 40). Prints one element of the result."""
import ctypes
import ctypes.util
import sys

blas = ctypes.CDLL(ctypes.util.find_library("blas") or "libblas.so.3")
N = 300
Matrix = ctypes.c_double * (N * N)
a = Matrix(*[(i % 17) / 17.0 for i in range(N * N)])
c = Matrix()
blas.cblas_dgemm.restype = None
blas.cblas_dgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                             ctypes.c_int, ctypes.c_int, ctypes.c_double, Matrix,
                             ctypes.c_int, Matrix, ctypes.c_int, ctypes.c_double, Matrix,
                             ctypes.c_int]


def multiply(rounds):
    for _ in range(rounds):
        # CblasRowMajor 101, CblasNoTrans 111
        blas.cblas_dgemm(101, 111, 111, N, N, N, 1.0, a, N, a, N, 0.0, c, N)


multiply(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
print("%.6f" % c[N + 1])
