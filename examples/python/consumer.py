#!/usr/bin/env python3
"""A consumer for idemsim's messaging model, in Python with the standard
library only. It speaks idemsim's protocol (docs/protocol.md): one JSON object
per line on stdin and stdout, every handler ended by {"type": "done"}.

    consumer.py [--dedup=store|memory|if-redelivered|none]
                [--ack=after-commit|before-commit|checked-before-commit]
                [--processing-ms=N]
                [--renew-ms=N]

--dedup=store   the processed event's id is stored in the same step as the
                effect: one transaction, so it survives every crash (holds)
--dedup=memory  processed ids are kept in a Python set: a crash forgets them
--dedup=if-redelivered  looks for the stored id only when the broker flags
                the delivery as redelivered (RabbitMQ's flag): a second copy
                the producer published is a new message, delivered unflagged
--dedup=none    every delivery takes effect
--renew-ms=N    while working on a delivery, extend its lease every N ms
                (0, the default: never), so that work longer than the
                broker's visibility timeout is not delivered a second time
--ack=before-commit  acks a delivery on arrival, before the work is done
--ack=checked-before-commit  when the work is done, acks asking for the
                result ("result": true) and commits only if the broker
                answers that the ack counted (Pub/Sub's exactly-once
                delivery, broker.exactly_once_delivery = true); a failed ack
                means another delivery is out, and the work is dropped

A delivery is worked on for --processing-ms (a timer), then committed (the
effect, plus the processed id with --dedup=store), then acked in a step of its
own: the database and the broker are two systems, so a crash may fall between
the commit and the ack, and the broker then delivers the event again.
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    # One flush per handler: idemsim waits for the done line.
    sys.stdout.flush()


def options(argv):
    opts = {"dedup": "store", "ack": "after-commit", "processing-ms": "200", "renew-ms": "0"}
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name not in opts or not value:
            sys.exit(f"consumer.py: unknown option {arg!r}; see the usage at the top of the file")
        opts[name] = value
    if opts["dedup"] not in ("store", "memory", "if-redelivered", "none"):
        sys.exit(f"consumer.py: --dedup is store, memory, if-redelivered or none, not {opts['dedup']!r}")
    if opts["ack"] not in ("after-commit", "before-commit", "checked-before-commit"):
        sys.exit(f"consumer.py: --ack is after-commit, before-commit or checked-before-commit, not {opts['ack']!r}")
    return opts["dedup"], opts["ack"], int(opts["processing-ms"]), int(opts["renew-ms"])


def ack(event_id, receipt):
    return to_broker("ack", event_id, receipt)


def to_broker(kind, event_id, receipt, **extra):
    return {"type": "send", "to": "broker",
            "payload": {"type": kind, "id": event_id, "receipt": receipt, **extra}}


def commit(delivery, dedup, stored, seen, out):
    """The effect, and with --dedup=store the processed id, in one step."""
    event_id = delivery["event"]["id"]
    key = f"processed:{event_id}"
    looks = dedup == "store" or (dedup == "if-redelivered" and delivery["redelivered"])
    if (looks and key in stored) or (dedup == "memory" and event_id in seen):
        out.append({"type": "log", "text": f"event {event_id} already processed: no second effect"})
        return
    out.append({"type": "effect", "op": event_id, "payload": delivery["event"]["value"]})
    if dedup in ("store", "if-redelivered"):
        out.append({"type": "store", "key": key, "value": True})
        stored[key] = True
    elif dedup == "memory":
        seen.add(event_id)


def main():
    dedup, ack_mode, processing_ms, renew_ms = options(sys.argv[1:])
    stored = {}      # a copy of the durable storage idemsim keeps for us
    jobs = {}        # event id -> delivery being worked on (volatile)
    unacked = {}     # event id -> receipt to ack after the commit (volatile)
    checking = {}    # event id -> delivery whose ack result is awaited (volatile)
    seen = set()     # --dedup=memory: processed ids, lost on a crash

    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            # A new run, or a restart after a crash: everything in memory is
            # gone; only what was stored survives.
            stored = dict(m["storage"])
            jobs, unacked, checking, seen = {}, {}, {}, set()
        elif m["type"] == "msg" and m["payload"]["type"] == "deliver":
            delivery = m["payload"]
            event_id = delivery["event"]["id"]
            jobs[event_id] = delivery
            if ack_mode == "before-commit":
                out.append(ack(event_id, delivery["receipt"]))
            out.append({"type": "set_timer", "id": f"work:{event_id}", "after_ms": processing_ms})
            if renew_ms > 0:
                out.append({"type": "set_timer", "id": f"renew:{event_id}", "after_ms": renew_ms})
        elif m["type"] == "msg" and m["payload"]["type"] == "ack-result":
            result = m["payload"]
            delivery = checking.get(result["id"])
            if delivery is not None and delivery["receipt"] == result["receipt"]:
                del checking[result["id"]]
                if result["ok"]:
                    commit(delivery, dedup, stored, seen, out)
                else:
                    out.append({"type": "log", "text": f"ack of event {result['id']} failed: work dropped"})
                if renew_ms > 0:
                    out.append({"type": "cancel_timer", "id": f"renew:{result['id']}"})
        elif m["type"] == "timer":
            kind, _, number = m["id"].partition(":")
            event_id = int(number)
            if kind == "work" and event_id in jobs:
                delivery = jobs.pop(event_id)
                if ack_mode == "checked-before-commit":
                    # Ask first; the commit waits for the answer.
                    checking[event_id] = delivery
                    out.append(to_broker("ack", event_id, delivery["receipt"], result=True))
                else:
                    commit(delivery, dedup, stored, seen, out)
                if ack_mode == "after-commit":
                    unacked[event_id] = delivery["receipt"]
                    out.append({"type": "set_timer", "id": f"ack:{event_id}", "after_ms": 0})
                # A checked ack keeps the lease until its result is in.
                if renew_ms > 0 and ack_mode != "checked-before-commit":
                    out.append({"type": "cancel_timer", "id": f"renew:{event_id}"})
            elif kind == "ack" and event_id in unacked:
                out.append(ack(event_id, unacked.pop(event_id)))
            elif kind == "renew" and (event_id in jobs or event_id in checking):
                # Still working, or waiting to hear whether the ack counted:
                # the lease of this delivery runs for another visibility
                # timeout from when the broker gets this.
                delivery = jobs.get(event_id) or checking[event_id]
                out.append(to_broker("extend", event_id, delivery["receipt"]))
                out.append({"type": "set_timer", "id": f"renew:{event_id}", "after_ms": renew_ms})
        emit(out)


if __name__ == "__main__":
    main()
