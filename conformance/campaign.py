"""Campaigns larger than one machine: a Hypothesis campaign over a range of seeds, split
into shards that CI runs as a job matrix, and `jobconform merge`, which joins the shards'
reports into one.

    jobconform run --suite hypothesis --seeds 0-99 --shard 3/8 --report-dir reports/shard-3
    jobconform merge reports/shard-*/report.json --report-dir reports/campaign

Shard K of N takes every N-th seed of the range, starting at its K-th: seeds 0-99 in 8
shards give shard 3 the seeds 2, 10, 18, ... Every machine runs once per seed. Behave and
Robot Framework are deterministic, so a sharded run leaves them to shard 1 instead of
repeating them N times. The merged report holds every shard's cases (so every verdict is
computed over all of them: a failure in one shard fails the requirement) and every
shard's traces, copied into its own traces/ folder.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from jobconform.conformance.compare import trace_on_disk
from jobconform.conformance.expectations import ExpectedFailure
from jobconform.conformance.report import (
    NOT_RERUN,
    NOT_RUN,
    ReportError,
    RunSummary,
    console_table,
    read_report,
    write_reports,
)
from jobconform.conformance.runner import SUITES, CaseResult, SuiteRun
from jobconform.spec import Registry, SpecError, load_registry

_SEEDS = re.compile(r"(\d+)(?:-(\d+))?")
_SHARD = re.compile(r"([1-9]\d*)/([1-9]\d*)")


class CampaignError(ValueError):
    """A seed range, a shard or a set of reports to merge that does not make sense."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def runs_example_suites(self) -> bool:
        """Behave and Robot run in the first shard only: they give the same result every
        time, so the other shards would repeat them for nothing."""
        return self.index == 1


def parse_seeds(text: str) -> tuple[int, ...]:
    """`A-B` (inclusive) or a single `A`.

    Raises:
        CampaignError: not a range, or an empty one.
    """
    match = _SEEDS.fullmatch(text.strip())
    if match is None:
        raise CampaignError(f"{text!r} is not a seed range: write A-B, e.g. 0-99")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if last < first:
        raise CampaignError(f"the seed range {text!r} is empty: its end is below its start")
    return tuple(range(first, last + 1))


def parse_shard(text: str) -> Shard:
    """`K/N`, with 1 <= K <= N.

    Raises:
        CampaignError: malformed, or K outside 1..N.
    """
    match = _SHARD.fullmatch(text.strip())
    if match is None:
        raise CampaignError(f"{text!r} is not a shard: write K/N, e.g. 2/4 (K counts from 1)")
    shard = Shard(int(match.group(1)), int(match.group(2)))
    if shard.index > shard.count:
        raise CampaignError(f"shard {shard} does not exist: K must be between 1 and {shard.count}")
    return shard


def shard_seeds(seeds: tuple[int, ...], shard: Shard) -> tuple[int, ...]:
    """The seeds one shard runs: every N-th, from its K-th.

    Raises:
        CampaignError: the shard would get no seed (more shards than seeds).
    """
    mine = seeds[shard.index - 1::shard.count]
    if not mine:
        raise CampaignError(f"shard {shard} gets no seed: {len(seeds)} seeds cannot be split"
                            f" over {shard.count} shards")
    return mine


@dataclass(frozen=True)
class CampaignPlan:
    """What one `run` does: its suites and, in a campaign, its seeds and shard."""

    suites: tuple[str, ...]
    seeds: tuple[int, ...] = ()  # empty: a single run at --seed
    shard: Shard | None = None

    def report_entry(self, examples: int) -> dict[str, object] | None:
        """The report's "campaign" entry; None outside a campaign. The examples per seed
        are part of it: shards that ran different counts are not one campaign."""
        if not self.seeds:
            return None
        return {"seeds": list(self.seeds), "shards": [str(self.shard)] if self.shard else [],
                "examples": examples}


def plan_campaign(seed_range: str | None, shard_text: str | None, seed: int,
                  suites: tuple[str, ...]) -> CampaignPlan:
    """Check `run`'s --seeds, --shard and --seed together.

    Raises:
        CampaignError: --shard without --seeds, --seeds with a --seed, a bad range or
            shard, or a shard past the first asked for Behave or Robot only.
    """
    if seed_range is None:
        if shard_text is not None:
            raise CampaignError("--shard splits a campaign: give its seeds with --seeds A-B")
        return CampaignPlan(suites)
    if seed != 0:
        raise CampaignError("give either --seed (one run) or --seeds (a campaign), not both")
    seeds = parse_seeds(seed_range)
    if shard_text is None:
        return CampaignPlan(suites, seeds)
    shard = parse_shard(shard_text)
    mine = shard_seeds(seeds, shard)
    if not shard.runs_example_suites:
        suites = tuple(suite for suite in suites if suite == "hypothesis")
        if not suites:
            raise CampaignError(f"shard {shard} runs the Hypothesis machines only (Behave and"
                                " Robot run in shard 1): add --suite hypothesis")
    return CampaignPlan(suites, mine, shard)


