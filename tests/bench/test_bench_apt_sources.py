"""bench/toad_python.py takes sid's .deb files from the Debian archive apt is configured with (apt's own
source list, both formats), never from a host written in the code."""

from __future__ import annotations

import lzma
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench import toad_python
from bench.toad_python import SID_INDEX, apt_source_uris, sid_archive, sid_index, source_files

INDEX = "Package: python3.14-minimal\nVersion: 3.14.0-1\nFilename: pool/main/p/python3.14/p.deb\n\n"


def write_sources(etc: Path, main: str, security: str, other: str) -> None:
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(
        "# the one-line format\n"
        f"deb [signed-by=/usr/share/keyrings/k.gpg arch=amd64] {other}/ bookworm main\n"
        f"deb-src {other}-src bookworm main\n"
    )
    (etc / "sources.list.d" / "debian.sources").write_text(
        f"Types: deb\nURIs: {main}\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "# a comment between stanzas\n"
        f"Types: deb deb-src\nURIs:\n {security}\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nURIs: http://off.invalid/debian\nSuites: bookworm\nEnabled: no\n"
    )
    (etc / "sources.list.d" / "vendor.list.disabled").write_text("deb http://disabled.invalid/apt x main\n")


def test_both_formats_are_read_in_apts_order(tmp_path: Path) -> None:
    write_sources(
        tmp_path, "http://a.invalid/debian", "http://b.invalid/debian-security", "https://c.invalid"
    )
    assert source_files(tmp_path) == [
        tmp_path / "sources.list",
        tmp_path / "sources.list.d" / "debian.sources",
    ]
    assert apt_source_uris(tmp_path) == [
        "https://c.invalid",
        "http://a.invalid/debian",
        "http://b.invalid/debian-security",
    ]
    assert apt_source_uris(tmp_path, "bookworm") == ["https://c.invalid", "http://a.invalid/debian"]


class Archive(BaseHTTPRequestHandler):
    """A loopback Debian archive: /debian serves sid's index, anything else is 404."""

    def do_GET(self) -> None:
        if self.path == f"/debian/{SID_INDEX}":
            body = lzma.compress(INDEX.encode())
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def archive() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Archive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_first_source_that_serves_sid_is_used(tmp_path: Path, archive: str) -> None:
    write_sources(tmp_path, f"{archive}/debian", f"{archive}/debian-security", f"{archive}/elsewhere")
    uri, packages = sid_archive(tmp_path, "bookworm")
    assert uri == f"{archive}/debian"  # /elsewhere (first in apt's order) answered 404
    assert sid_index(packages)["python3.14-minimal"]["Filename"] == "pool/main/p/python3.14/p.deb"


def test_no_source_serving_sid_is_one_error_naming_the_files(tmp_path: Path, archive: str) -> None:
    write_sources(tmp_path, f"{archive}/nothing", f"{archive}/debian", f"{archive}/elsewhere")
    with pytest.raises(SystemExit) as caught:
        sid_archive(tmp_path, "bookworm")  # /debian serves sid but only carries bookworm-security
    said = str(caught.value)
    assert str(tmp_path / "sources.list") in said and f"{archive}/nothing (Not Found)" in said


def test_no_host_is_written_in_the_script() -> None:
    assert not re.search(r"\w+://\w", Path(toad_python.__file__).read_text())
