#!/usr/bin/env python3
"""The reference solution of exercise 16 (`idemsim learn check 16 --program
"python3 examples/learn/python/solution.py"`), checked by the tests.

The processed event's id is stored in the same handler as the effect, so one
step (one transaction) either does both or neither; a copy of a handled event
finds the id and is only acked. The ack is in that step too: a crash after it
loses nothing, because the effect and the id are already stored.
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def main():
    stored = {}
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            stored = dict(m["storage"])
        elif m["type"] == "msg" and m["payload"]["type"] == "deliver":
            delivery = m["payload"]
            event = delivery["event"]
            key = f"processed:{event['id']}"
            if key in stored:
                out.append({"type": "log", "text": f"event {event['id']} already processed"})
            else:
                out.append({"type": "effect", "op": event["id"], "payload": event["value"]})
                out.append({"type": "store", "key": key, "value": True})
                stored[key] = True
            out.append({"type": "send", "to": "broker",
                        "payload": {"type": "ack", "id": event["id"], "receipt": delivery["receipt"]}})
        emit(out)


if __name__ == "__main__":
    main()
