# The deadlock checks: one source per check (see DeadlockChecks.def), as lib/checks/<Function>.cpp
# (relative to analyzer/, which includes this file).
target_sources(wsv_analyzer PRIVATE
)
