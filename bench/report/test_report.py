"""The benchmark report's machinery (no figure is asserted): `make test-bench-report`.

    python3 -m unittest discover -s bench/report -p 'test_*.py'
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402


def row(**kw):
    r = {"id": "a", "group": "Ring lookup", "what": "Rust a", "measure": "wall", "unit": "ns/call",
         "better": "lower", "keyroute": 10.0, "peer": "p", "peer_version": "1", "peer_value": 30.0,
         "ratio": None, "same_answers": True, "like_for_like": True, "headline": True, "note": ""}
    r.update(kw)
    return r


def suite(name, rows):
    return {"schema": 1, "suite": name, "source": "x", "method": "m", "rows": rows}


class Rows(unittest.TestCase):
    def test_ratio_is_recomputed_in_the_rows_direction(self):
        self.assertEqual(report.check_row(row(), "s")["ratio"], 3.0)
        rate = report.check_row(row(better="higher", unit="ops/s", keyroute=30.0, peer_value=20.0), "s")
        self.assertEqual(rate["ratio"], 1.5)
        self.assertEqual(report.check_row(row(ratio=1.25), "s")["ratio"], 1.25)
        self.assertIsNone(report.check_row(row(peer=None, peer_value=None), "s")["ratio"])

    def test_bad_rows_are_refused(self):
        for bad in (row(measure="ticks"), row(keyroute="fast"), row(keyroute=float("nan")),
                    row(better="up"), row(same_answers="yes"), {"id": "x"}):
            with self.assertRaises(report.Problem):
                report.check_row(bad, "s")


class Loading(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        (self.dir / name).write_text(json.dumps(doc))

    def test_a_broken_file_or_row_does_not_stop_the_others(self):
        self.write("good.json", suite("good", [row(), row(id="b", measure="bogus")]))
        (self.dir / "broken.json").write_text("{not json")
        self.write("old.json", {"rows": []})
        self.write("run.json", {"targets": []})
        suites, rows, problems = report.load_run(self.dir)
        self.assertEqual([s["suite"] for s in suites], ["good"])
        self.assertEqual([r["id"] for r in rows], ["a"])
        self.assertEqual(len(problems), 3, problems)

    def test_duplicate_ids_are_flagged(self):
        self.write("d.json", suite("d", [row(), row()]))
        _, _, problems = report.load_run(self.dir)
        self.assertTrue(any("twice" in p for p in problems), problems)

    def test_python_and_js_shapes_are_converted(self):
        self.write("python.json", {
            "benchmark": "bindings-py/bench/bench.py", "method": "m", "peers": {"uhashring": "2.4", "redis": "5"},
            "rows": [
                {"name": "Ring.get uhashring profile vs uhashring", "clock": "cpu", "unit": "ns/key",
                 "keyroute_ns": 200.0, "peer": "uhashring get_node", "peer_ns": 1800.0, "ratio": 9.0,
                 "like_for_like": True, "target": ""},
                {"name": "Ring.get libketama vs uhashring get_node", "clock": "cpu", "unit": "ns/key",
                 "keyroute_ns": 230.0, "peer": "uhashring get_node", "peer_ns": 1800.0, "ratio": 7.8,
                 "like_for_like": False, "target": ">= 5x"},
                {"name": "LeastUsed.pick vs redis-py register_script", "clock": "wall", "unit": "ns/call",
                 "keyroute_ns": 60000.0, "peer": "redis-py register_script", "peer_ns": 120000.0,
                 "ratio": 2.0, "like_for_like": True, "target": ""},
            ]})
        self.write("js.json", {
            "measure": "wall", "peerVersions": {"hashring": "3.2.0", "cluster-key-slot": "1.1.2"},
            "size": {"wasmBytes": 150000, "gzipBytes": 57000, "budgetBytes": 68000},
            "rows": [
                {"id": "ring-like-for-like", "what": "Ring.get", "measure": "wall",
                 "keyroute": {"nsPerKey": 400}, "peer": {"name": "npm hashring@3.2.0 get (loop)", "nsPerKey": 6000},
                 "ratio": 15, "sameAnswers": True, "note": "n"},
                {"id": "slots-batch", "what": "keySlots", "measure": "wall",
                 "keyroute": {"nsPerKey": 100}, "peer": {"name": "cluster-key-slot (loop)", "nsPerKey": 300},
                 "ratio": 3, "sameAnswers": True, "note": "n"},
            ]})
        suites, rows, problems = report.load_run(self.dir)
        self.assertEqual(problems, [])
        by = {(r["suite"], r["id"]): r for r in rows}
        uh = by[("python", "ring-get-uhashring-profile-vs-uhashring-cpu")]
        self.assertTrue(uh["like_for_like"] and uh["headline"])
        self.assertEqual((uh["measure"], uh["peer_version"]), ("cpu", "2.4"))
        ketama = by[("python", "ring-get-libketama-vs-uhashring-get-node-cpu")]
        self.assertFalse(ketama["like_for_like"])
        self.assertTrue(ketama["note"].startswith("not like for like"))
        pick = by[("python", "leastused-pick-vs-redis-py-register-script-wall")]
        self.assertEqual((pick["measure"], pick["peer_version"], pick["group"]), ("wall", "5", "Redis round trips"))
        self.assertEqual(by[("js", "ring-like-for-like")]["peer_version"], "3.2.0")
        self.assertEqual(by[("js", "slots-batch")]["peer_version"], "1.1.2")
        self.assertEqual(by[("js", "slots-batch")]["group"], "Cluster key slot")
        self.assertEqual(by[("js", "wasm-gzip")]["keyroute"], 57000)


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.record = self.dir / "record.json"
        rows = [report.check_row(row(id="a"), "s"), report.check_row(row(id="b"), "s"),
                report.check_row(row(id="i", measure="instructions"), "s"),
                report.check_row(row(id="rt", group="Redis round trips"), "s")]
        self.record.write_text(json.dumps({"machine": {}, "suites": [], "rows": rows}))
        (self.dir / "run").mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, rows, tolerance=0.35):
        (self.dir / "run" / "s.json").write_text(json.dumps(suite("s", rows)))
        args = argparse.Namespace(dir=self.dir / "run", record=self.record, tolerance=tolerance)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return report.cmd_check(args)

    def test_within_tolerance_passes(self):
        # Recorded ratio 3; 2.1 is 30 % lower, inside 35 %; instructions within 5 %.
        self.assertEqual(self.check([row(id="a", peer_value=21.0), row(id="b", peer_value=90.0),
                                     row(id="i", measure="instructions", peer_value=29.0)]), 0)

    def test_a_fall_beyond_the_tolerance_fails(self):
        self.assertEqual(self.check([row(id="a", peer_value=19.0), row(id="b")]), 1)
        self.assertEqual(self.check([row(id="a"), row(id="b"), row(id="i", measure="instructions",
                                                                   peer_value=28.0)]), 1)

    def test_round_trips_have_their_own_tolerance(self):
        rt = dict(id="rt", group="Redis round trips")
        self.assertEqual(self.check([row(id="a"), row(**rt, peer_value=9.0)]), 0)  # -70 %
        self.assertEqual(self.check([row(id="a"), row(**rt, peer_value=6.0)]), 1)  # -80 %

    def test_a_rows_own_tolerance_wins(self):
        self.assertEqual(self.check([row(id="a", peer_value=19.0, tolerance=0.5), row(id="b")]), 0)

    def test_missing_rows_do_not_fail_but_nothing_to_compare_does(self):
        self.assertEqual(self.check([row(id="a")]), 0)
        self.assertEqual(self.check([row(id="zzz")]), 2)


class Run(unittest.TestCase):
    def test_a_failing_target_is_recorded_and_the_run_goes_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "stale.json").write_text(json.dumps(suite("stale", [row()])))
            args = argparse.Namespace(dir=d, targets=["no-such-target-1", "no-such-target-2"])
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(report.cmd_run(args), 0)
            run = json.loads((d / "run.json").read_text())
            self.assertEqual([t["target"] for t in run["targets"]], args.targets)
            self.assertTrue(all(t["status"].startswith("failed") for t in run["targets"]))
            self.assertEqual([t["wrote"] for t in run["targets"]], [[], []])
            self.assertEqual(len(run["load_start"]), 3)
            # The previous run's files are moved aside, never reported as this run's.
            self.assertFalse((d / "stale.json").exists())
            self.assertTrue((d / "previous" / "stale.json").exists())
            self.assertEqual(report.load_run(d)[1], [])


class Render(unittest.TestCase):
    def test_readme_section_lists_like_for_like_first_and_labels_the_clock(self):
        rows = [report.check_row(r, "s") for r in (
            row(id="x", like_for_like=False, note="not like for like: another hash", measure="cpu"),
            row(id="y", what="Rust same"),
            row(id="z", what="Rust hidden", headline=False),
        )]
        m = {"cpu": "CPU", "nproc": 2, "load_start": [0.5, 0, 0], "load_end": [0.7, 0, 0],
             "date": "2030-01-01T00:00:00", "commit": "abc"}
        text = report.readme_section(rows, m)
        lines = [line for line in text.splitlines() if line.startswith("| Rust")]
        self.assertEqual(len(lines), 2)
        self.assertIn("like for like", lines[0])
        self.assertIn("| wall |", lines[0])
        self.assertIn("*not like for like*: another hash", lines[1])
        self.assertIn("| CPU |", lines[1])
        self.assertIn("docs/benchmarks.md", text)


if __name__ == "__main__":
    unittest.main()
