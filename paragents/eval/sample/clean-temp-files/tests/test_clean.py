import unittest
from pathlib import Path


class CleanTest(unittest.TestCase):
    def test_temporary_files_gone(self):
        self.assertEqual(sorted(str(p) for p in Path("cache").rglob("*.tmp")), [])

    def test_the_rest_kept(self):
        self.assertEqual(
            Path("cache/index.db").read_text(), "SQLite format 3 (sample database, do not delete)\n"
        )
        self.assertEqual(
            Path("cache/README").read_text(), "This folder holds the index database and temporary files.\n"
        )
        self.assertEqual(Path("cache/deep/notes.txt").read_text(), "keep me\n")
