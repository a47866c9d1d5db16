# The race checks: one source per check (see RaceChecks.def), as lib/checks/<Function>.cpp
# (relative to analyzer/, which includes this file).
target_sources(wsv_analyzer PRIVATE
)
