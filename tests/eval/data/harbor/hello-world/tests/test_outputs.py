import os
from pathlib import Path

hello = Path("/app/hello.txt")
assert hello.exists(), "/app/hello.txt does not exist"
assert hello.read_text() == os.environ["EXPECTED"] + "\n", repr(hello.read_text())
print("ok")
