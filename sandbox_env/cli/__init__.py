"""The `websandbox` command and the jobs it runs: image, eval, preflight, push."""
