"""Region ends without begins: recorded as error_region, reported once on stderr."""
import scorep.user

scorep.user.region_end("never_begun")
scorep.user.region_begin("b")
scorep.user.region_end("b")
scorep.user.region_end("b")