# --- merge -----------------------------------------------------------------------------

def _case(document: Mapping[str, Any]) -> CaseResult:
    return CaseResult(suite=document["suite"], name=document["name"],
                      requirements=tuple(document["requirements"]),
                      passed=document["passed"], message=document["message"],
                      blamed=tuple(document["blamed"]),
                      artifacts=tuple(document["artifacts"]),
                      completed=bool(document.get("completed", False)),
                      also_broken=tuple(document.get("also_broken", ())),
                      nondeterministic=bool(document.get("nondeterministic", False)),
                      hung=bool(document.get("hung", False)))


def _same(reports: list[tuple[Path, dict[str, Any]]], key: str) -> Any:
    values = {repr(document[key]) for _, document in reports}
    if len(values) > 1:
        shown = "; ".join(f"{path}: {document[key]!r}" for path, document in reports)
        raise CampaignError(f"the reports differ in {key!r}, so they are not shards of one"
                            f" campaign ({shown})")
    return reports[0][1][key]


def _shards(reports: list[tuple[Path, dict[str, Any]]]) -> list[str]:
    """Every shard named once, and none missing, when the reports name their shards."""
    named = [(path, shard) for path, document in reports
             for shard in (document.get("campaign") or {}).get("shards", [])]
    if not named:
        return []
    seen: dict[str, Path] = {}
    for path, shard in named:
        if shard in seen:
            raise CampaignError(f"shard {shard} is in both {seen[shard]} and {path}")
        seen[shard] = path
    counts = {int(shard.split("/")[1]) for shard in seen}
    if len(counts) > 1:
        raise CampaignError(f"the reports split the campaign differently: {sorted(seen)}")
    (count,) = counts
    missing = [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in seen]
    if missing:
        raise CampaignError(f"shard(s) {', '.join(missing)} missing: the merged report would"
                            " not cover the whole campaign")
    return sorted(seen, key=lambda shard: int(shard.split("/")[0]))


def _same_examples(reports: list[tuple[Path, dict[str, Any]]]) -> int | None:
    """The examples per seed every report ran (None where the reports, older, do not say).

    A shard written before reports recorded their examples says nothing either way: it
    joins the others, whose count stands for the merge."""
    counts = {(document.get("campaign") or {}).get("examples") for _, document in reports}
    counts.discard(None)
    if len(counts) > 1:
        shown = "; ".join(f"{path}: {(document.get('campaign') or {}).get('examples')}"
                          for path, document in reports)
        raise CampaignError("the reports are shards of different campaigns: they ran"
                            f" different --examples per seed ({shown})")
    return counts.pop() if counts else None


def _check_one_seed_range(reports: list[tuple[Path, dict[str, Any]]],
                          seeds: Iterable[int]) -> None:
    """Each shard ran the seeds that shard of one range A-B runs, A-B being the seeds the
    reports cover together. Shard 1/2 of 0-3 and shard 2/2 of 0-5 are both there once, yet
    joined they would lack seed 4: they are shards of two campaigns."""
    every = sorted(seeds)
    whole = tuple(range(every[0], every[-1] + 1))
    for path, document in reports:
        campaign = document.get("campaign") or {}
        if len(campaign.get("shards", [])) != 1:
            continue  # not one shard of a campaign (an earlier merge, or a whole range)
        (shard,) = campaign["shards"]
        wanted = list(shard_seeds(whole, parse_shard(shard)))
        ran = sorted(campaign["seeds"])
        if ran != wanted:
            raise CampaignError(
                f"the reports are shards of different campaigns: {path} is shard {shard}"
                f" with seed(s) {_seed_list(ran)}, but shard {shard} of the seeds"
                f" {whole[0]}-{whole[-1]} the reports cover together has"
                f" {_seed_list(wanted)}; merge the shards of one `run --seeds A-B` only")


def _seed_list(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds[:8])) + (", ..." if len(seeds) > 8 else "")


def _unselected(reports: list[tuple[Path, dict[str, Any]]]) -> str:
    """How the shards label a requirement they did not select: "not run" after --area or
    --requirement, "not rerun" after --rerun-failed (the report keeps only the label)."""
    labels = {NOT_RUN if any(verdict == NOT_RUN for body in document["requirements"].values()
                             for verdict in body["suites"].values()) else NOT_RERUN
              for _, document in reports if document["rerun_of"] is not None}
    if len(labels) > 1:
        raise CampaignError("the reports are not shards of one campaign: some selected their"
                            " requirements with --area or --requirement, others reran the"
                            " failed ones with --rerun-failed")
    return labels.pop() if labels else NOT_RERUN


