"""Which checks apply: one rule for every front-end.

A case tagged with a requirement whose area the backend does not claim, or that does
not apply to the active profile, cannot be checked. It is skipped, never run and never
passed; the report then says "not claimed" or "n/a". An id the spec does not know is
left to the report (a stale tag), not skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobconform.backends.protocol import Backend
from jobconform.spec import Profile, Registry, SpecError


def skip_reason(registry: Registry, backend: Backend, profile: Profile,
                requirement_ids: Sequence[str]) -> str | None:
    """Why a case checking these requirements must not run here, or None if it must run."""
    reasons: list[str] = []
    for requirement_id in requirement_ids:
        try:
            requirement = registry.requirement(requirement_id)
        except SpecError:
            continue
        # In the report's order: a requirement outside the profile is n/a before any
        # capability it needs is missing.
        if requirement.area not in backend.capabilities:
            reason = f"backend {backend.name} does not claim area {requirement.area}"
        elif profile.name not in requirement.profiles:
            reason = f"requirement {requirement_id} does not apply to profile {profile.name}"
        elif not requirement.needs <= backend.capabilities:
            missing = ", ".join(sorted(requirement.needs - backend.capabilities))
            reason = f"backend {backend.name} does not claim {missing} ({requirement_id})"
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons) if reasons else None
