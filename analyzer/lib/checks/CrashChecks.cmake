# The crash checks: one source per check (see CrashChecks.def), as lib/checks/<Function>.cpp
# (relative to analyzer/, which includes this file).
target_sources(wsv_analyzer PRIVATE
  lib/checks/SyncSupport.cpp
  lib/checks/Tcgen05AllocLaneGuard.cpp
  lib/checks/TmemDeallocEarly.cpp
  lib/checks/AlignedDivergent.cpp
  lib/checks/ClusterExitEarly.cpp
  lib/checks/ClusterMulticastMask.cpp
  lib/checks/MbarrierReuse.cpp
  lib/checks/SetmaxnregNonuniform.cpp
)
