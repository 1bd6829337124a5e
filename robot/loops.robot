*** Settings ***
Documentation       Conformance checks for sequential agent loops (spec/loops.yaml, LP-001..LP-020).
...
...                 Each test plays the agent of its loops: a run ends only when the test says
...                 how. Time passes only through `Loop Clock Moves`. A test whose requirement's
...                 area the backend does not claim is skipped with the reason.
Resource            lifecycle.resource
Library             jobconform.conformance.loops.keywords.LoopsLibrary
Test Setup          Start Loop Runtime
Test Tags           loops


*** Test Cases ***
Invalid Parameters Are Refused With Their Names
    [Tags]    LP-001
    Start Of Loop Should Be Refused    a    max_runs    message="go"    max_runs=101
    Start Of Loop Should Be Refused    b    no_progress_threshold    message="go"    max_runs=3    no_progress_threshold=1
    Start Of Loop Should Be Refused    c    max_cost_usd    message="go"    max_runs=3    max_cost_usd=inf
    Start Of Loop Should Be Refused    d    on_failure, max_consecutive_failures    message="go"    max_runs=3    on_failure="skip"    max_consecutive_failures=0
    Start Of Loop Should Be Refused    e    max_duration_seconds    message="go"    max_runs=3    timeout_per_run_seconds=300    max_duration_seconds=299
    Start Of Loop Should Be Refused    f    max_runs    message="go"    max_runs=1000000000000
    Start Of Loop Should Be Refused    g    delay_seconds, timeout_per_run_seconds    message="go"    max_runs=3    delay_seconds=inf    timeout_per_run_seconds=7201

Parameters At The Ends Of Their Ranges Are Accepted
    [Tags]    LP-001
    Start Loop    plain    message="go"    max_runs=3
    Loop Should Be Running    plain    1
    Start Loop    low    message="go"    max_runs=1    delay_seconds=0    timeout_per_run_seconds=1    max_consecutive_failures=1    no_progress_threshold=0    max_cost_usd=1e-9
    Loop Should Be Running    low    1
    Start Loop    high    message="go"    max_runs=100    timeout_per_run_seconds=7200    max_duration_seconds=604800    max_consecutive_failures=100    no_progress_threshold=2
    Loop Should Be Running    high    1
    Start Loop    even    message="go"    max_runs=3    max_duration_seconds=900
    Loop Should Be Running    even    1
    Start Loop    huge    message="go"    max_runs=3    delay_seconds=1e9    max_cost_usd=1e308    no_progress_threshold=1000000000
    Loop Should Be Running    huge    1

Runs Are Sequential And Numbered From One
    [Tags]    LP-002    LP-004
    Start Loop    a    message="run {{run}}"    max_runs=2
    Run Message Should Be    a    1    run 1
    Loop Should Be Running    a    1
    Run Responds    a    first
    Run Message Should Be    a    2    run 2
    Run Responds    a    second
    Loop Should Have Ended    a    completed    max_runs_reached

Each Run Is Executed As Triggered By Its Loop Naming The Loop
    [Tags]    LP-020
    Start Loop    a    message="go"    max_runs=2
    Start Loop    b    message="go"    max_runs=1
    Run Responds    a    one
    Run Responds    b    only
    Run Responds    a    two
    Run Should Be Labelled As Its Loop's    a    1
    Run Should Be Labelled As Its Loop's    a    2
    Run Should Be Labelled As Its Loop's    b    1
    Loop Should Have Ended    a    completed    max_runs_reached

Each Run Gets The Previous Response
    [Tags]    LP-003
    Start Loop    a    message="prev=[{{previous_response}}]"    max_runs=3
    Run Message Should Be    a    1    prev=[]
    Run Responds    a    alpha
    Run Message Should Be    a    2    prev=[alpha]
    Run Responds    a    beta
    Run Message Should Be    a    3    prev=[beta]

A Failed Run Keeps The Previous Response
    [Tags]    LP-003    LP-015    edge
    Start Loop    a    message="[{{previous_response}}]"    max_runs=3    on_failure="continue"
    Run Message Should Be    a    1    []
    Run Responds    a    kept
    Run Raises    a    ValueError    boom
    Run Message Should Be    a    3    [kept]

A Passed Deadline Outranks A Spent Budget
    [Tags]    LP-004    LP-007    LP-011
    Start Loop    a    message="go"    max_runs=5    timeout_per_run_seconds=100    max_duration_seconds=100    max_cost_usd=1.0
    Loop Clock Moves    99
    Run Responds    a    one    0.5
    Loop Clock Moves    99
    Run Responds    a    two    0.6
    Loop Should Have Ended    a    stopped    deadline_exceeded
    Loop Should Have Ended At    a    198

