import os
import subprocess
import sys
import unittest


class GreetingsTest(unittest.TestCase):
    def test_ascii_locale(self):
        env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii"}
        code = "import greetings; print(greetings.count_greetings('greetings.txt'))"
        out = subprocess.run(
            [sys.executable, "-X", "utf8=0", "-c", code], capture_output=True, text=True, env=env, check=True
        )
        self.assertEqual(out.stdout.strip(), "4")

    def test_reads_utf8_explicitly(self):
        with open("greetings.py", encoding="utf-8") as handle:
            source = handle.read()
        self.assertIn("utf", source.lower())
