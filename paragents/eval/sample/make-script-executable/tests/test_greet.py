import os
import subprocess
import unittest


class GreetTest(unittest.TestCase):
    def test_runs(self):
        self.assertTrue(os.access("bin/greet", os.X_OK), "bin/greet is not executable")
        out = subprocess.run(["./bin/greet"], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out, "hello, eval\n")
