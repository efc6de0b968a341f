"""test-dist: the wheel from dist/ installed alone in a new venv, run with `python -I`
(nothing from the source tree on sys.path). Reads the case file of case.py and prints each
key's node, one per line.

usage: python -I lookup.py CASE_FILE
"""
import sys

import keyroute

assert keyroute.__file__.startswith(sys.prefix), keyroute.__file__
profile, spec, *keys = open(sys.argv[1], encoding="utf-8").read().splitlines()
ring = keyroute.Ring.from_spec(spec, profile=profile)
sys.stdout.write("".join(ring.get(k) + "\n" for k in keys))
