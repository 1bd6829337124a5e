"""Sharded Hypothesis campaigns (`run --seeds A-B --shard K/N`) and `jobconform merge`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.backends.protocol import LIFECYCLE
from jobconform.conformance.campaign import (
    CampaignError,
    Shard,
    parse_seeds,
    parse_shard,
    plan_campaign,
    shard_seeds,
)
from jobconform.conformance.cli import main
from jobconform.conformance.lifecycle.gallery import late_completion
from jobconform.conformance.partial_claims import LIFECYCLE_ONLY


class LateCompletionLifecycleOnly(late_completion):  # type: ignore[misc, valid-type]
    """The gallery's late completion (LC-003), claiming the lifecycle area alone: one
    machine per seed keeps the campaign tests short."""

    capabilities = frozenset({LIFECYCLE})


BROKEN = f"{__name__}:LateCompletionLifecycleOnly"
# Few examples: these tests check the splitting and joining, not the search.
EXAMPLES = "10"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_seed_ranges_and_shards_parse() -> None:
    assert parse_seeds("0-3") == (0, 1, 2, 3)
    assert parse_seeds("7") == (7,)
    assert parse_shard("2/4") == Shard(2, 4)
    for bad in ("3-1", "a-b", "-2"):
        with pytest.raises(CampaignError):
            parse_seeds(bad)
    for bad in ("0/4", "5/4", "2", "1/0"):
        with pytest.raises(CampaignError):
            parse_shard(bad)


def test_shards_split_the_seeds_without_overlap_or_gap() -> None:
    seeds = parse_seeds("0-99")
    parts = [shard_seeds(seeds, Shard(k, 8)) for k in range(1, 9)]
    assert sorted(seed for part in parts for seed in part) == list(seeds)
    assert parts[2][:3] == (2, 10, 18)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    with pytest.raises(CampaignError, match="gets no seed"):
        shard_seeds(parse_seeds("0-1"), Shard(3, 3))


def test_only_the_first_shard_runs_behave_and_robot() -> None:
    suites = ("behave", "robot", "hypothesis")
    assert plan_campaign("0-9", "1/2", 0, suites).suites == suites
    second = plan_campaign("0-9", "2/2", 0, suites)
    assert second.suites == ("hypothesis",) and second.seeds == (1, 3, 5, 7, 9)
    assert second.report_entry(20) == {"seeds": [1, 3, 5, 7, 9], "shards": ["2/2"],
                                       "examples": 20}
    assert plan_campaign(None, None, 4, suites).report_entry(20) is None
    with pytest.raises(CampaignError, match="add --suite hypothesis"):
        plan_campaign("0-9", "2/2", 0, ("behave",))
    with pytest.raises(CampaignError, match="--seeds"):
        plan_campaign(None, "1/2", 0, suites)
    with pytest.raises(CampaignError, match="not both"):
        plan_campaign("0-9", None, 3, suites)


def test_a_bad_shard_is_refused_by_run() -> None:
    code, output = invoke("run", "--seeds", "0-3", "--shard", "5/4")
    assert code == 2 and "shard 5/4 does not exist" in output


def run_shards(tmp_path: Path, backend: str, count: int, seeds: str, *extra: str,
               only: tuple[int, ...] = ()) -> list[Path]:
    """The reports of the campaign's shards (of the shards in `only`, when given)."""
    reports = []
    for k in only or range(1, count + 1):
        folder = tmp_path / f"shard-{k}"
        invoke("run", "--backend", backend, "--suite", "hypothesis", "--seeds", seeds,
               "--shard", f"{k}/{count}", "--examples", EXAMPLES, "--report-dir", str(folder),
               *extra)
        reports.append(folder / "report.json")
    return reports


# Each campaign runs once per module: the tests read or merge its shards' reports.
@pytest.fixture(scope="module")
def broken_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return run_shards(tmp_path_factory.mktemp("broken"), BROKEN, 2, "0-3")


@pytest.fixture(scope="module")
def passing_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return run_shards(tmp_path_factory.mktemp("passing"), LIFECYCLE_ONLY, 2, "0-1")


def test_merge_joins_every_shards_cases_verdicts_and_traces(broken_shards: list[Path],
                                                            tmp_path: Path) -> None:
    shards = broken_shards
    first = json.loads(shards[0].read_text())
    assert first["campaign"] == {"seeds": [0, 2], "shards": ["1/2"],
                                 "examples": int(EXAMPLES)}
    assert [c["name"] for c in first["suites"][0]["cases"]] == [
        f"lifecycle machine (seed {s}, {EXAMPLES} examples)" for s in (0, 2)]
    merged_dir = tmp_path / "merged"
    code, output = invoke("merge", *map(str, shards), "--report-dir", str(merged_dir))
    assert code == 1, output  # the broken backend fails, in the merged report too
    merged = json.loads((merged_dir / "report.json").read_text())
    assert merged["campaign"] == {"seeds": [0, 1, 2, 3], "shards": ["1/2", "2/2"],
                                  "examples": int(EXAMPLES)}
    cases = merged["suites"][0]["cases"]
    assert sorted(c["name"] for c in cases) == sorted(
        f"lifecycle machine (seed {s}, {EXAMPLES} examples)" for s in range(4))
    # A late completion is LC-003 after the job ended, LC-014 while a requested cancel is
    # pending (what the shrunk traces show): the merged report fails what the shards named.
    primaries = {rid for case in cases if not case["passed"] for rid in case["primary"]}
    assert primaries and primaries <= {"LC-003", "LC-014"}
    for rid in primaries:
        assert merged["requirements"][rid]["suites"]["hypothesis"] == "fail"
    for case in cases:
        for artifact in case["artifacts"]:
            assert Path(artifact).parent == merged_dir / "traces"
            assert Path(artifact).exists()
    failed = [c for c in cases if not c["passed"]]
    assert failed and all(c["artifacts"] for c in failed)
    assert "merged 2 reports (2 shards, 4 seeds)" in output


