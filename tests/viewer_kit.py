"""What the viewer's tests with and without a browser share: a site served on a loopback port."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from sandbox_env.viewer.serve import Site, make_server


@contextlib.contextmanager
def on_loopback(site: Site) -> Iterator[str]:
    """The site on a free loopback port, in a thread, for the block; yields its URL and stops it at the end."""
    server = make_server(site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
