import hashlib
import unittest
from pathlib import Path


class PrimesTest(unittest.TestCase):
    def test_file(self):
        text = Path("primes.txt").read_text()
        lines = text.split()
        self.assertEqual(len(lines), 5133)
        self.assertEqual(lines[:5], ["2", "3", "5", "7", "11"])
        self.assertEqual(lines[-1], "49999")
        expected = "\n".join(lines) + "\n"
        self.assertEqual(text, expected)
