*** Settings ***
Documentation       Conformance checks for the dispatch circuit breaker (spec/breaker.yaml,
...                 CB-001..CB-019). Each test runs two workers on one store and is tagged
...                 with the requirement IDs it checks. Run with
...                 `robot --variable BACKEND:memory --variable PROFILE:canonical robot/`.
Resource            breaker.resource
Test Setup          Start Seed Breaker
Test Tags           breaker


*** Test Cases ***
Both Switches Must Be On For The Breaker To Engage
    [Tags]    CB-001
    Opt In Target    a
    Target Fails Calls    a    3    auth
    Breaker Should Be    a    closed
    Turn Global Breaker Switch    ${True}
    Opt In Target    a    ${False}
    Target Fails Calls    a    3    auth
    Breaker Should Be    a    closed
    Opt In Target    a
    Target Fails Calls    a    3    auth
    Breaker Should Be    a    open

Consecutive Auth Failures Trip And A Success Resets The Count
    [Tags]    CB-002
    Engage Breaker For    a
    Target Fails Calls    a    2    auth
    Call Arrives    a    ok
    Call Ends    a    ok    success
    Breaker Should Count    a    0
    Target Fails Calls    a    3    auth
    Breaker Should Be    a    open
    Breaker Should Be Open Until Second    a    30

Timeouts And Agent Errors Are Not Counted
    [Tags]    CB-003
    Engage Breaker For    a
    Target Fails Calls    a    1    auth
    Target Fails Calls    a    5    timeout
    Target Fails Calls    a    5    agent_error
    Breaker Should Count    a    1
    Breaker Should Be    a    closed

Cancellation Is Not A Failure
    [Tags]    CB-004
    Engage Breaker For    a
    Target Fails Calls    a    2    auth
    Call Arrives    a    x
    Call Ends    a    x    cancelled
    Breaker Should Count    a    2
    Target Fails Calls    a    1    auth
    Breaker Clock Moves    30
    Call Arrives    a    p
    Call Ends    a    p    cancelled
    Probe Should Be    a    None
    Call Arrives    a    q
    Answer Should Be    q    probe

An Open Breaker Refuses Calls And New Work
    [Tags]    CB-005
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Call Arrives    a    c
    Queue Work    a    w
    Answer Should Be    c    refused
    Answer Should Be    w    refused
    Queue Should Hold    a

An Open Period Ending Between Whole Seconds Refuses A Call A Microsecond Before Its End
    [Tags]    CB-005
    Engage Breaker For    a
    Breaker Clock Moves    0.5
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    29.999999
    Call Arrives    a    c
    Answer Should Be    c    refused
    Breaker Clock Moves    0.000001
    Call Arrives    a    p
    Answer Should Be    p    probe

A Trip Fails The Queued Work At Once
    [Tags]    CB-006
    Engage Breaker For    a
    Engage Breaker For    b
    Queue Work    a    w1
    Queue Work    b    x1
    Queue Work    a    w2
    Target Fails Calls    a    3    auth
    Queue Should Hold    a
    Failed Work Should Be    a    w1, w2
    Queue Should Hold    b    x1

Exactly One Concurrent Caller Is The Probe
    [Tags]    CB-007
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    30
    Breaker Should Be    a    half_open
    Calls Arrive At Once    a    p1, p2, p3, p4, p5, p6
    Concurrent Calls Should Get    1    5
    Call Arrives    a    late    worker=2
    Answer Should Be    late    refused

A Successful Probe Closes And Resets The Cooldown
    [Tags]    CB-008
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    30
    Call Arrives    a    p
    Call Ends    a    p    failure    auth
    Cooldown Should Be    a    60
    Breaker Clock Moves    60
    Call Arrives    a    q
    Call Ends    a    q    success
    Breaker Should Be    a    closed
    Cooldown Should Be    a    30

A Failed Probe Doubles The Cooldown Up To The Cap
    [Tags]    CB-009
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    FOR    ${wait}    ${next}    IN    30    60    60    120    120    240    240    300    300    300
        Breaker Clock Moves    ${wait}
        Call Arrives    a    probe-${wait}
        Call Ends    a    probe-${wait}    failure    auth
        Cooldown Should Be    a    ${next}
    END

A Silent Probe Loses Its Slot When Its Lease Ends
    [Tags]    CB-010
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    30
    Call Arrives    a    silent
    Breaker Clock Moves    59
    Probe Should Be    a    silent
    Breaker Clock Moves    1
    Probe Should Be    a    None
    Call Arrives    a    next
    Answer Should Be    next    probe
    Call Ends    a    silent    failure    auth
    Probe Should Be    a    next
    Cooldown Should Be    a    30

The Breaker Fails Open When Its Store Is Down
    [Tags]    CB-011
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Breaker Store Goes Down
    Call Arrives    a    c
    Reset Breaker    a
    Answer Should Be    c    admitted
    Breaker State Should Be Unknown    a
    Logged Store Outages Should Be    2
    Breaker Store Comes Back
    Breaker Should Be    a    open

Reset Clears The Breaker
    [Tags]    CB-012
    Engage Breaker For    a
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    30
    Call Arrives    a    p
    Call Ends    a    p    failure    auth
    Reset Breaker    a
    Breaker Should Be    a    closed
    Cooldown Should Be    a    30
    Probe Should Be    a    None

