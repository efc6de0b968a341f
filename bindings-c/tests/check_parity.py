#!/usr/bin/env python3
"""Holds the C column of docs/parity.md to the header: every name in a C `yes:` cell must
be declared in keyroute.h (a function, or a type/constant for names that are not called),
and every C cell must be `yes: ...` or `no: <reason>`.

usage: check_parity.py docs/parity.md bindings-c/include/keyroute.h
"""
import re
import sys


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def main():
    parity, header = sys.argv[1], sys.argv[2]
    text = open(header, encoding="utf-8").read()
    functions = set(re.findall(r"\b(keyroute_\w+)\s*\(", text))
    declared = functions | set(re.findall(r"\b((?:keyroute|KEYROUTE)_\w+)\b", text))
    rows = [cells(l) for l in open(parity, encoding="utf-8") if l.startswith("|")]
    head = rows[0]
    if "C" not in head:
        raise SystemExit("%s: no C column in %r" % (parity, head))
    col = head.index("C")
    problems, names, yes_rows = [], 0, 0
    for row in rows[2:]:  # past the header and its |---| line
        if len(row) != len(head):
            problems.append("row %r has %d cells, the header %d" % (row[0], len(row), len(head)))
            continue
        cell = row[col]
        if cell.startswith("yes:"):
            found = re.findall(r"`([^`]+)`", cell)
            if not found:
                problems.append("%s: a C yes cell names nothing" % row[0])
            yes_rows += 1
            for name in found:
                names += 1
                if name not in declared:
                    problems.append("%s: %s is not declared in %s" % (row[0], name, header))
                elif not name.startswith("KEYROUTE_") and name not in functions and \
                        not re.search(r"\b(struct|enum)\s+%s\b" % re.escape(name), text):
                    problems.append("%s: %s is not a function or type of %s" % (row[0], name, header))
        elif cell.startswith("no:"):
            if len(cell[3:].strip()) < 8:
                problems.append("%s: a C no cell needs a reason" % row[0])
        else:
            problems.append("%s: the C cell must start with yes: or no: (%r)" % (row[0], cell))
    for p in problems:
        print("check_parity: " + p, file=sys.stderr)
    if problems or yes_rows == 0:
        raise SystemExit(1)
    print("check_parity: %d C names in %d yes rows are declared in %s; every no has a reason"
          % (names, yes_rows, header))


if __name__ == "__main__":
    main()
