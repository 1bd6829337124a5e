*** Settings ***
Documentation       Conformance checks for the re-delivery governor (spec/governor.yaml,
...                 RG-001..RG-014). Each test runs two governors on one store and is tagged
...                 with the requirement IDs it checks.
Resource            lifecycle.resource
Library             jobconform.conformance.governor.keywords.GovernorLibrary
Test Setup          Start Small Governor
Test Tags           governor


*** Keywords ***
Start Small Governor
    [Documentation]    2 per target and 3 in all per 60 s; a 300 s pause when 3 targets fail
    ...                alike within 120 s; waits from 1 s to 60 s; a restart jitter up to 60 s.
    Start Governor    target_limit=2    fleet_limit=3    target_window_seconds=60
    ...    fleet_window_seconds=60    pause_threshold=3    pause_window_seconds=120
    ...    pause_ttl_seconds=300    pause_retry_after_seconds=30    pause_classes=auth,billing
    ...    base_ms=1000    cap_ms=60000    initial_jitter_max_seconds=60


*** Test Cases ***
The Wait Is A Capped Decorrelated Jitter With A Retry-After Floor
    [Tags]    RG-001
    Ask Re-Delivery Wait    ${None}    0.5
    Re-Delivery Wait Should Be    2000
    Ask Re-Delivery Wait    4000    0.5
    Re-Delivery Wait Should Be    6500
    Ask Re-Delivery Wait    50000    0.9
    Re-Delivery Wait Should Be    60000
    Ask Re-Delivery Wait    1000    0.0    retry_after_ms=7000
    Re-Delivery Wait Should Be    7000

A Target Over Its Cap Is Refused Until Its Oldest Re-Delivery Leaves The Window
    [Tags]    RG-002    RG-004
    Offer Re-Delivery    a
    Governor Clock Moves    20
    Offer Re-Delivery    a    governor=2
    Offer Re-Delivery    a
    Re-Delivery Should Be Refused    40
    Governor Clock Moves    40
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted

The Fleet Cap Counts All Targets
    [Tags]    RG-003
    Offer Re-Delivery    a
    Offer Re-Delivery    b
    Governor Clock Moves    15
    Offer Re-Delivery    c    governor=2
    Offer Re-Delivery    d
    Re-Delivery Should Be Refused    45

A Refusal Is Retryable And Not Counted
    [Tags]    RG-004
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Re-Delivery Should Be Refused    60
    Governor Clock Moves    60
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted

Distinct Targets Failing Alike Pause Re-Delivery
    [Tags]    RG-005
    Record Failure Result    a    a1    auth
    Record Failure Result    b    b1    auth
    Pause Should End At Second    ${None}
    Governor Clock Moves    119
    Record Failure Result    c    c1    auth    governor=2
    Pause Should End At Second    419
    Offer Re-Delivery    z
    Re-Delivery Should Be Refused    30

One Target Cannot Arm The Pause
    [Tags]    RG-006
    FOR    ${n}    IN RANGE    5
        Record Failure Result    a    a${n}    auth
    END
    Record Failure Result    b    b1    billing
    Record Failure Result    c    c1    auth
    Pause Should End At Second    ${None}

A Replay Is Counted Once
    [Tags]    RG-007
    Record Failure Result    a    r1    auth
    Record Failure Result    b    r2    auth
    Record Failure Result    c    r2    auth    governor=2
    Pause Should End At Second    ${None}

The Pause Ends By Itself
    [Tags]    RG-008
    Record Failure Result    a    a1    auth
    Record Failure Result    b    b1    auth
    Record Failure Result    c    c1    auth
    Governor Clock Moves    200
    Record Failure Result    d    d1    auth
    Record Failure Result    e    e1    auth    governor=2
    Record Failure Result    f    f1    auth
    Governor Clock Moves    99
    Pause Should End At Second    300
    Governor Clock Moves    1
    Pause Should End At Second    ${None}
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted

A Pause Armed Between Whole Seconds Holds Until A Microsecond Before Its End
    [Tags]    RG-008
    Governor Clock Moves    0.5
    Record Failure Result    a    a1    auth
    Record Failure Result    b    b1    auth
    Record Failure Result    c    c1    auth
    Pause Should End At Second    300.5
    Governor Clock Moves    299.999999
    Offer Re-Delivery    a
    Re-Delivery Should Be Refused    30
    Governor Clock Moves    0.000001
    Pause Should End At Second    ${None}
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted

