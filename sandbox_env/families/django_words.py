"""Words a django spec must not use: identifiers and terms that name the technique instead of the behaviour.

A spec that says "use select_related" or "raise it from clean_email" hands over the solution;
one that says what a call, a form, a model or a request gives leaves the technique to the
model. The composed tier's tests (tests/test_django_composed.py) and the django task generator
(generate/dj_render.py's screen) refuse these words in a title or a spec.
"""

from __future__ import annotations

import re

API_WORDS = re.compile(
    r"\bsignals?\b|\breceivers?\b|post_save|pre_save|post_delete|pre_delete|m2m_changed|dispatch_uid|"
    r"select_related|prefetch_related|\bPrefetch\b|\batomic\b|on_commit|savepoint|select_for_update|"
    r"\bF\(|\bF expressions?\b|\bannotat\w*|\baggregat\w*|\bSubquery\b|\bOuterRef\b|\bExists\(|"
    r"\b(Count|Sum|Max|Min|Avg|Coalesce)\(|ModelForm|ModelChoiceField|clean_\w+|add_error|"
    r"validate_constraints|UniqueConstraint|CheckConstraint|Meta\.constraints|get_object_or_404|"
    r"require_(POST|GET|safe|http_methods)|JsonResponse|\b(List|Detail|Create|Update|Delete)View\b|"
    r"bulk_create|assertNumQueries|django_assert\w*|CaptureQueriesContext"
)
