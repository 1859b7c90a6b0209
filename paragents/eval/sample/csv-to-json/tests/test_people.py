import json
import unittest
from pathlib import Path


class PeopleTest(unittest.TestCase):
    def test_json(self):
        self.assertEqual(
            json.loads(Path("people.json").read_text()),
            [
                {"name": "Ann", "age": 34, "city": "Lyon"},
                {"name": "Bob", "age": 27, "city": "Oslo"},
                {"name": "Chen", "age": 41, "city": "Porto"},
            ],
        )