Two Workers Share One Breaker
    [Tags]    CB-013
    Engage Breaker For    a
    Call Arrives    a    c1
    Call Ends    a    c1    failure    auth    worker=2
    Call Arrives    a    c2    worker=2
    Call Ends    a    c2    failure    auth
    Call Arrives    a    c3
    Call Ends    a    c3    failure    auth    worker=2
    Breaker Should Be    a    open    worker=1
    Breaker Should Be    a    open    worker=2

The Backstop Sweep Fails The Work A Lost Drain Left
    [Tags]    CB-014
    Engage Breaker For    a
    Engage Breaker For    b
    Queue Work    a    w1
    Queue Work    a    w2
    Queue Work    b    v
    Trip Drains Are Lost
    Target Fails Calls    a    3    auth
    Trip Drains Are Lost    ${False}
    Breaker Should Be    a    open
    Queue Should Hold    a    w1, w2
    Breaker Clock Moves    60
    Backstop Sweep Runs
    Backstop Should Have Failed    2
    Breaker Should Be    a    half_open
    Failed Work Should Be    a    w1, w2
    Queue Should Hold    a
    Queue Should Hold    b    v
    Breaker Store Goes Down
    Queue Work    a    x
    Breaker Store Comes Back
    Backstop Sweep Runs
    Backstop Should Have Failed    1
    Failed Work Should Be    a    w1, w2, x

A Missed Heartbeat Counts Only While Closed
    [Tags]    CB-015
    Engage Breaker For    a
    Queue Work    a    w
    Target Misses Heartbeat    a
    Breaker Should Count    a    1
    Target Fails Calls    a    1    auth
    Target Misses Heartbeat    a
    Breaker Should Be    a    open
    Failed Work Should Be    a    w
    Breaker Clock Moves    10
    Target Misses Heartbeat    a
    Breaker Should Be Open Until Second    a    30
    Cooldown Should Be    a    30
    Breaker Clock Moves    20
    Call Arrives    a    p
    Target Misses Heartbeat    a
    Probe Should Be    a    p
    Call Ends    a    p    success
    Breaker Should Be    a    closed

A Call Killed By A Signal Is Never An Auth Failure
    [Tags]    CB-016
    Engage Breaker For    a
    Queue Work    a    w
    Call Arrives    a    k1
    Call Ends Raw    a    k1    signal=SIGKILL
    Answer Should Be    k1    timeout
    Call Arrives    a    k2
    Call Ends Raw    a    k2    exit_code=137
    Answer Should Be    k2    timeout
    Call Arrives    a    k3
    Call Ends Raw    a    k3    exit_code=-9    output=${True}    error_text=Authentication failed
    Answer Should Be    k3    timeout
    Call Arrives    a    k4
    Call Ends Raw    a    k4    exit_code=1    error_text=Killed: out of memory (401 retry budget)
    Answer Should Be    k4    timeout
    Breaker Should Be    a    closed
    Breaker Should Count    a    0
    Queue Should Hold    a    w
    Target Fails Calls    a    3    auth
    Breaker Clock Moves    30
    Call Arrives    a    p
    Call Ends Raw    a    p    signal=SIGINT
    Breaker Should Be    a    half_open
    Cooldown Should Be    a    30
    Call Arrives    a    q
    Answer Should Be    q    probe

Only A Confirmed Authentication Message Is An Auth Failure
    [Tags]    CB-017
    Engage Breaker For    a
    Call Arrives    a    s
    Call Ends Raw    a    s    exit_code=1
    Answer Should Be    s    agent_error
    Call Arrives    a    e
    Call Ends Raw    a    e    exit_code=2    output=${True}    error_text=tool failed: bad JSON
    Answer Should Be    e    agent_error
    Breaker Should Count    a    0
    Call Arrives    a    u1
    Call Ends Raw    a    u1    exit_code=1    error_text=Authentication failed: invalid API key
    Answer Should Be    u1    auth
    Call Arrives    a    u2
    Call Ends Raw    a    u2    exit_code=1    output=${True}    error_text=HTTP 401 Unauthorized
    Answer Should Be    u2    auth
    Breaker Should Count    a    2
    Call Arrives    a    u3
    Call Ends Raw    a    u3    error_text=subscription token expired or revoked
    Answer Should Be    u3    auth
    Breaker Should Be    a    open

The Error Reported For A Kill Names The Signal That Killed It
    [Tags]    CB-018
    Engage Breaker For    a
    Report End    k1    signal=SIGTERM
    Report Should Be    k1    {"failure_class": "timeout", "signal": "SIGTERM", "possible_causes": []}
    Report End    k2    exit_code=-9    output=${True}    error_text=Unauthorized
    Report Should Be    k2    {"failure_class": "timeout", "signal": "SIGKILL", "possible_causes": []}
    Report End    k3    exit_code=143
    Report Should Be    k3    {"failure_class": "timeout", "signal": "SIGTERM", "possible_causes": []}
    Report End    e    exit_code=1    error_text=OOM
    Report Should Be    e    {"failure_class": "timeout", "signal": null, "possible_causes": []}

A Failure With No Output Is Reported With Its Possible Causes Never As The Token's
    [Tags]    CB-019
    Engage Breaker For    a
    Report End    s    exit_code=2
    Report Should Be    s    {"failure_class": "agent_error", "signal": null, "possible_causes": ["oom_kill", "timeout", "expired_token"]}
    Report End    o    exit_code=2    output=${True}
    Report Should Be    o    {"failure_class": "agent_error", "signal": null, "possible_causes": []}
    Report End    t    exit_code=2    error_text=token expired
    Report Should Be    t    {"failure_class": "auth", "signal": null, "possible_causes": []}
