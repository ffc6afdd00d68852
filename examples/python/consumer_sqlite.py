#!/usr/bin/env python3
"""A consumer for idemsim's messaging model that keeps its inbox and its
effects in a real SQLite database (the standard library's sqlite3), in the
folder idemsim gives it ($IDEMSIM_STATE_DIR, `state_folder = true` in the
scenario). It speaks idemsim's protocol (docs/protocol.md).

    consumer_sqlite.py [--tx=one|two]

--tx=one  the inbox row (the processed event's id) and the effect row are
          written in one SQLite transaction: a crash keeps both or neither
          (holds)
--tx=two  the effect row is committed in one transaction, the inbox row in
          a second one, in a step of its own: a crash between the two keeps
          the effect and loses the inbox row, and the broker's redelivery
          takes effect a second time (fails)

A crash kills this process (idemsim sends it SIGKILL); the restarted process
opens the same file and finds what was committed, and nothing else. Every
`start` line opens the database anew: a new run (restarted false) gets an
emptied folder, and a restart the files the crashed process left.
"""

import json
import os
import sqlite3
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def options(argv):
    tx = "one"
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name != "tx" or value not in ("one", "two"):
            sys.exit(f"consumer_sqlite.py: unknown option {arg!r}; use --tx=one or --tx=two")
        tx = value
    return tx


def open_db():
    folder = os.environ.get("IDEMSIM_STATE_DIR")
    if not folder:
        sys.exit("consumer_sqlite.py: no IDEMSIM_STATE_DIR; set state_folder = true in [consumer]")
    # isolation_level=None: this program says where transactions begin and end.
    db = sqlite3.connect(os.path.join(folder, "consumer.db"), isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS inbox (event_id INTEGER PRIMARY KEY)")
    db.execute("CREATE TABLE IF NOT EXISTS effects (event_id INTEGER, value INTEGER)")
    return db


def processed(db, event_id):
    return db.execute("SELECT 1 FROM inbox WHERE event_id = ?", (event_id,)).fetchone() is not None


def ack(delivery):
    return {"type": "send", "to": "broker",
            "payload": {"type": "ack", "id": delivery["event"]["id"], "receipt": delivery["receipt"]}}


def work(db, tx, delivery, out):
    """The effect row, and in the same transaction (--tx=one) the inbox row."""
    event = delivery["event"]
    db.execute("BEGIN IMMEDIATE")
    if processed(db, event["id"]):
        db.execute("COMMIT")
        out.append({"type": "log", "text": f"event {event['id']} is in the inbox: no second effect"})
        return "ack"
    db.execute("INSERT INTO effects VALUES (?, ?)", (event["id"], event["value"]))
    if tx == "one":
        db.execute("INSERT INTO inbox VALUES (?)", (event["id"],))
    db.execute("COMMIT")
    # The effect line goes in the step of the commit: what landed is what idemsim judges.
    out.append({"type": "effect", "op": event["id"], "payload": event["value"]})
    return "ack" if tx == "one" else "inbox"


def main():
    tx = options(sys.argv[1:])
    db = None
    jobs = {}  # timer id -> delivery (volatile: a crash loses it)
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            if db is not None:
                db.close()
            db = open_db()
            jobs = {}
            out.append({"type": "hello", "protocol": 2})
        elif m["type"] == "msg" and m["payload"]["type"] == "deliver":
            delivery = m["payload"]
            event_id = delivery["event"]["id"]
            jobs[f"work:{event_id}"] = delivery
            out.append({"type": "set_timer", "id": f"work:{event_id}", "after_ms": 100})
        elif m["type"] == "timer" and m["id"] in jobs:
            delivery = jobs.pop(m["id"])
            kind = m["id"].split(":")[0]
            if kind == "work":
                kind = work(db, tx, delivery, out)
            elif kind == "inbox":
                # The second transaction, in a step of its own.
                db.execute("INSERT OR IGNORE INTO inbox VALUES (?)", (delivery["event"]["id"],))
                kind = "ack"
            elif kind == "ack":
                out.append(ack(delivery))
                kind = None
            if kind is not None:
                # The next step, after a crash may fall in between.
                timer = f"{kind}:{delivery['event']['id']}"
                jobs[timer] = delivery
                out.append({"type": "set_timer", "id": timer, "after_ms": 0})
        emit(out)


if __name__ == "__main__":
    main()
