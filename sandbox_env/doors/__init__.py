"""The front doors: the classic vf.SandboxEnv, the v1 taskset and toolset, and what both show the model."""