A User Stop Outranks Deadline And Budget
    [Tags]    LP-004    LP-006
    Start Loop    a    message="go"    max_runs=5    timeout_per_run_seconds=100    max_duration_seconds=100    max_cost_usd=1.0
    Loop Clock Moves    99
    Run Responds    a    one    0.5
    Loop Clock Moves    51
    Stop Answer Should Be    a    stopping
    Run Responds    a    two    0.6
    Loop Should Have Ended    a    stopped    user_stopped
    Stop Answer Should Be    a    already_done

The Stop Signal Is A Substring Of The Full Response
    [Tags]    LP-005
    Start Loop    a    message="go"    max_runs=5    stop_signal="[[DONE]]"
    Run Responds    a    not yet [[DONE
    Loop Should Be Running    a    2
    Run Responds    a    all good [[DONE]] bye
    Loop Should Have Ended    a    completed    stop_signal_matched

The Stop Signal Wins Over A Crossed Budget
    [Tags]    LP-005    LP-011
    Start Loop    a    message="go"    max_runs=5    stop_signal="[[DONE]]"    max_cost_usd=1.0
    Run Responds    a    almost [[DONE    0.2
    Loop Should Be Running    a    2
    Run Responds    a    ok [[DONE]]    5
    Loop Should Have Ended    a    completed    stop_signal_matched

A Stop During The Delay Ends The Loop At Once
    [Tags]    LP-006    LP-008
    Start Loop    a    message="go"    max_runs=3    delay_seconds=60
    Run Responds    a    one
    Loop Clock Moves    59
    Loop Should Be Running    a    1
    Stop Answer Should Be    a    stopping
    Loop Should Have Ended    a    stopped    user_stopped
    Loop Should Have Ended At    a    59

The Delay Is Cut Short By The Deadline
    [Tags]    LP-007    LP-008
    Start Loop    a    message="go"    max_runs=5    delay_seconds=100    timeout_per_run_seconds=30    max_duration_seconds=50
    Loop Clock Moves    10
    Run Responds    a    one
    Loop Clock Moves    39
    Loop Should Be Running    a    1
    Loop Clock Moves    1
    Loop Should Have Ended    a    stopped    deadline_exceeded
    Loop Should Have Ended At    a    50

The Next Run Starts After The Delay
    [Tags]    LP-008
    Start Loop    a    message="go"    max_runs=3    delay_seconds=7.5
    Run Responds    a    one
    Loop Clock Moves    7.5
    Run Should Have Started At    a    2    7.5

A Silent Run Times Out
    [Tags]    LP-009    LP-016
    Start Loop    a    message="go"    max_runs=2    timeout_per_run_seconds=30    on_failure="continue"
    Loop Clock Moves    30
    Run Status Should Be    a    1    failed    TIMEOUT
    Run Responds    a    fine
    Loop Should Have Ended    a    completed_with_errors    max_runs_reached
    Loop Run Counts Should Be    a    2    1

Finite Positive Costs Are Summed While The Budget Lasts
    [Tags]    LP-010
    Start Loop    a    message="go"    max_runs=3    max_cost_usd=10.0    no_progress_threshold=0
    Run Responds    a    a    0.25
    Run Responds    a    b    1.5
    Loop Should Have Spent    a    1.75
    Loop Cost Warnings Should Be    a
    Run Responds    a    c    2
    Loop Should Have Spent    a    3.75
    Loop Should Have Ended    a    completed    max_runs_reached

Only Finite Positive Costs Count
    [Tags]    LP-010    edge
    Start Loop    a    message="go"    max_runs=5    max_cost_usd=10.0    no_progress_threshold=0
    Run Responds    a    a    1.5
    Run Responds    a    b    NaN
    Run Responds    a    c    -inf
    Run Responds    a    d    none
    Run Returns Non Success    a    AGENT_ERROR    0.25
    Loop Should Have Spent    a    1.75
    Loop Cost Warnings Should Be    a    4
    Loop Should Have Ended    a    failed    error

An Infinite Cost Spends None Of The Budget
    [Tags]    LP-010    LP-011    edge
    Start Loop    a    message="go"    max_runs=3    max_cost_usd=1.0    no_progress_threshold=0
    Run Responds    a    a    inf
    Loop Should Be Running    a    2
    Loop Should Have Spent    a    0
    Run Responds    a    b    inf
    Run Responds    a    c    0.5
    Loop Should Have Spent    a    0.5
    Loop Cost Warnings Should Be    a
    Loop Should Have Ended    a    completed    max_runs_reached

The Budget Stops Only Before A Next Run
    [Tags]    LP-011
    Start Loop    a    message="go"    max_runs=3    max_cost_usd=0.01
    Run Responds    a    expensive    0.02
    Loop Should Have Ended    a    stopped    budget_exhausted
    Loop Run Counts Should Be    a    1    0

Identical Responses Stop The Loop
    [Tags]    LP-012
    Start Loop    a    message="go"    max_runs=9    no_progress_threshold=2
    Run Responds    a    foo bar
    Run Responds    a    foobar
    Loop Should Be Running    a    3
    Run Responds    a    foobar${SPACE}${SPACE}
    Loop Should Have Ended    a    stopped    no_progress

A User Stop Is Not Relabelled As No Progress
    [Tags]    LP-013    LP-006
    Start Loop    a    message="go"    max_runs=9
    Run Sends No Response    a
    Run Responds    a    ${SPACE}
    Stop Loop    a
    Run Responds    a    ${EMPTY}
    Loop Should Have Ended    a    stopped    user_stopped

Abort Fails The Loop At The First Failure
    [Tags]    LP-014
    Start Loop    a    message="go"    max_runs=3
    Run Returns Non Success    a    AUTH
    Loop Should Have Ended    a    failed    error
    Run Status Should Be    a    1    failed    AUTH

Tolerated Failures Make A Completed Loop Completed With Errors
    [Tags]    LP-016
    Start Loop    a    message="go {{run}}"    max_runs=3    on_failure="continue"
    Run Responds    a    a
    Run Returns Non Success    a    AGENT_ERROR
    Run Responds    a    b
    Loop Should Have Ended    a    completed_with_errors    max_runs_reached
    Loop Run Counts Should Be    a    3    1

Under Continue A Loop Whose Runs All Succeed Ends Completed
    [Tags]    LP-015    LP-016
    Start Loop    a    message="go {{run}}"    max_runs=3    on_failure="continue"    max_consecutive_failures=2
    Run Responds    a    a
    Run Responds    a    b
    Loop Should Be Running    a    3
    Run Responds    a    c
    Loop Should Have Ended    a    completed    max_runs_reached
    Loop Run Counts Should Be    a    3    0

Continue Fails The Loop After A Streak
    [Tags]    LP-015    LP-016
    Start Loop    a    message="go {{run}}"    max_runs=9    on_failure="continue"    max_consecutive_failures=2
    Run Raises    a    ValueError    one
    Run Responds    a    ok
    Run Raises    a    ValueError    two
    Loop Should Be Running    a    4
    Run Raises    a    ValueError    three
    Loop Should Have Ended    a    failed    max_consecutive_failures
    Loop Run Counts Should Be    a    4    3

A Restart Interrupts Running Loops For Good
    [Tags]    LP-017
    Start Loop    a    message="go"    max_runs=3
    Run Responds    a    one
    Restart Loop Runtime
    Loop Should Have Ended    a    interrupted    interrupted
    Run Status Should Be    a    2    interrupted
    Loop Clock Moves    5000
    Loop Run Counts Should Be    a    2    0

Elapsed Seconds Are Computed On Read
    [Tags]    LP-018
    Start Loop    a    message="go"    max_runs=1
    Loop Clock Moves    3
    Loop Elapsed Seconds Should Be    a    3
    Run Responds    a    done
    Loop Clock Moves    3
    Loop Elapsed Seconds Should Be    a    3

Each Ended Run And The Loop's End Emit One Event Each
    [Tags]    LP-019    LP-008    LP-009    LP-016
    Require Loop Events
    Start Loop    a    message="go"    max_runs=3    delay_seconds=5    timeout_per_run_seconds=30    on_failure="continue"
    Loop Should Have Emitted    a    0
    Loop Clock Moves    2.5
    Run Responds    a    first    0.25
    Loop Should Have Emitted    a    1
    Run Event Should Be    a    1    1    succeeded    0.25    2500
    Loop Clock Moves    35
    Loop Should Have Emitted    a    2
    Run Event Should Be    a    2    2    failed    none    30000
    Loop Clock Moves    5
    Run Responds    a    last    0.5
    Loop Should Have Ended    a    completed_with_errors    max_runs_reached
    Loop Should Have Emitted    a    4
    Run Event Should Be    a    3    3    succeeded    0.5    0
    Loop Event Should Be    a    4    completed_with_errors    max_runs_reached

A Stop Between Runs And A Restart Emit Only The Loop's End
    [Tags]    LP-019    LP-006    LP-017
    Require Loop Events
    Start Loop    a    message="go"    max_runs=3    delay_seconds=10
    Run Responds    a    one    none
    Stop Answer Should Be    a    stopping
    Loop Should Have Ended    a    stopped    user_stopped
    Loop Should Have Emitted    a    2
    Run Event Should Be    a    1    1    succeeded    none    0
    Loop Event Should Be    a    2    stopped    user_stopped
    Start Loop    b    message="go"    max_runs=3
    Loop Clock Moves    4
    Restart Loop Runtime
    Loop Should Have Ended    b    interrupted    interrupted
    Loop Should Have Emitted    b    1
    Loop Event Should Be    b    1    interrupted    interrupted
    Loop Should Have Emitted    a    2
