"""The Docker backend's parts besides sandboxes, as the registry hands them out (`backend_tools("docker")`).

The command line and image.py ask for these by backend name instead of importing this
package: cleanup (gc of containers whose owner is gone, settling one run), image
distribution (images.py) and the error that says the engine cannot be reached.
"""

from __future__ import annotations

from sandbox_env.sandbox.docker import images
from sandbox_env.sandbox.docker.cleanup import collect, settle_run
from sandbox_env.sandbox.docker.engine import DockerUnavailableError, engine_url
from sandbox_env.sandbox.registry import BackendTools

TOOLS = BackendTools(
    where=engine_url,
    gc=collect,
    settle_run=settle_run,
    image_exists=images.image_exists,
    choose_base=images.choose_base,
    build_image=images.build,
    unavailable=(DockerUnavailableError,),
    architecture=images.architecture,
)
