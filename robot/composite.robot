*** Settings ***
Documentation       Conformance checks for areas working together (spec/composite.yaml,
...                 CX-001..CX-006): loops, reminders, breaker-guarded jobs and the governor's
...                 pause on one admission. Each test runs one composite runtime and is tagged
...                 with the requirement IDs it checks.
Resource            lifecycle.resource
Library             jobconform.conformance.composite.keywords.CompositeLibrary
Test Setup          Start Small Composite
Test Tags           composite


*** Keywords ***
Start Small Composite
    [Documentation]    Owners a and b with 2 slots each; a breaker opening after 2 auth
    ...                failures for 30 s; a 300 s pause when 2 owners fail alike; backlog
    ...                entries expire after 200 s.
    Start Composite    a    b    parallel_cap=2    failure_threshold=2    cooldown_seconds=30
    ...    pause_threshold=2    pause_ttl_seconds=300    backlog_max_age_seconds=200


*** Test Cases ***
Each Loop Run Takes A Slot Behind The Waiting Work
    [Tags]    CX-001
    Submit Composite Jobs    a    j1
    Start Composite Loop    a    L    3
    Submit Composite Jobs    a    j2
    Composite Work Should Be    running    j1    L#1
    Composite Work Should Be    queued    j2
    End Composite Work    L#1
    Composite Work Should Be    running    j2
    Composite Work Should Be    queued    L#2
    End Composite Work    j2
    Composite Work Should Be    running    L#2
    End Composite Work    L#2    failed=${True}
    Composite Loop Should Be    L    failed    2
    Composite Work Should Be    None    L#3

A Reminder Fire Takes A Slot Shared With Loop Runs
    [Tags]    CX-002
    Set Composite Reminder    b    r1    90
    Start Composite Loop    b    L    2
    Submit Composite Jobs    b    j1
    Composite Clock Moves    90
    Composite Reminder Should Be    r1    fired
    Composite Work Should Be    queued    r1
    End Composite Work    L#1
    Composite Work Should Be    running    r1
    Composite Work Should Be    queued    L#2
    End Composite Work    r1
    Composite Work Should Be    running    L#2

The Half-Open Probe Needs A Free Slot Not Claimed By Waiting Work
    [Tags]    CX-003
    Submit Composite Jobs    a    j1    j2
    End Composite Work    j1    j2    failed=${True}
    Composite Breaker Should Be    a    open
    Set Composite Reminder    a    r1    60
    Start Composite Loop    a    L    1
    Composite Clock Moves    30
    Start Composite Loop    a    M    1
    Composite Clock Moves    30
    Composite Work Should Be    queued    r1
    Composite Breaker Should Be    a    half_open
    Submit Composite Jobs    a    p1
    Composite Job Should Be Refused    p1
    End Composite Work    L#1
    Composite Work Should Be    running    r1
    Submit Composite Jobs    a    p2
    Composite Job Should Be Refused    p2
    End Composite Work    M#1
    Submit Composite Jobs    a    p3
    Composite Work Should Be    running    p3
    Composite Breaker Should Be    a    half_open

A Governor Pause Holds The Drain Until It Ends
    [Tags]    CX-004
    Report Composite Failures    billing    a    b
    Composite Admission Should Be Paused
    Composite Clock Moves    150
    Start Composite Loop    b    L    2
    Submit Composite Jobs    b    j1    j2
    End Composite Work    L#1
    Composite Work Should Be    queued    j2    L#2
    Run Composite Maintenance
    Composite Work Should Be    queued    j2    L#2
    Composite Clock Moves    150
    Run Composite Maintenance
    Composite Work Should Be    running    j1    j2
    Composite Work Should Be    queued    L#2

A Governor Pause Holds The Lease Reaper Until It Ends
    [Tags]    CX-005
    Start Composite Loop    a    L    2
    Submit Composite Jobs    a    j1
    Restart Composite Admission
    Composite Clock Moves    1100
    Report Composite Failures    auth    a    b
    Composite Admission Should Be Paused
    Composite Clock Moves    150
    Composite Work Should Be    running    L#1    j1
    Submit Composite Jobs    a    j2
    Composite Work Should Be    queued    j2
    End Composite Work    L#1
    Composite Work Should Be    finished    L#1
    Composite Work Should Be    queued    j2    L#2
    Composite Clock Moves    150
    Composite Work Should Be    lease_expired    j1
    Composite Work Should Be    running    j2    L#2

A Loop Run Stopped At Its Execution Timeout Fails The Loop
    [Tags]    CX-006
    Start Composite Loop    b    L    3
    Composite Clock Moves    600
    Submit Composite Jobs    b    j1    j2
    Composite Work Should Be    queued    j2
    Composite Clock Moves    300
    Composite Work Should Be    timed_out    L#1
    Composite Work Should Be    running    j1    j2
    Composite Loop Should Be    L    failed    1
    Composite Work Should Be    None    L#2

A Loop Run Expired In The Backlog Fails The Loop
    [Tags]    CX-006
    Submit Composite Jobs    b    j1    j2
    Start Composite Loop    b    L    3
    Composite Work Should Be    queued    L#1
    Composite Clock Moves    201
    Run Composite Maintenance
    Composite Work Should Be    expired    L#1
    Composite Loop Should Be    L    failed    1
    Composite Work Should Be    None    L#2

A Loop Run Whose Lease Is Reclaimed After A Restart Fails The Loop
    [Tags]    CX-006
    Start Composite Loop    b    L    3
    Restart Composite Admission
    Composite Clock Moves    1260
    Composite Work Should Be    lease_expired    L#1
    Composite Loop Should Be    L    failed    1
    Composite Work Should Be    None    L#2
