#!/usr/bin/env python3
"""The fact checker itself: on a small hand-written protocol document (a producer that loads
and a consumer that releases, over a 2-stage ring of K / 64 k-tiles), facts that hold pass and
each kind of wrong fact is reported. Without this, a checker that reads nothing would pass."""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_facts  # noqa: E402
import protocol_sim as sim  # noqa: E402

K = ["param", 32, "K", 0]
I = ["iter", 32, "k", 7]


def value(tree):
    return {"text": "", "tree": tree}


def threads(count, lo, hi):
    return {"count": count, "members": [[lo, hi]], "elected": [], "conditional": []}


def event(kind, barrier, slot, **more):
    e = {"kind": kind, "text": kind, "when": None, "threads": threads(1, 128, 128),
         "barrier": {"array": barrier, "slot": value(slot), "peer_rank": None}}
    e.update(more)
    return e


# stage = k % 2, producer parity ((k / 2) & 1) ^ 1, consumer parity (k / 2) & 1.
STAGE = ["urem", 32, I, 2]
ROUND = ["urem", 32, ["udiv", 32, I, 2], 2]
DOC = {
    "launch": {"cluster_size": 1, "block": [160, 1, 1]},
    "barriers": [
        {"name": "full", "slots": 2, "init_counts": [{"constant": 1}, {"constant": 1}]},
        {"name": "empty", "slots": 2, "init_counts": [{"constant": 1}, {"constant": 1}]}],
    "events": [
        event("wait", 1, STAGE, parity=value(["xor", 32, ROUND, 1])),
        event("arrive.expect_tx", 0, STAGE, tx_bytes=value(4096)),
        event("async-load", 0, STAGE, bytes=value(4096)),
        dict(event("wait", 0, STAGE, parity=value(ROUND)), threads=threads(128, 0, 127)),
        event("arrive", 1, STAGE, count=value(1))],
    "loops": [
        {"ptx_loop": 7, "trip": value(["udiv", 32, K, 64]), "when": None,
         "body": [{"event": 0}, {"event": 1}, {"event": 2}]},
        {"ptx_loop": 7, "trip": value(["udiv", 32, K, 64]), "when": None,
         "body": [{"event": 3}, {"event": 4}]}],
    "prologue": [],
    "epilogue": [],
    "roles": [
        {"name": "consumer", "threads": threads(128, 0, 127), "active": threads(128, 0, 127),
         "when": None, "body": [{"loop": 1}]},
        {"name": "producer", "threads": threads(32, 128, 159), "active": threads(1, 128, 128),
         "when": None, "body": [{"loop": 0}]}],
}
FACTS = {
    "roles": {"consumer": {"threads": 128}, "producer": {"threads": 32, "active": 1}},
    "barriers": {"full": {"slots": 2, "init": 1}, "empty": {"slots": 2, "init": 1}},
    "waits": [
        {"role": "producer", "barrier": "empty", "count": "K//64", "stage": 2, "start_parity": 1},
        {"role": "consumer", "barrier": "full", "count": "K//64", "stage": 2, "start_parity": 0}],
    "arrivals": {"full": "K//64", "empty": "K//64"},
    "bytes": {"full": 4096},
}
LAUNCH = {"M": 128, "N": 128, "nctaid": 1}


def failures(facts, doc=DOC):
    out = []
    check_facts.check_entry(doc, facts, LAUNCH, [64, 320], out, "test")
    return out


class CheckFactsTest(unittest.TestCase):
    def test_facts_that_hold_pass(self):
        self.assertEqual(failures(FACTS), [])

    def test_each_wrong_fact_is_reported(self):
        wrong = {
            "thread count": lambda f: f["roles"]["consumer"].update(threads=96),
            "active threads": lambda f: f["roles"]["producer"].update(active=32),
            "missing role": lambda f: f["roles"].update(mma={"threads": 32}),
            "init count": lambda f: f["barriers"]["empty"].update(init=2),
            "stages": lambda f: f["barriers"]["full"].update(slots=4),
            "starting parity": lambda f: f["waits"][0].update(start_parity=0),
            "stage count of a ring": lambda f: f["waits"][1].update(stage=4),
            "trip count": lambda f: f["waits"][1].update(count="K//64 - 1"),
            "arrivals": lambda f: f["arrivals"].update(empty="2*(K//64)"),
            "bytes": lambda f: f["bytes"].update(full=8192),
        }
        for what, change in wrong.items():
            facts = copy.deepcopy(FACTS)
            change(facts)
            self.assertNotEqual(failures(facts), [], what)

    def test_a_protocol_with_a_wrong_parity_is_reported(self):
        doc = copy.deepcopy(DOC)
        doc["events"][3]["parity"] = value(0)  # the consumer always waits for parity 0
        self.assertTrue(any("parity" in f for f in failures(FACTS, doc)))

    def test_values_wrap_at_their_width(self):
        self.assertEqual(sim.evaluate(["add", 32, 0xFFFFFFFF, 2], {}), 1)
        self.assertEqual(sim.evaluate(["sdiv", 32, 0xFFFFFFFC, 2], {}), 0xFFFFFFFE)
        with self.assertRaises(sim.Unknown):
            sim.evaluate(["phi", 32, "%r1"], {})


if __name__ == "__main__":
    unittest.main()
