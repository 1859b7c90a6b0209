import json
from pathlib import Path


def load_settings(path="settings.json"):
    return json.loads(Path(path).read_text())
