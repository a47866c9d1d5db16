# The deadlock checks: one source per check (see DeadlockChecks.def), as lib/checks/<Function>.cpp
# (relative to analyzer/, which includes this file).
target_sources(wsv_analyzer PRIVATE
  lib/checks/BarrierTraffic.cpp
  lib/checks/BarrierTrafficFacts.cpp
  lib/checks/MbarrierArrivalCount.cpp
  lib/checks/MbarrierInitVisibility.cpp
  lib/checks/MbarrierTripCount.cpp
  lib/checks/MbarrierInitialPhase.cpp
  lib/checks/MbarrierTxBytes.cpp
  lib/checks/MbarrierNoArriver.cpp
  lib/checks/MbarrierPhaseSkip.cpp
  lib/checks/BarrierDivergent.cpp
  lib/checks/NamedBarrierCount.cpp
  lib/checks/NamedBarrierIdCollision.cpp
  lib/checks/Tcgen05AllocExhaustion.cpp
)