def test_merge_of_passing_shards_passes(passing_shards: list[Path], tmp_path: Path) -> None:
    shards = passing_shards
    code, output = invoke("merge", *map(str, shards), "--report-dir", str(tmp_path / "m"))
    merged = json.loads((tmp_path / "m" / "report.json").read_text())
    # The shards ran the machines only, so the merged report has that one suite.
    assert merged["requirements"]["LC-001"]["suites"] == {"hypothesis": "pass"}
    assert merged["counts"]["fail"] == 0, output
    assert code == (1 if merged["verdict"] == "fail" else 0)


def test_merge_refuses_a_missing_or_repeated_shard(passing_shards: list[Path],
                                                  tmp_path: Path) -> None:
    shards = passing_shards
    code, output = invoke("merge", str(shards[0]), "--report-dir", str(tmp_path / "m"))
    assert code == 2 and "shard(s) 2/2 missing" in output
    code, output = invoke("merge", str(shards[0]), str(shards[0]), str(shards[1]),
                          "--report-dir", str(tmp_path / "m"))
    assert code == 2 and "shard 1/2 is in both" in output


def test_merge_refuses_reports_of_different_backends(passing_shards: list[Path],
                                                    broken_shards: list[Path],
                                                    tmp_path: Path) -> None:
    code, output = invoke("merge", str(passing_shards[0]), str(broken_shards[1]),
                          "--report-dir",
                          str(tmp_path / "m"))
    assert code == 2 and "differ in 'backend'" in output


def test_merge_refuses_shards_of_different_seed_ranges(passing_shards: list[Path],
                                                      tmp_path: Path) -> None:
    # Shard 1/2 of 0-1 has seed 0; shard 2/2 of 0-3 has seeds 1 and 3: each shard is there
    # once, but seed 2 would be missing from the merged campaign.
    (other,) = run_shards(tmp_path, LIFECYCLE_ONLY, 2, "0-3", only=(2,))
    code, output = invoke("merge", str(passing_shards[0]), str(other),
                          "--report-dir", str(tmp_path / "m"))
    assert code == 2, output
    assert "shards of different campaigns" in output
    assert "shard 1/2 with seed(s) 0, but shard 1/2 of the seeds 0-3" in output
    assert not (tmp_path / "m" / "report.json").exists()


def test_merge_refuses_shards_that_ran_different_examples(passing_shards: list[Path],
                                                         tmp_path: Path) -> None:
    (other,) = run_shards(tmp_path, LIFECYCLE_ONLY, 2, "0-1", "--examples", "3", only=(2,))
    code, output = invoke("merge", str(passing_shards[0]), str(other),
                          "--report-dir", str(tmp_path / "m"))
    assert code == 2, output
    assert "different --examples per seed" in output


def test_merge_joins_a_shard_written_before_reports_recorded_their_examples(
        passing_shards: list[Path], tmp_path: Path) -> None:
    older = json.loads(passing_shards[1].read_text())
    del older["campaign"]["examples"]
    old_shard = tmp_path / "old" / "report.json"
    old_shard.parent.mkdir()
    old_shard.write_text(json.dumps(older))
    code, output = invoke("merge", str(passing_shards[0]), str(old_shard),
                          "--report-dir", str(tmp_path / "m"))
    assert code == 0, output
    merged = json.loads((tmp_path / "m" / "report.json").read_text())
    assert merged["campaign"]["examples"] == json.loads(
        passing_shards[0].read_text())["campaign"]["examples"]


def test_merged_shards_of_one_area_keep_the_rest_not_run(tmp_path: Path) -> None:
    shards = run_shards(tmp_path, LIFECYCLE_ONLY, 2, "0-1", "--requirement", "LC-001")
    code, output = invoke("merge", *map(str, shards), "--report-dir", str(tmp_path / "m"))
    assert code == 0, output
    merged = json.loads((tmp_path / "m" / "report.json").read_text())
    shard = json.loads(shards[0].read_text())
    for report in (shard, merged):
        assert report["requirements"]["LC-002"]["suites"] == {"hypothesis": "not run"}
    assert "not rerun" not in output


def test_merge_refuses_a_file_that_is_not_text(tmp_path: Path) -> None:
    binary = tmp_path / "report.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    code, output = invoke("merge", str(binary), "--report-dir", str(tmp_path / "m"))
    assert code == 2, output
    assert f"{binary} is not a report.json: not UTF-8 text (invalid start byte at byte 0)" in (
        output)
