#!/usr/bin/env python3
"""A payment service for idemsim's payment model, in Python with the
standard library only. It speaks idemsim's protocol (docs/protocol.md): the
claims system's payment requests come in with an Idempotency-Key, and the
service pays each claim through the built-in bank, which does not
deduplicate (bank.accepts_key = false): the service's own key table is all
that stands between a retried request and a second payment.

    service.py [--claim=same-tx|check-then-act]

--claim=same-tx         the key is claimed (a row "in progress") in the same
                        step as the transfer leaves: one transaction. A
                        second request with the key finds the row and is
                        answered 409 (in progress) or "paid"; after a crash
                        the service asks the bank what the claims in progress
                        paid, and finishes them (holds)
--claim=check-then-act  the key is looked up, the transfer sent, and the key
                        stored only when the bank confirms: two steps, so a
                        retry that comes between them finds no key and pays
                        a second time (a violation of no-duplicate-effect)

Each answer to idemsim is one step: everything in it commits together, and
a crash falls between two answers, never inside one.
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def options(argv):
    claim = "same-tx"
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name != "claim" or value not in ("same-tx", "check-then-act"):
            sys.exit(f"service.py: unknown option {arg!r}; use --claim=same-tx or --claim=check-then-act")
        claim = value
    return claim


def reply(to, p, status, amount_eur):
    return {"type": "send", "to": to, "payload": {
        "type": "pay-reply", "claim": p["claim"], "part": p["part"],
        "attempt": p["attempt"], "status": status, "amount_eur": amount_eur}}


def transfer(row):
    return {"type": "send", "to": "bank", "payload": {
        "type": "transfer", "claim": row["claim"], "part": row["part"],
        "amount_eur": row["amount_eur"], "reference": row["reference"]}}


class Service:
    def __init__(self, claim, storage):
        self.claim = claim
        self.stored = dict(storage)
        # Who asked last for each claim, to answer when the bank confirms:
        # memory, lost at a crash (the client asks again).
        self.asking = {}

    def put(self, out, key, value):
        self.stored[key] = value
        out.append({"type": "store", "key": key, "value": value})

    def pay(self, sender, p, out):
        key = "key:" + (p["idempotency_key"] or f"claim-{p['claim']}-{p['part']}")
        row = self.stored.get(key)
        self.asking[key] = (sender, p)
        if row is not None and row["amount_eur"] != p["amount_eur"]:
            out.append(reply(sender, p, "mismatch", 0))
        elif row is not None and row["state"] == "done":
            out.append(reply(sender, p, "paid", row["amount_eur"]))
        elif row is not None:
            out.append(reply(sender, p, "in-progress", 0))
        else:
            new = {"state": "in-progress", "claim": p["claim"], "part": p["part"],
                   "amount_eur": p["amount_eur"],
                   "reference": p["key"] or {"claim": p["claim"], "part": p["part"], "n": 1, "passed": True}}
            if self.claim == "same-tx":
                # The claim and the transfer in one step: a retry finds the row.
                self.put(out, key, new)
            else:
                out.append({"type": "log", "text": f"{key} not found: paying, the key is stored when the bank confirms"})
            out.append(transfer(new))

    def done(self, d, out):
        key = next((k for k, r in sorted(self.stored.items())
                    if k.startswith("key:") and r["claim"] == d["claim"] and r["part"] == d["part"]), None)
        if key is None:
            # check-then-act: the key is stored only now.
            key = next((k for k, (_, p) in sorted(self.asking.items())
                        if p["claim"] == d["claim"] and p["part"] == d["part"]), None)
            if key is None:
                return
            _, p = self.asking[key]
            row = {"claim": p["claim"], "part": p["part"], "amount_eur": p["amount_eur"], "reference": d["reference"]}
        else:
            row = dict(self.stored[key])
        row["state"] = "done"
        self.put(out, key, row)
        if key in self.asking:
            sender, p = self.asking.pop(key)
            out.append(reply(sender, p, "paid", row["amount_eur"]))

    def recover(self, out):
        """After a crash: ask the bank about every claim still in progress."""
        for n, (key, row) in enumerate(sorted(self.stored.items())):
            if key.startswith("key:") and row["state"] == "in-progress":
                out.append({"type": "send", "to": "bank", "payload": {
                    "type": "status-query", "claim": row["claim"], "part": row["part"], "question": n + 1}})

    def status(self, r, out):
        for key, row in sorted(self.stored.items()):
            if key.startswith("key:") and row["claim"] == r["claim"] and row["part"] == r["part"] \
                    and row["state"] == "in-progress":
                if r["paid_eur"] >= row["amount_eur"]:
                    self.put(out, key, dict(row, state="done"))
                else:
                    out.append(transfer(row))


def main():
    claim = options(sys.argv[1:])
    service = Service(claim, {})
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            service = Service(claim, m["storage"])
            out.append({"type": "hello", "protocol": 2})
            if m["restarted"]:
                service.recover(out)
        elif m["type"] == "msg":
            p = m["payload"]
            if p["type"] == "pay":
                service.pay(m["from"], p, out)
            elif p["type"] == "transfer-done":
                service.done(p, out)
            elif p["type"] == "status-reply":
                service.status(p, out)
        emit(out)


if __name__ == "__main__":
    main()
