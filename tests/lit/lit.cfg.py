# lit configuration for wsv's golden tests: `wsv` and LLVM's FileCheck/not on PATH, %ptxdir for
# the PTX the build generated.
import os
import lit.formats

config.name = "wsv"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ptx", ".test"]
config.excludes = ["Inputs"]

# One test that runs away fails on its own, named, after 300 s (the longest takes a few
# seconds), instead of the whole run hitting CTest's limit and saying nothing. lit needs
# psutil to stop a test's processes; without it the run has no limit per test.
try:
    import psutil  # noqa: F401

    lit_config.maxIndividualTestTime = 300
except ImportError:
    lit_config.note("psutil is missing: no time limit per test")
# The sanitizer build (WSV_SANITIZE) runs every test but the few long proofs that exercise
# the explorer's search rather than new code (`UNSUPPORTED: sanitized`): a proof of minutes
# under ASan takes CI past its time. Within a test, `%if !sanitized %{ ... %}` leaves out a
# run that repeats, on the same code, one the sanitizers see elsewhere (H6's verify runs four
# times in these tests, 15 s each under ASan; the sanitized run keeps the one with --progress).
if getattr(config, "wsv_sanitize", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitized")
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.wsv_obj_root, "tests", "lit")

path = os.pathsep.join([config.wsv_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
config.substitutions.append(("%ptxdir", config.wsv_ptx_dir))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The checked-in compiler output (Triton, hand-written edge cases) under tests/corpus.
config.substitutions.append(("%corpus", os.path.join(config.wsv_src_root, "tests", "corpus")))
