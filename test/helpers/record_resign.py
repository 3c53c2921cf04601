#!/usr/bin/python3
"""Tests only: edit a setup record and sign it again the way lib/record.c does.

    record_resign.py RECORD verify            exit 0 when the checksum matches
    record_resign.py RECORD set-config PATH PREVIOUS_FILE|- WRITTEN_FILE
        records that setup changed the config file PATH (as a proved setup
        does), so that remove's restore can be tested before the account
        provider exists to pass the proof.
"""
import hashlib, json, sys

def checksum(rec):
    body = {k: v for k, v in rec.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

path, verb = sys.argv[1], sys.argv[2]
rec = json.load(open(path))
if verb == "verify":
    sys.exit(0 if rec.get("checksum") == checksum(rec) else 1)
if verb == "set-config":
    cfg, prev, written = sys.argv[3:6]
    previous = None if prev == "-" else open(prev).read()
    text = open(written, "rb").read()
    rec["config"] = {"path": cfg, "existed": previous is not None, "previous": previous,
                     "previous_provider": None, "created_dirs": [],
                     "written_sha256": hashlib.sha256(text).hexdigest()}
rec["checksum"] = checksum(rec)
with open(path, "w") as f:
    f.write(json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=True) + "\n")
