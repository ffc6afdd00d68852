#!/usr/bin/env python3
"""Exercise 16 of idemsim's learning path: your own consumer, in Python.

Edit this file, then let idemsim judge it:

    idemsim learn check 16 --program "python3 examples/learn/python/consumer.py"

idemsim runs it as a process and speaks JSON Lines with it (docs/protocol.md):
one JSON object per line on stdin, your answer on stdout, every handler ended
by {"type": "done"}. What you send in one handler happens as one step, one
transaction: a crash falls before it or after it, never inside.

As it stands, every delivery takes effect and is acked. The broker delivers an
event again when its ack is lost or the consumer crashed first, the producer's
relay publishes it again after a crash, and the network copies messages: some
events take effect twice, and the grader shows a seed and its trace.

Make every event take effect exactly once. What survives a crash is only what
you "store" (idemsim hands it back in the "start" line); everything else in
this process is forgotten at a restart.
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def main():
    stored = {}  # your copy of the durable storage; idemsim keeps the real one
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            # A new run, or a restart after a crash: only what was stored survives.
            stored = dict(m["storage"])
        elif m["type"] == "msg" and m["payload"]["type"] == "deliver":
            delivery = m["payload"]
            event = delivery["event"]
            # TODO: an event handled before must not take effect again.
            out.append({"type": "effect", "op": event["id"], "payload": event["value"]})
            out.append({"type": "send", "to": "broker",
                        "payload": {"type": "ack", "id": event["id"], "receipt": delivery["receipt"]}})
        emit(out)


if __name__ == "__main__":
    main()
