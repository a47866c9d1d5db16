"""sarif_shape.py FILE: the SARIF of formats.test: version, driver, a notification for bad.ptx
at its line relative to the root, executionSuccessful false, no results."""
import json
import sys

doc = json.load(open(sys.argv[1]))
assert doc["version"] == "2.1.0"
run = doc["runs"][0]
assert run["tool"]["driver"]["name"] == "wsv"
assert run["results"] == []
inv = run["invocations"][0]
assert inv["executionSuccessful"] is False
note = inv["toolExecutionNotifications"][0]
loc = note["locations"][0]["physicalLocation"]
assert loc["artifactLocation"] == {"uri": "Inputs/bad.ptx", "uriBaseId": "SRCROOT"}, loc
assert loc["region"]["startLine"] == 8, loc
assert run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file:///")
print("ok")
