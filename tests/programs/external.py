"""Used with --instrumenter-file: wraps helper.twice in a user region."""
import helper
import scorep.user

helper.twice = scorep.user.region("wrapped")(helper.twice)
