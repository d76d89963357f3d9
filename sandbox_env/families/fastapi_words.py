"""Words a fastapi spec of the composed or generated tiers may not use.

Such a spec says what a client sends and gets back, never which FastAPI call to write
(`API_WORDS`: identifiers that name the technique instead of the behaviour), and carries no
string of FastAPI's own documentation examples (`DOCS_STRINGS`), which a policy could match
against the docs instead of reading the spec. tests/test_fastapi_composed.py holds the
hand-written composed specs to this rule; stages/generate_fastapi.py's screen holds every generated
spec to it before any container starts.
"""

from __future__ import annotations

import re

API_WORDS = re.compile(
    r"APIRouter|Depends|RequestValidationError|HTTPException|lifespan|exception_handler|middleware\(|"
    r"BackgroundTasks|UploadFile|EventSourceResponse|ServerSentEvent|response_model|include_router|"
    r"Header\(|Cookie\(|Query\(|Body\(|Form\(|Field\(|embed|get_openapi|openapi_schema|app\.state|request\.state|"
    r"BaseModel|Pydantic|Starlette"
)
DOCS_STRINGS = re.compile(
    r"\bFoo\b|\bBar\b|\bBaz\b|fake-super-secret|johndoe|plumbus|portal-gun|Nope! I don't like|/items\b|/users/me|"
    r"X-Token|The Foo Wrestlers|There goes a rainbow|unicorn|Deep Learning FTW",
    re.IGNORECASE,
)


def refused_words(text: str) -> list[str]:
    """The API names and documentation strings a spec uses (none is allowed)."""
    return API_WORDS.findall(text) + DOCS_STRINGS.findall(text)
