import scorep.user


def before():
    print("before")


def after():
    print("after")


before()
scorep.user.force_finalize()
after()
