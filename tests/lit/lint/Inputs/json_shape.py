"""json_shape.py FILE: the wsv-lint/1 document of formats.test: three inputs in command-line
order with their statuses, the syntax error at its line, no findings, the summary."""
import json
import sys

doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "wsv-lint/1", doc["schema"]
assert doc["tool"]["name"] == "wsv"
inputs = doc["inputs"]
names = [i["file"].split("/")[-1] for i in inputs]
assert names == ["no-sync.ptx", "bad.ptx", "func-only.ptx"], names
assert [i["status"] for i in inputs] == ["checked", "parse-error", "no-kernel"], inputs
assert inputs[0]["kernels"] == ["copy_one"] and inputs[0]["errors"] == []
assert inputs[1]["errors"][0]["line"] == 8 and "expected ']'" in inputs[1]["errors"][0]["message"]
assert inputs[2]["kernels"] == []
assert doc["findings"] == []
assert doc["summary"] == {"errors": 0, "warnings": 0, "remarks": 0, "files": 3,
                          "bad_inputs": 1, "baseline_suppressed": 0}, doc["summary"]
print("ok")
