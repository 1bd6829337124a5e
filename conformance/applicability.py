"""Which checks apply: one rule for every front-end and the report.

A case tagged with a requirement whose area the backend does not claim, or that does
not apply to the active profile, cannot be checked. It is skipped, never run and never
passed; the report then says "not claimed" or "n/a". An id the spec does not know is
left to the report (a stale tag), not skipped.

A backend may claim an area in part: it claims the area and declares the part it leaves
out (backends/protocol.py, "Partial claims"). The requirements of that part are "not
claimed", like those of an area it does not claim; the rest of the area is checked.
A partial claim may also leave out cases, by a tag of theirs that is not a requirement
ID: `scheduling-utc-only` leaves out the cases tagged `zones`, which name a zone other
than UTC (the rest of their requirement is checked by other cases). Such a case is
skipped as not applicable to the claim, never passed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from jobconform.backends.protocol import (
    RETRY_INTERVALS,
    RETRY_WITHOUT_JITTER,
    SCHEDULING_UTC_ONLY,
    Backend,
)
from jobconform.spec import Profile, Registry, Requirement, SpecError

# Each partial claim and the requirements it leaves out of its area.
PARTIAL_CLAIMS: Mapping[str, frozenset[str]] = {
    # No jitter modes: the delay function knows only "none".
    RETRY_WITHOUT_JITTER: frozenset({"RT-009"}),
    # Retries wait out the list of intervals the adapter gave: no formula of its own
    # (RT-002), hence no jitter on it (RT-009) and no server retry-after (RT-010).
    RETRY_INTERVALS: frozenset({"RT-002", "RT-009", "RT-010"}),
    # Timetables in UTC alone: no local time is skipped (SC-004) or repeated (SC-005).
    SCHEDULING_UTC_ONLY: frozenset({"SC-004", "SC-005"}),
}
# Each partial claim that leaves out cases: its area, the case tag that marks them, why.
CASE_TAGS_LEFT_OUT: Mapping[str, tuple[str, str, str]] = {
    SCHEDULING_UTC_ONLY: ("scheduling", "zones", "the case names a zone other than UTC"),
}


def left_out(capabilities: Collection[str]) -> dict[str, str]:
    """The requirements a backend's partial claims leave out, each with the claim."""
    return {requirement_id: claim for claim, ids in PARTIAL_CLAIMS.items()
            if claim in capabilities for requirement_id in sorted(ids)}


def unclaimed(requirement: Requirement, capabilities: Collection[str]) -> str | None:
    """Why a backend with these capabilities does not claim the requirement, or None."""
    if requirement.area not in capabilities:
        return f"does not claim area {requirement.area}"
    if not requirement.needs <= frozenset(capabilities):
        return "does not claim " + ", ".join(sorted(requirement.needs - set(capabilities)))
    claim = left_out(capabilities).get(requirement.id)
    if claim is not None:
        return f"claims {requirement.area} in part ({claim})"
    return None


def skip_reason(registry: Registry, backend: Backend, profile: Profile,
                requirement_ids: Sequence[str], case_tags: Collection[str] = ()) -> str | None:
    """Why a case checking these requirements, with these tags (all of them, IDs or not),
    must not run here, or None if it must run."""
    reasons: list[str] = []
    for requirement_id in requirement_ids:
        try:
            requirement = registry.requirement(requirement_id)
        except SpecError:
            continue
        # In the report's order: a requirement outside the profile is n/a before any
        # capability it needs is missing.
        why = unclaimed(requirement, backend.capabilities)
        if requirement.area not in backend.capabilities:
            reason = f"backend {backend.name} {why}"
        elif profile.name not in requirement.profiles:
            reason = f"requirement {requirement_id} does not apply to profile {profile.name}"
        elif why is not None:
            reason = f"backend {backend.name} {why} ({requirement_id})"
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    tags = {str(tag) for tag in case_tags}
    for claim, (area, tag, why) in CASE_TAGS_LEFT_OUT.items():
        if claim in backend.capabilities and tag in tags:
            reasons.append(f"backend {backend.name} claims {area} in part ({claim}): {why}"
                           f" (tag {tag}), not applicable")
    return "; ".join(reasons) if reasons else None
