"""Runs a `wsv protocol --format json` document (schema wsv-protocol/1) for concrete launch values.

The protocol IR is a tree of loops and events whose trip counts, conditions, barrier slots,
parities and byte counts are expression trees over the kernel's parameters, special registers
and loop counters. This module evaluates them for one CTA and a choice of K, M, N, ... and
lists what each role does, in order: every wait (barrier, slot, parity), every arrival
(barrier, slot, CTA, arrivals), every expect_tx and every byte count a copy completes. The fact
checks (check_facts.py) compare those lists with the facts of a kernel's protocol comment.

Conditions that read values the analysis could not resolve (the result of a peek) count as
true: the blocking path is the one a wait must be counted on.
"""


class Unknown(Exception):
    """An expression read a value the analysis does not know."""


def _mask(width):
    return (1 << width) - 1


def _signed(value, width):
    value &= _mask(width)
    return value - (1 << width) if value >> (width - 1) else value


def evaluate(tree, env):
    """Evaluates an expression tree of the JSON document. env maps ('param', name),
    ('sreg', name) and ('iter', loop) to integers."""
    if tree is None:
        raise Unknown("no value")
    if isinstance(tree, int):
        return tree
    op, width = tree[0], tree[1]
    if op in ("param", "sreg"):
        key = (op, tree[2])
        if key not in env:
            raise Unknown(f"no value for {tree[2]}")
        return env[key] & _mask(width)
    if op == "iter":
        key = ("iter", tree[3])
        if key not in env:
            raise Unknown(f"loop counter {tree[2]} outside its loop")
        return env[key] & _mask(width)
    if op in ("phi", "opaque", "elect", "load", "symbol", "mapa"):
        raise Unknown(f"{op} value")
    args = [evaluate(a, env) for a in tree[2:]]
    m = _mask(width)
    if op == "zext":
        return args[0] & m
    if op == "trunc":
        return args[0] & m
    if op == "sext":
        inner = tree[2][1] if isinstance(tree[2], list) else width
        return _signed(args[0], inner) & m
    if op == "not":
        return ~args[0] & m
    if op == "select":
        return args[1] if args[0] else args[2]
    a, b = args[0], args[1]
    if op == "add":
        return (a + b) & m
    if op == "mul":
        return (a * b) & m
    if op in ("udiv", "urem", "sdiv", "srem") and b == 0:
        raise Unknown("division by zero")
    if op == "udiv":
        return (a // b) & m
    if op == "urem":
        return (a % b) & m
    if op == "sdiv":
        sa, sb = _signed(a, width), _signed(b, width)
        q = abs(sa) // abs(sb)
        return (q if (sa < 0) == (sb < 0) else -q) & m
    if op == "srem":
        sa, sb = _signed(a, width), _signed(b, width)
        r = abs(sa) % abs(sb)
        return (r if sa >= 0 else -r) & m
    if op == "shl":
        return (a << b) & m if b < width else 0
    if op == "lshr":
        return a >> b if b < width else 0
    if op == "ashr":
        return (_signed(a, width) >> min(b, width - 1)) & m
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    if op == "umin":
        return min(a, b)
    if op == "umax":
        return max(a, b)
    if op == "smin":
        return min(_signed(a, width), _signed(b, width)) & m
    if op == "smax":
        return max(_signed(a, width), _signed(b, width)) & m
    if op == "mulhiu":
        return (a * b) >> width & m
    operand_width = tree[2][1] if isinstance(tree[2], list) else (
        tree[3][1] if isinstance(tree[3], list) else 32)
    if op == "eq":
        return int(a == b)
    if op == "ult":
        return int(a < b)
    if op == "ule":
        return int(a <= b)
    if op == "slt":
        return int(_signed(a, operand_width) < _signed(b, operand_width))
    if op == "sle":
        return int(_signed(a, operand_width) <= _signed(b, operand_width))
    raise Unknown(f"operator {op}")


def value(v, env):
    """A {"text", "tree"} value of the document, evaluated; None when absent."""
    if v is None:
        return None
    if "unknown" in v:
        raise Unknown(v["unknown"])
    return evaluate(v["tree"], env)


def holds(v, env):
    """A condition; absent means always, unknown values count as true (see the module doc)."""
    if v is None:
        return True
    try:
        return bool(value(v, env))
    except Unknown:
        return True


class Trace:
    """What one role (or the prologue or epilogue) of one CTA did, in order."""

    def __init__(self):
        self.waits = []     # (barrier name, slot, parity)
        self.arrivals = []  # (barrier name, slot, cta rank, arrivals)
        self.expect = []    # (barrier name, slot, cta rank, bytes)
        self.copies = []    # (barrier name, slot, [cta ranks], bytes)
        self.events = []    # every event run: (kind, event json)


def _threads(event):
    count = event["threads"].get("count")
    if count is None:
        raise Unknown("thread count of " + event["text"])
    return count


def _barrier(kernel, event, env, rank):
    ref = event.get("barrier")
    if not ref or "array" not in ref:
        raise Unknown("unresolved barrier in " + event["text"])
    name = kernel["barriers"][ref["array"]]["name"]
    slot = value(ref["slot"], env)
    peer = ref.get("peer_rank")
    target = value(peer, env) if peer else rank
    return name, slot, target


def _mask_ranks(event, env, rank, cluster):
    if not event.get("multicast"):
        return [rank]
    mask = value(event.get("cta_mask"), env)
    return [r for r in range(cluster) if mask >> r & 1]


def run(kernel, items, env, rank, trace):
    """Runs a list of items (events and loops) of the document for CTA `rank`."""
    cluster = kernel["launch"]["cluster_size"]
    for item in items:
        if "loop" in item:
            loop = kernel["loops"][item["loop"]]
            if not holds(loop["when"], env):
                continue
            trips = value(loop["trip"], env)
            for i in range(trips):
                inner = dict(env)
                inner[("iter", loop["ptx_loop"])] = i
                run(kernel, loop["body"], inner, rank, trace)
            continue
        event = kernel["events"][item["event"]]
        if not holds(event["when"], env):
            continue
        kind = event["kind"]
        trace.events.append((kind, event))
        if kind == "wait":
            name, slot, _ = _barrier(kernel, event, env, rank)
            trace.waits.append((name, slot, value(event["parity"], env)))
        elif kind in ("arrive", "arrive.expect_tx", "tcgen05.commit", "cp.async.mbarrier.arrive"):
            name, slot, target = _barrier(kernel, event, env, rank)
            count = value(event["count"], env) if event.get("count") else 1
            for cta in (_mask_ranks(event, env, target, cluster) if kind == "tcgen05.commit"
                        else [target]):
                trace.arrivals.append((name, slot, cta, count * _threads(event)))
            if kind == "arrive.expect_tx":
                trace.expect.append((name, slot, target,
                                     value(event["tx_bytes"], env) * _threads(event)))
        elif kind == "expect_tx":
            name, slot, target = _barrier(kernel, event, env, rank)
            trace.expect.append((name, slot, target,
                                 value(event["tx_bytes"], env) * _threads(event)))
        elif kind == "async-load" and event.get("barrier"):
            name, slot, target = _barrier(kernel, event, env, rank)
            ranks = _mask_ranks(event, env, target, cluster)
            trace.copies.append((name, slot, ranks, value(event["bytes"], env) * _threads(event)))


def role_runs(kernel, role, env):
    """Whether a role runs in the CTA env describes (its condition may name a CTA rank)."""
    return holds(role.get("when"), env)
