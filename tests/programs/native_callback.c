/* A library that calls a Python function back (through a ctypes callback) from a static
 * function: what --native shows between the two Python frames. Built without
 * optimisation so that neither call is inlined nor made a tail call. */
typedef double (*callback)(int);

static double apply_all(callback f, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += f(i);
    return sum;
}

double run_callbacks(callback f, int n)
{
    double sum = apply_all(f, n);
    return sum + 0.0;
}
