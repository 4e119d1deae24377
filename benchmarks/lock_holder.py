"""Another process holding a journal's write lock: `python benchmarks/lock_holder.py FILE SECONDS`.
Prints "held" once it has the lock, lets go after SECONDS. Used by hardening_bench.py and the tests."""

import sqlite3
import sys
import time

db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
