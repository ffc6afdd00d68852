#!/usr/bin/env python3
"""A bank (the payment provider) for idemsim's payment model, in Python with
the standard library only. It speaks idemsim's protocol (docs/protocol.md):
it gets transfers and status queries from the payment service, answers them,
and reports each transfer it executes as an effect: money leaving the bank,
which idemsim's ledger counts.

    bank.py [--dedup=key|none]

--dedup=key   a transfer whose idempotency key the bank has seen is answered
              "done" and not executed again; the key is stored in the step
              of the transfer (one transaction), so it survives a crash
--dedup=none  every transfer that arrives is executed (a bank that ignores
              the key): a transfer the service sends again pays twice
"""

import json
import sys


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def options(argv):
    dedup = "key"
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name != "dedup" or value not in ("key", "none"):
            sys.exit(f"bank.py: unknown option {arg!r}; use --dedup=key or --dedup=none")
        dedup = value
    return dedup


def transfer(t, dedup, stored, out):
    """Executes a transfer once per idempotency key; answers it either way."""
    paid_key = f"paid:{t['claim']}:{t['part']}"
    paid = stored.get(paid_key, 0)
    key = t["idempotency_key"]
    answer = {"type": "transfer-done", "claim": t["claim"], "part": t["part"],
              "reference": t["reference"], "result": "done"}
    if dedup == "key" and key is not None and f"key:{key}" in stored:
        out.append({"type": "log", "text": f"key {key} seen: no second transfer"})
    elif t["if_paid_eur"] is not None and t["if_paid_eur"] != paid:
        answer.update(result="refused", paid_eur=paid)
    else:
        out.append({"type": "effect", "op": t["claim"], "payload": t["amount_eur"]})
        # The transfer, its total and its key in the same step: one transaction.
        stored[paid_key] = paid + t["amount_eur"]
        out.append({"type": "store", "key": paid_key, "value": stored[paid_key]})
        if dedup == "key" and key is not None:
            stored[f"key:{key}"] = True
            out.append({"type": "store", "key": f"key:{key}", "value": True})
    out.append({"type": "send", "to": "service", "payload": answer})


def main():
    dedup = options(sys.argv[1:])
    stored = {}
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            stored = dict(m["storage"])
            out.append({"type": "hello", "protocol": 2})
        elif m["type"] == "msg" and m["payload"]["type"] == "transfer":
            transfer(m["payload"], dedup, stored, out)
        elif m["type"] == "msg" and m["payload"]["type"] == "status-query":
            q = m["payload"]
            out.append({"type": "send", "to": m["from"], "payload": {
                "type": "status-reply", "claim": q["claim"], "part": q["part"],
                "question": q["question"], "paid_eur": stored.get(f"paid:{q['claim']}:{q['part']}", 0)}})
        emit(out)


if __name__ == "__main__":
    main()