def _copy_traces(cases: Iterable[CaseResult], source: Path, shard: str,
                 traces: Path) -> list[CaseResult]:
    """Copy each case's reproducers into the merged report's traces/ folder."""
    copied = []
    for case in cases:
        artifacts = []
        for artifact in case.artifacts:
            found = trace_on_disk(artifact, source)
            target = traces / found.name
            if target.exists() and target.resolve() != found.resolve():
                target = traces / f"shard-{shard.replace('/', '-of-')}-{found.name}"
            if found.exists() and target.resolve() != found.resolve():
                traces.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(found, target)
            artifacts.append(str(target))
        copied.append(replace(case, artifacts=tuple(artifacts)))
    return copied


def merge_reports(paths: Iterable[Path], registry: Registry, report_dir: Path) -> RunSummary:
    """Join the reports of one campaign's shards into one run.

    Raises:
        ReportError: a report is unreadable or off-schema.
        CampaignError: the reports are not shards of one campaign (another backend,
            profile, spec, deviation list), or a shard is missing or repeated.
    """
    reports: list[tuple[Path, dict[str, Any]]] = [(path, read_report(path)) for path in paths]
    if not reports:
        raise CampaignError("no reports to merge")
    spec_version = _same(reports, "spec_version")
    if spec_version != registry.version:
        raise CampaignError(f"the reports were made under spec {spec_version}; this is spec"
                            f" {registry.version}: merge with the jobconform that ran them")
    for key in ("backend", "profile", "capabilities", "expected_failures", "rerun_of"):
        _same(reports, key)
    shards = _shards(reports)
    examples = _same_examples(reports)
    seeds: set[int] = set()
    runs: dict[str, SuiteRun] = {}
    for path, document in reports:
        campaign = document.get("campaign") or {}
        mine = set(campaign.get("seeds") or [document["seed"]])
        shard = ",".join(campaign.get("shards", [])) or path.parent.name
        if document.get("campaign") and seeds & mine:
            raise CampaignError(f"{path} repeats seed(s) {sorted(seeds & mine)} of another"
                                " report")
        seeds |= mine
        for suite in document["suites"]:
            run = runs.setdefault(suite["suite"], SuiteRun(suite["suite"], 0.0))
            run.seconds += float(suite["seconds"])
            run.steps += int(suite["steps"])
            cases = [_case(case) for case in suite["cases"]]
            run.cases += _copy_traces(cases, path, shard, report_dir / "traces")
    if shards:
        _check_one_seed_range(reports, seeds)
    first = reports[0][1]
    expected = {rid: ExpectedFailure(rid, body["reason"], body["link"],
                                     frozenset(body["suites"]) if "suites" in body else None)
                for rid, body in first["expected_failures"].items()}
    selected = frozenset(first["rerun_of"]) if first["rerun_of"] is not None else None
    return RunSummary(
        str(first["backend"]), str(first["profile"]), frozenset(first["capabilities"]),
        registry.version, min(seeds), [runs[suite] for suite in SUITES if suite in runs],
        expected, selected, {"seeds": sorted(seeds), "shards": shards,
                             **({"examples": examples} if examples is not None else {})},
        unselected=_unselected(reports),
        expected_file=first.get("expected_failures_file"),
        libraries=dict(first.get("libraries", {})))


# `run`'s and `merge`'s --markdown: where the summary goes besides the report.
markdown_option = click.option(
    "--markdown", "markdown_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a Markdown summary here (it is appended to $GITHUB_STEP_SUMMARY as well"
         " when that is set).")


@click.command(name="merge")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT...",
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--report-dir", default=Path("reports/merged"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where the merged report.json, junit.xml and traces/ are written.")
@markdown_option
def merge_command(reports: tuple[Path, ...], report_dir: Path,
                  markdown_path: Path | None) -> None:
    """Join the reports of a sharded campaign (`run --seeds A-B --shard K/N`) into one.

    Every shard must be there once, and all must come from one backend, profile, spec
    and deviation list. The merged report's verdicts are computed over every shard's
    cases; each shard's traces are copied into REPORT_DIR/traces. The exit code is
    non-zero when the merged run fails, as for `jobconform run`.
    """
    try:
        registry = load_registry()
    except SpecError as error:
        raise click.ClickException(f"the spec does not load: {error}") from error
    try:
        summary = merge_reports(reports, registry, report_dir)
    except (ReportError, CampaignError) as error:
        # Bad input: the usage-error code, so that 1 keeps meaning "the merged run fails".
        raise click.BadParameter(str(error), param_hint="REPORT") from error
    written = write_reports(report_dir, summary, registry, markdown_path)
    click.echo(console_table(summary, registry))
    campaign = summary.campaign or {}
    shards = campaign.get("shards") or []
    seeds = campaign.get("seeds") or []
    assert isinstance(shards, list) and isinstance(seeds, list)
    click.echo(f"merged {len(reports)} reports ({len(shards)} shards, {len(seeds)} seeds):"
               f" {', '.join(map(str, written))}")
    if summary.failed(registry):
        sys.exit(1)
