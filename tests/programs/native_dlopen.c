/* One of the objects tests/programs/native_dlopen.py loads and unloads: compiled with
 * -DNUMBER=i, and a data segment of NUMBER pages so that each one maps differently. */
static int pages[1024 * NUMBER] = {NUMBER};

int value(void)
{
    return pages[0];
}
