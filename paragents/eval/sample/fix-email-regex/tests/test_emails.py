import unittest

from emails import valid_email


class EmailTest(unittest.TestCase):
    def test_plus(self):
        self.assertTrue(valid_email("ann+news@example.org"))

    def test_still_valid(self):
        self.assertTrue(valid_email("bob.smith@mail.example.com"))

    def test_still_invalid(self):
        for bad in ("no-at.example.org", "a b@example.org", "@example.org", "ann@", "ann@example"):
            self.assertFalse(valid_email(bad), bad)
