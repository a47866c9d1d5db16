# The race checks: one source per check (see RaceChecks.def), as lib/checks/<Function>.cpp
# (relative to analyzer/, which includes this file).
target_sources(wsv_analyzer PRIVATE
  lib/checks/StageOrder.cpp
  lib/checks/SmemWarRelease.cpp
  lib/checks/SmemRawWait.cpp
  lib/checks/Tcgen05CommitMultiThread.cpp
  lib/checks/ProxyFenceMissing.cpp
  lib/checks/BulkStoreReuse.cpp
  lib/checks/AccumulatorEarlyRead.cpp
  lib/checks/Tcgen05FenceMissing.cpp
)
