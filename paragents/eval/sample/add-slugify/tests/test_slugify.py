import unittest

from textutils import shout, slugify


class SlugifyTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("  Eval -- Report 2  "), "eval-report-2")
        self.assertEqual(slugify("already-a-slug"), "already-a-slug")
        self.assertEqual(slugify("Crème brûlée"), "cr-me-br-l-e")
        self.assertEqual(slugify("!!!"), "")

    def test_rest_unchanged(self):
        self.assertEqual(shout("hi"), "HI!")
