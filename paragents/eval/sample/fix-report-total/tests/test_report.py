import tempfile
import unittest
from pathlib import Path

from make_db import make
from report import total_sales


class ReportTest(unittest.TestCase):
    def test_total(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "s.db")
            make(db, [("pen", 3, 4.5), ("ink", 1, 12.25), ("pad", 10, 30.0)])
            self.assertAlmostEqual(total_sales(db), 46.75)

    def test_empty(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "s.db")
            make(db, [])
            self.assertEqual(total_sales(db), 0)
