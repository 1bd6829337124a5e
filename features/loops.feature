@loops
Feature: Sequential agent loops (spec/loops.yaml)
  A loop runs its agent up to max_runs times, one run after another. The scenario plays
  the agent: each run ends only when a step says how. Time passes only when the loop
  clock moves.

  Background:
    Given a loop runtime

  # -- LP-001: validation -------------------------------------------------------------------

  @LP-001
  Scenario Outline: An invalid parameter is refused, naming the parameter
    When loop "a" is started with
      | parameter | value       |
      | message   | "go"        |
      | max_runs  | 3           |
      | <name>    | <value>     |
    Then the start of loop "a" is refused for "<name>"

    Examples:
      | name                     | value      |
      | max_runs                 | 0          |
      | max_runs                 | 101        |
      | stop_signal              | ""         |
      | delay_seconds            | -1         |
      | timeout_per_run_seconds  | 0          |
      | max_duration_seconds     | 0          |
      | max_duration_seconds     | 604801     |
      | max_cost_usd             | 0          |
      | max_cost_usd             | NaN        |
      | no_progress_threshold    | 1          |
      | no_progress_threshold    | -1         |
      | on_failure               | "retry"    |
      | max_consecutive_failures | 0          |
      | max_consecutive_failures | 101        |
      | max_runs                 | 1000000000000 |
      | delay_seconds            | inf        |
      | timeout_per_run_seconds  | 7201       |
      | max_cost_usd             | -inf       |

  @LP-001
  Scenario Outline: A parameter at either end of its range is accepted
    When loop "a" is started with
      | parameter | value   |
      | message   | "go"    |
      | max_runs  | 3       |
      | <name>    | <value> |
    Then loop "a" is running with 1 runs

    Examples: the plain case, then each range's ends
      | name                     | value   |
      | message                  | "go"    |
      | max_runs                 | 1       |
      | max_runs                 | 100     |
      | delay_seconds            | 0       |
      | timeout_per_run_seconds  | 1       |
      | timeout_per_run_seconds  | 7200    |
      | max_duration_seconds     | 900     |
      | max_duration_seconds     | 604800  |
      | max_cost_usd             | 1e-9    |
      | no_progress_threshold    | 0       |
      | no_progress_threshold    | 2       |
      | max_consecutive_failures | 1       |
      | max_consecutive_failures | 100     |

    Examples: ranges open at the top, at extreme values
      | name                     | value      |
      | delay_seconds            | 1e9        |
      | max_cost_usd             | 1e308      |
      | no_progress_threshold    | 1000000000 |

  @LP-001
  Scenario: A deadline shorter than the per-run timeout is refused
    When loop "a" is started with
      | parameter               | value |
      | message                 | "go"  |
      | max_runs                | 3     |
      | timeout_per_run_seconds | 120   |
      | max_duration_seconds    | 119   |
    Then the start of loop "a" is refused for "max_duration_seconds"

  @LP-001
  Scenario: A deadline shorter than the profile's default per-run timeout is refused
    When loop "a" is started with
      | parameter            | value |
      | message              | "go"  |
      | max_runs             | 3     |
      | max_duration_seconds | 899   |
    Then the start of loop "a" is refused for "max_duration_seconds"

  @LP-001
  Scenario: Every invalid parameter is listed, in field order
    When loop "a" is started with
      | parameter             | value |
      | message               | ""    |
      | max_runs              | 0     |
      | no_progress_threshold | 1     |
    Then the start of loop "a" is refused for "message, max_runs, no_progress_threshold"

  # -- LP-002: sequential runs and {{run}} ---------------------------------------------------

  @LP-002 @LP-004
  Scenario: Runs are numbered from 1 and the loop ends at max runs
    When loop "a" is started with
      | parameter | value            |
      | message   | "step {{run}}"   |
      | max_runs  | 3                |
    Then loop "a" is running with 1 runs
    And run 1 of loop "a" has the message "step 1"
    When the run of loop "a" responds "one"
    Then loop "a" is running with 2 runs
    And run 2 of loop "a" has the message "step 2"
    When the run of loop "a" responds "two"
    And the run of loop "a" responds "three"
    Then loop "a" ended completed with stop reason max_runs_reached
    And loop "a" has 3 runs and 0 failed runs

  @LP-020
  Scenario: Each run is executed as triggered by its loop, naming the loop
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 2     |
    And loop "b" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 1     |
    And the run of loop "a" responds "one"
    And the run of loop "b" responds "only"
    And the run of loop "a" responds "two"
    Then run 1 of loop "a" was executed as triggered by its loop
    And run 2 of loop "a" was executed as triggered by its loop
    And run 1 of loop "b" was executed as triggered by its loop
    And loop "a" ended completed with stop reason max_runs_reached

  @LP-002 @LP-003
  Scenario: Placeholders are replaced in one pass
    When loop "a" is started with
      | parameter             | value                                  |
      | message               | "{{run}}: {{previous_response}}"       |
      | max_runs              | 2                                      |
      | no_progress_threshold | 0                                      |
    And the run of loop "a" responds "say {{run}}"
    Then run 2 of loop "a" has the message "2: say {{run}}"

  # -- LP-003: {{previous_response}} ---------------------------------------------------------

  @LP-003
  Scenario: The previous response is empty on run 1 and then the last response
    When loop "a" is started with
      | parameter | value                         |
      | message   | "prev=[{{previous_response}}]" |
      | max_runs  | 3                             |
    Then run 1 of loop "a" has the message "prev=[]"
    When the run of loop "a" responds "alpha"
    Then run 2 of loop "a" has the message "prev=[alpha]"

  @LP-003
  Scenario: Only the trailing 2000 characters are carried
    When loop "a" is started with
      | parameter | value                   |
      | message   | "{{previous_response}}" |
      | max_runs  | 2                       |
    And the run of loop "a" responds with 700 times "abc"
    Then run 2 of loop "a" has a message of 2000 characters ending in "abc"

  @LP-003 @LP-015 @edge
  Scenario: A failed run does not overwrite the previous response
    When loop "a" is started with
      | parameter  | value                    |
      | message    | "<{{previous_response}}>" |
      | max_runs   | 4                        |
      | on_failure | "continue"               |
    And the run of loop "a" responds "kept"
    And the run of loop "a" raises ValueError "boom"
    Then run 3 of loop "a" has the message "<kept>"
    When the run of loop "a" returns the non-success result AGENT_ERROR
    Then run 4 of loop "a" has the message "<kept>"

  # -- LP-004: precedence --------------------------------------------------------------------

  @LP-004 @LP-006
  Scenario: A user stop outranks a passed deadline and a spent budget
    When loop "a" is started with
      | parameter               | value  |
      | message                 | "go"   |
      | max_runs                | 5      |
      | timeout_per_run_seconds | 100    |
      | max_duration_seconds    | 100    |
      | max_cost_usd            | 1.0    |
    And the loop clock moves 99 seconds
    And the run of loop "a" responds "first" costing 0.5
    And the loop clock moves 51 seconds
    And loop "a" is asked to stop
    And the run of loop "a" responds "second" costing 0.6
    Then loop "a" ended stopped with stop reason user_stopped
    And loop "a" ended at second 150

  @LP-004 @LP-007 @LP-011
  Scenario: A run that passes the deadline and spends the budget ends on the deadline
    When loop "a" is started with
      | parameter               | value  |
      | message                 | "go"   |
      | max_runs                | 5      |
      | timeout_per_run_seconds | 100    |
      | max_duration_seconds    | 100    |
      | max_cost_usd            | 1.0    |
    And the loop clock moves 99 seconds
    And the run of loop "a" responds "first" costing 0.5
    And the loop clock moves 99 seconds
    And the run of loop "a" responds "second" costing 0.6
    Then loop "a" ended stopped with stop reason deadline_exceeded
    And loop "a" ended at second 198

  # -- LP-005: stop signal -------------------------------------------------------------------

  @LP-005
  Scenario: The stop signal is a substring of the full response
    When loop "a" is started with
      | parameter   | value      |
      | message     | "go"       |
      | max_runs    | 5          |
      | stop_signal | "[[DONE]]" |
    And the run of loop "a" responds "not yet [[DONE"
    Then loop "a" is running with 2 runs
    When the run of loop "a" responds "all good [[DONE]] bye"
    Then loop "a" ended completed with stop reason stop_signal_matched

  @LP-005 @LP-011
  Scenario: A run that crosses the budget and matches the signal is stop_signal_matched
    When loop "a" is started with
      | parameter    | value  |
      | message      | "go"   |
      | max_runs     | 5      |
      | stop_signal  | "DONE" |
      | max_cost_usd | 1.0    |
    And the run of loop "a" responds "DONE" costing 2.5
    Then loop "a" ended completed with stop reason stop_signal_matched

  # -- LP-006: user stop ---------------------------------------------------------------------

  @LP-006
  Scenario: A stop lets the run in flight finish, then the loop stops
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 5     |
    And loop "a" is asked to stop
    Then the stop answer is "stopping"
    And loop "a" is running with 1 runs
    When the run of loop "a" responds "finished anyway"
    Then loop "a" ended stopped with stop reason user_stopped
    And run 1 of loop "a" is succeeded
    When loop "a" is asked to stop
    Then the stop answer is "already_done"

  @LP-006 @LP-008
  Scenario: A stop during the delay ends the loop at once
    When loop "a" is started with
      | parameter     | value |
      | message       | "go"  |
      | max_runs      | 5     |
      | delay_seconds | 30    |
    And the run of loop "a" responds "one"
    And the loop clock moves 10 seconds
    And loop "a" is asked to stop
    Then loop "a" ended stopped with stop reason user_stopped
    And loop "a" ended at second 10
    And loop "a" has 1 runs and 0 failed runs

  @LP-006 @LP-004
  Scenario: A stop during the last run does not change the natural end
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 1     |
    And loop "a" is asked to stop
    And the run of loop "a" responds "done"
    Then loop "a" ended completed with stop reason max_runs_reached

  # -- LP-007 / LP-008: deadline and delay ---------------------------------------------------

  @LP-007 @LP-008
  Scenario: The delay never sleeps past the deadline
    When loop "a" is started with
      | parameter               | value |
      | message                 | "go"  |
      | max_runs                | 5     |
      | delay_seconds           | 100   |
      | timeout_per_run_seconds | 60    |
      | max_duration_seconds    | 90    |
    And the loop clock moves 20 seconds
    And the run of loop "a" responds "one"
    And the loop clock moves 69 seconds
    Then loop "a" is running with 1 runs
    When the loop clock moves 1 seconds
    Then loop "a" ended stopped with stop reason deadline_exceeded
    And loop "a" ended at second 90

  @LP-007
  Scenario: A run in flight is never interrupted by the deadline
    When loop "a" is started with
      | parameter               | value |
      | message                 | "go"  |
      | max_runs                | 5     |
      | timeout_per_run_seconds | 100   |
      | max_duration_seconds    | 100   |
    And the loop clock moves 30 seconds
    And the run of loop "a" responds "one"
    And the loop clock moves 80 seconds
    Then loop "a" is running with 2 runs
    When the run of loop "a" responds "two"
    Then loop "a" ended stopped with stop reason deadline_exceeded
    And loop "a" ended at second 110
    And run 2 of loop "a" is succeeded

  @LP-008
  Scenario: The next run starts after the delay
    When loop "a" is started with
      | parameter     | value |
      | message       | "go"  |
      | max_runs      | 3     |
      | delay_seconds | 15    |
    And the loop clock moves 5 seconds
    And the run of loop "a" responds "one"
    And the loop clock moves 14 seconds
    Then loop "a" is running with 1 runs
    When the loop clock moves 1 seconds
    Then loop "a" is running with 2 runs
    And run 2 of loop "a" started at second 20

  # -- LP-009: per-run timeout ---------------------------------------------------------------

  @LP-009 @LP-014
  Scenario: A run without an outcome by its timeout fails as TIMEOUT
    When loop "a" is started with
      | parameter               | value |
      | message                 | "go"  |
      | max_runs                | 3     |
      | timeout_per_run_seconds | 45    |
    And the loop clock moves 44 seconds
    Then loop "a" is running with 1 runs
    When the loop clock moves 1 seconds
    Then run 1 of loop "a" is failed with error "TIMEOUT"
    And loop "a" ended failed with stop reason error

  # -- LP-010: costs -------------------------------------------------------------------------

  @LP-010
  Scenario: Finite positive costs are summed while the budget lasts
    When loop "a" is started with
      | parameter             | value |
      | message               | "go"  |
      | max_runs              | 3     |
      | max_cost_usd          | 10.0  |
      | no_progress_threshold | 0     |
    And the run of loop "a" responds "a" costing 0.25
    And the run of loop "a" responds "b" costing 1.5
    Then loop "a" has spent 1.75
    When the run of loop "a" responds "c" costing 2
    Then loop "a" has spent 3.75
    And loop "a" ended completed with stop reason max_runs_reached

  @LP-010 @edge
  Scenario: NaN, infinities and negative costs are ignored and a missing cost is logged once
    When loop "a" is started with
      | parameter             | value  |
      | message               | "go"   |
      | max_runs              | 6      |
      | max_cost_usd          | 100.0  |
      | no_progress_threshold | 0      |
    And the run of loop "a" responds "a" costing 0.25
    And the run of loop "a" responds "b" costing NaN
    And the run of loop "a" responds "c" costing inf
    And the run of loop "a" responds "d" costing -3
    And the run of loop "a" responds "e" costing none
    And the run of loop "a" responds "f" costing 0.5
    Then loop "a" has spent 0.75
    And loop "a" logged a missing cost for runs "5"
    And loop "a" ended completed with stop reason max_runs_reached

  @LP-010 @LP-011 @edge
  Scenario: An infinite cost spends none of the budget
    When loop "a" is started with
      | parameter             | value |
      | message               | "go"  |
      | max_runs              | 3     |
      | max_cost_usd          | 1.0   |
      | no_progress_threshold | 0     |
    And the run of loop "a" responds "a" costing inf
    Then loop "a" is running with 2 runs
    And loop "a" has spent 0
    When the run of loop "a" responds "b" costing inf
    And the run of loop "a" responds "c" costing 0.5
    Then loop "a" has spent 0.5
    And loop "a" ended completed with stop reason max_runs_reached

  @LP-010 @edge
  Scenario: A loop without ended runs has spent nothing
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 2     |
    Then loop "a" has spent 0

  # -- LP-011: budget ------------------------------------------------------------------------

  @LP-011
  Scenario: The budget ends the loop only before a next run
    When loop "a" is started with
      | parameter    | value |
      | message      | "go"  |
      | max_runs     | 5     |
      | max_cost_usd | 1.0   |
    And the run of loop "a" responds "a" costing 0.6
    Then loop "a" is running with 2 runs
    When the run of loop "a" responds "b" costing 0.4
    Then loop "a" ended stopped with stop reason budget_exhausted
    And loop "a" has spent 1.0
    And loop "a" has 2 runs and 0 failed runs

  @LP-011 @LP-004
  Scenario: A last run that crosses the budget ends with max_runs_reached
    When loop "a" is started with
      | parameter    | value |
      | message      | "go"  |
      | max_runs     | 2     |
      | max_cost_usd | 1.0   |
    And the run of loop "a" responds "a" costing 0.5
    And the run of loop "a" responds "b" costing 3
    Then loop "a" ended completed with stop reason max_runs_reached

  # -- LP-012 / LP-013: no progress ----------------------------------------------------------

  @LP-012
  Scenario: Three responses equal up to whitespace stop the loop by default
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 10    |
    And the run of loop "a" responds "same  answer"
    And the run of loop "a" responds " same answer\n"
    Then loop "a" is running with 3 runs
    When the run of loop "a" responds "same answer"
    Then loop "a" ended stopped with stop reason no_progress

  @LP-012 @edge
  Scenario: Empty, missing and blank responses share one fingerprint
    When loop "a" is started with
      | parameter             | value |
      | message               | "go"  |
      | max_runs              | 10    |
      | no_progress_threshold | 3     |
    And the run of loop "a" responds with an empty text
    And the run of loop "a" sends no response
    And the run of loop "a" responds "   "
    Then loop "a" ended stopped with stop reason no_progress

  @LP-012 @edge
  Scenario: Word boundaries count and threshold 0 turns detection off
    When loop "a" is started with
      | parameter             | value |
      | message               | "go"  |
      | max_runs              | 3     |
      | no_progress_threshold | 0     |
    And the run of loop "a" responds "foo bar"
    And the run of loop "a" responds "foo bar"
    And the run of loop "a" responds "foo bar"
    Then loop "a" ended completed with stop reason max_runs_reached

  @LP-012 @LP-015 @edge
  Scenario: A failed run neither counts nor breaks the streak
    When loop "a" is started with
      | parameter             | value      |
      | message               | "go"       |
      | max_runs              | 10         |
      | no_progress_threshold | 2          |
      | on_failure            | "continue" |
    And the run of loop "a" responds "foobar"
    And the run of loop "a" raises RuntimeError "flaky"
    Then loop "a" is running with 3 runs
    When the run of loop "a" responds "foobar"
    Then loop "a" ended stopped with stop reason no_progress

  @LP-013 @LP-006
  Scenario: A pending user stop is not relabelled as no progress
    When loop "a" is started with
      | parameter             | value |
      | message               | "go"  |
      | max_runs              | 10    |
      | no_progress_threshold | 2     |
    And the run of loop "a" responds "loop"
    And loop "a" is asked to stop
    And the run of loop "a" responds "loop"
    Then loop "a" ended stopped with stop reason user_stopped

  @LP-013 @LP-007
  Scenario: A passed deadline is not relabelled as no progress
    When loop "a" is started with
      | parameter               | value |
      | message                 | "go"  |
      | max_runs                | 10    |
      | timeout_per_run_seconds | 100   |
      | max_duration_seconds    | 100   |
    And the loop clock moves 60 seconds
    And the run of loop "a" responds "loop"
    And the loop clock moves 1 seconds
    And the run of loop "a" responds "loop"
    And the loop clock moves 59 seconds
    Then loop "a" is running with 3 runs
    When the run of loop "a" responds "loop"
    Then loop "a" ended stopped with stop reason deadline_exceeded
    And loop "a" ended at second 120

  @LP-013 @LP-005
  Scenario: The stop signal wins over no progress
    When loop "a" is started with
      | parameter             | value  |
      | message               | "go"   |
      | max_runs              | 10     |
      | stop_signal           | "DONE" |
      | no_progress_threshold | 2      |
    And the run of loop "a" responds "DONE"
    Then loop "a" ended completed with stop reason stop_signal_matched

  # -- LP-014 .. LP-016: failure policy ------------------------------------------------------

  @LP-014
  Scenario: Under abort a raised error fails the loop at once
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 5     |
    And the run of loop "a" responds "fine"
    And the run of loop "a" raises ConnectionError "agent gone"
    Then loop "a" ended failed with stop reason error
    And run 2 of loop "a" is failed with error "ConnectionError: agent gone"
    And loop "a" has 2 runs and 1 failed runs

  @LP-014
  Scenario: Under abort a non-success result fails the loop at once
    When loop "a" is started with
      | parameter  | value   |
      | message    | "go"    |
      | max_runs   | 5       |
      | on_failure | "abort" |
    And the run of loop "a" returns the non-success result CIRCUIT_OPEN
    Then loop "a" ended failed with stop reason error
    And run 1 of loop "a" is failed with error "CIRCUIT_OPEN"

  @LP-015 @LP-016
  Scenario: Under continue a loop whose runs all succeed ends completed
    When loop "a" is started with
      | parameter                | value        |
      | message                  | "go {{run}}" |
      | max_runs                 | 3            |
      | on_failure               | "continue"   |
      | max_consecutive_failures | 2            |
    And the run of loop "a" responds "a"
    And the run of loop "a" responds "b"
    Then loop "a" is running with 3 runs
    When the run of loop "a" responds "c"
    Then loop "a" ended completed with stop reason max_runs_reached
    And loop "a" has 3 runs and 0 failed runs

  @LP-015
  Scenario: A success resets the failure streak; a full streak fails the loop
    When loop "a" is started with
      | parameter                | value      |
      | message                  | "go {{run}}" |
      | max_runs                 | 10         |
      | on_failure               | "continue" |
      | max_consecutive_failures | 2          |
    And the run of loop "a" raises ValueError "one"
    And the run of loop "a" responds "ok"
    And the run of loop "a" returns the non-success result AUTH
    Then loop "a" is running with 4 runs
    When the run of loop "a" raises ValueError "two"
    Then loop "a" ended failed with stop reason max_consecutive_failures
    And loop "a" has 4 runs and 3 failed runs

  @LP-016
  Scenario: Tolerated failures make a completed loop completed_with_errors
    When loop "a" is started with
      | parameter  | value      |
      | message    | "go {{run}}" |
      | max_runs   | 3          |
      | on_failure | "continue" |
    And the run of loop "a" responds "a"
    And the run of loop "a" returns the non-success result AGENT_ERROR
    And the run of loop "a" responds "b"
    Then loop "a" ended completed_with_errors with stop reason max_runs_reached
    And loop "a" has 3 runs and 1 failed runs

  @LP-016 @LP-005
  Scenario: A stop signal after a tolerated failure is completed_with_errors
    When loop "a" is started with
      | parameter   | value      |
      | message     | "go"       |
      | max_runs    | 5          |
      | stop_signal | "DONE"     |
      | on_failure  | "continue" |
    And the run of loop "a" raises TimeoutError "slow"
    And the run of loop "a" responds "DONE"
    Then loop "a" ended completed_with_errors with stop reason stop_signal_matched

  # -- LP-017: restart -----------------------------------------------------------------------

  @LP-017
  Scenario: A restart interrupts a running loop and keeps an ended one
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 1     |
    And the run of loop "a" responds "done"
    And loop "b" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 5     |
    And the run of loop "b" responds "first"
    And the loop clock moves 5 seconds
    And the loop runtime restarts
    Then loop "b" ended interrupted with stop reason interrupted
    And run 2 of loop "b" is interrupted
    And loop "a" ended completed with stop reason max_runs_reached
    When the loop clock moves 1000 seconds
    Then loop "b" has 2 runs and 0 failed runs

  # -- LP-018: elapsed -----------------------------------------------------------------------

  @LP-018
  Scenario: elapsed_seconds grows while running and freezes at the end
    When loop "a" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 1     |
    And the loop clock moves 12.5 seconds
    Then loop "a" shows 12.5 elapsed seconds
    When the run of loop "a" responds "done"
    And the loop clock moves 100 seconds
    Then loop "a" shows 12.5 elapsed seconds

  # -- LP-019: loop events -------------------------------------------------------------------

  @LP-019 @LP-008 @LP-009 @LP-016
  Scenario: Each ended run emits loop_run_completed once it is recorded, the loop's end loop_completed
    Given the loop events are emitted
    When loop "a" is started with
      | parameter               | value      |
      | message                 | "go"       |
      | max_runs                | 3          |
      | delay_seconds           | 5          |
      | timeout_per_run_seconds | 30         |
      | on_failure              | "continue" |
    Then loop "a" has emitted 0 events
    When the loop clock moves 2.5 seconds
    And the run of loop "a" responds "first" costing 0.25
    Then loop "a" has emitted 1 events
    And event 1 of loop "a" reports run 1 succeeded costing 0.25 in 2500 ms
    When the loop clock moves 35 seconds
    Then loop "a" has emitted 2 events
    And event 2 of loop "a" reports run 2 failed costing none in 30000 ms
    When the loop clock moves 5 seconds
    And the run of loop "a" responds "last" costing 0.5
    Then loop "a" ended completed_with_errors with stop reason max_runs_reached
    And loop "a" has emitted 4 events
    And event 3 of loop "a" reports run 3 succeeded costing 0.5 in 0 ms
    And event 4 of loop "a" reports the loop completed_with_errors with stop reason max_runs_reached

  @LP-019 @LP-006 @LP-017
  Scenario: A stop between runs and a restart each emit loop_completed, and nothing for a run cut off
    Given the loop events are emitted
    When loop "a" is started with
      | parameter     | value |
      | message       | "go"  |
      | max_runs      | 3     |
      | delay_seconds | 10    |
    And the run of loop "a" responds "one" costing none
    And loop "a" is asked to stop
    Then loop "a" ended stopped with stop reason user_stopped
    And loop "a" has emitted 2 events
    And event 1 of loop "a" reports run 1 succeeded costing none in 0 ms
    And event 2 of loop "a" reports the loop stopped with stop reason user_stopped
    When loop "b" is started with
      | parameter | value |
      | message   | "go"  |
      | max_runs  | 3     |
    And the loop clock moves 4 seconds
    And the loop runtime restarts
    Then loop "b" ended interrupted with stop reason interrupted
    And loop "b" has emitted 1 events
    And event 1 of loop "b" reports the loop interrupted with stop reason interrupted
    And loop "a" has emitted 2 events