A Rate Limit Counts As A Billing Failure
    [Tags]    RG-010
    Record Rate-Limited Result    a    a1
    Record Failure Result    b    b1    billing
    Record Failure Result    c    c1    auth
    Pause Should End At Second    ${None}
    Record Rate-Limited Result    a    a1    governor=2
    Pause Should End At Second    ${None}
    Governor Clock Moves    30
    Record Rate-Limited Result    c    c2    governor=2
    Pause Should End At Second    330
    Offer Re-Delivery    z
    Re-Delivery Should Be Refused    30

A Governor Whose Store Is Down Fails Open
    [Tags]    RG-011
    Record Failure Result    a    a1    auth
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Governor Store Outage    ${True}
    Pause Should End At Second    ${None}
    Offer Re-Delivery    a    governor=2
    Re-Delivery Should Be Accepted
    Record Failure Result    b    b1    auth
    Record Failure Result    c    c1    auth    governor=2
    Pause Should End At Second    ${None}
    Governor Store Outage    ${False}
    Pause Should End At Second    ${None}
    Offer Re-Delivery    a
    Re-Delivery Should Be Refused    60
    Record Failure Result    b    b1    auth
    Record Failure Result    c    c1    auth
    Pause Should End At Second    300

The Re-Send Sweep Spaces Its Envelopes By A Jitter Each
    [Tags]    RG-012
    Governor Clock Moves    20
    Governor Restarts    0.5    governor=2
    Ask Re-Send Times    0.25, 0.5, 0.999    governor=2
    Envelopes Should Be Re-Sent At Seconds    50.25, 50.75, 51.749
    Ask Re-Send Times    0.5
    No Envelope Should Be Re-Sent

A Restart Holds Its First Re-Send Sweep Back By Its Own Jitter
    [Tags]    RG-009
    Re-Send Sweep Should Be Due At Second    ${None}    governor=2
    Governor Clock Moves    20
    Governor Restarts    0.75    governor=1
    Governor Restarts    0.1    governor=2
    Re-Send Sweep Should Be Due At Second    65    governor=1
    Re-Send Sweep Should Be Due At Second    26    governor=2
    Governor Clock Moves    50
    Governor Restarts    0.5    governor=1
    Re-Send Sweep Should Be Due At Second    100    governor=1
    Re-Send Sweep Should Be Due At Second    26    governor=2

A Governor Switched Off Holds Nothing Back But Counts The Failures It Records
    [Tags]    RG-013
    Switch Governor    ${False}
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted
    Switch Governor    ${True}
    Offer Re-Delivery    a
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted
    Offer Re-Delivery    a
    Re-Delivery Should Be Refused    60
    Switch Governor    ${False}
    Record Failure Result    a    a1    auth
    Record Failure Result    b    b1    auth
    Record Failure Result    c    c1    auth
    Pause Should End At Second    300
    Pause Should End At Second    ${None}    governor=1
    Offer Re-Delivery    a
    Re-Delivery Should Be Accepted
    Offer Re-Delivery    b    governor=2
    Re-Delivery Should Be Refused    30
    Switch Governor    ${True}
    Offer Re-Delivery    b
    Re-Delivery Should Be Refused    30

Kills At Three Targets Never Pause Re-Delivery Whatever Their Text Says
    [Tags]    RG-014
    Record Raw End Result    a    a1    exit_code=143    error_text=Unauthorized
    Record Raw End Result    b    b1    signal=SIGKILL    error_text=token expired or revoked
    Record Raw End Result    c    c1    exit_code=1    error_text=timed out: authentication failed    governor=2
    Pause Should End At Second    ${None}
    Record Raw End Result    a    a2    exit_code=1    error_text=Authentication failed
    Record Raw End Result    b    b2    exit_code=1    output=${True}    error_text=401
    Pause Should End At Second    ${None}
    Record Raw End Result    c    c2    exit_code=1    error_text=unauthorized    governor=2
    Pause Should End At Second    300
