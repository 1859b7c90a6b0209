import subprocess
import sys
import tempfile
import unittest
from pathlib import Path


def run(*args):
    return subprocess.run([sys.executable, "count.py", *args], capture_output=True, text=True, check=True).stdout


class CountTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.file = str(Path(self.tmp.name) / "f.txt")
        Path(self.file).write_text("one two\nthree\nfour five six\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_words(self):
        self.assertEqual(run(self.file).strip(), "6")

    def test_lines(self):
        self.assertEqual(run("--lines", self.file).strip(), "3")
