"""Sandbox backends: one interface (the prime-sandboxes client protocol), one module a backend."""
