import json
import unittest
from pathlib import Path


class SettingsTest(unittest.TestCase):
    def test_loads_with_every_value(self):
        data = json.loads(Path("settings.json").read_text())
        self.assertEqual(
            data, {"name": "inventory", "port": 8042, "debug": False, "owners": ["ann", "bob"], "retries": 3}
        )
