#!/usr/bin/env python3
"""An outbox relay for idemsim's messaging model, in Python with the
standard library only. It speaks idemsim's protocol (docs/protocol.md): the
producer commits each state change with its outbox row in one transaction;
the relay reads the rows (a `publish` line from the producer for every row
not yet marked sent, again after the producer's publish_timeout_ms), publishes
them to the broker, and marks a row sent by answering the producer with a
`publish-ack`.

    relay.py [--mark=after-confirm|before-publish]

--mark=after-confirm   publish the row; mark it sent only when the broker
                       confirms it. A lost publish or a crash leaves the row
                       unmarked, and it is published again (a duplicate the
                       consumers' inbox absorbs): every event is delivered
                       (holds)
--mark=before-publish  mark the row sent as soon as it is read, then publish
                       it in a step of its own: a crash between the two steps,
                       or a publish the network loses, and the event is never
                       delivered (a violation of no-lost-effect)
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def options(argv):
    mark = "after-confirm"
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name != "mark" or value not in ("after-confirm", "before-publish"):
            sys.exit(f"relay.py: unknown option {arg!r}; use --mark=after-confirm or --mark=before-publish")
        mark = value
    return mark


def main():
    mark = options(sys.argv[1:])
    # Rows read and marked, waiting for their publish step: memory, lost at a crash.
    pending = {}
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            pending = {}
            out.append({"type": "hello", "protocol": 2})
        elif m["type"] == "msg" and m["payload"]["type"] == "publish":
            ev = m["payload"]["event"]
            if mark == "after-confirm":
                out.append({"type": "send", "to": "broker", "payload": {"type": "publish", "event": ev}})
            else:
                out.append({"type": "send", "to": "producer", "payload": {"type": "publish-ack", "id": ev["id"]}})
                pending[str(ev["id"])] = ev
                out.append({"type": "set_timer", "id": f"publish:{ev['id']}", "after_ms": 0})
        elif m["type"] == "msg" and m["payload"]["type"] == "publish-ack":
            if mark == "after-confirm":
                # The broker has the row: mark it sent.
                out.append({"type": "send", "to": "producer", "payload": {"type": "publish-ack", "id": m["payload"]["id"]}})
        elif m["type"] == "timer":
            ev = pending.pop(m["id"].split(":")[1], None)
            if ev is not None:
                out.append({"type": "send", "to": "broker", "payload": {"type": "publish", "event": ev}})
        emit(out)


if __name__ == "__main__":
    main()
