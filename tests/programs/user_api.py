"""The user API: regions, decorators, parameters, recording switches, rewind, errors."""
import scorep.instrumenter
import scorep.user


def decorated_target():
    return 1


@scorep.user.region("decorated")
def named_decorated():
    return 2


@scorep.user.region()
def self_named():
    return 3


@scorep.user.region
def bare():
    return 4


if __name__ == "__main__":
    scorep.user.region_begin("manual")
    scorep.user.parameter_int("count", -5)
    scorep.user.parameter_uint("size", 2**64 - 1)
    scorep.user.parameter_string("mode", "fast")
    scorep.user.parameter_int("other", 7)
    scorep.user.region_end("manual")
    with scorep.user.region("context"):
        named_decorated()
    self_named()
    bare()
    with scorep.instrumenter.disable("quiet"):
        decorated_target()
    scorep.user.disable_recording()
    decorated_target()
    scorep.user.enable_recording()
    scorep.user.rewind_begin("attempt")
    decorated_target()
    scorep.user.rewind_end("attempt", True)
    scorep.user.rewind_begin("kept")
    decorated_target()
    scorep.user.rewind_end("kept", False)
    print("user api done")
