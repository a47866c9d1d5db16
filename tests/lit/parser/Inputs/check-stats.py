#!/usr/bin/env python3
"""check-stats.py TABLE FILE...: the --stats rows name each FILE with its real size in bytes
and its number of lines, and the speed column is bytes / time."""
import os
import sys

rows = {}
with open(sys.argv[1]) as table:
    header = table.readline().split()
    for line in table:
        fields = line.split()
        rows[fields[0]] = fields
for path in sys.argv[2:]:
    fields = rows[path]
    with open(path, "rb") as f:
        data = f.read()
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if int(fields[1]) != len(data) or int(fields[2]) != lines:
        sys.exit("%s: bytes/lines %s/%s, expected %d/%d" % (path, fields[1], fields[2], len(data), lines))
    # The time is printed to 0.001 ms and the speed to 0.1 MB/s: allow for both roundings.
    ms, speed = float(fields[6]), float(fields[7])
    fastest = len(data) / 1e3 / max(ms - 0.0005, 1e-9)
    slowest = len(data) / 1e3 / (ms + 0.0005)
    if not slowest - 0.05 <= speed <= fastest + 0.05:
        sys.exit("%s: %s MB/s does not match %d bytes in %s ms" % (path, speed, len(data), ms))
