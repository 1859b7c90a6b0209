import unittest
from pathlib import Path


class HelloTest(unittest.TestCase):
    def test_hello(self):
        path = Path("/app/hello.txt")
        self.assertTrue(path.exists(), "/app/hello.txt does not exist")
        self.assertEqual(path.read_text().strip(), "Hello, world!")
