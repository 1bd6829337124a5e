*** Settings ***
Documentation       Conformance checks for a restart over the same store (spec/restart.yaml,
...                 RS-001..RS-008).
...
...                 The runtime is stopped without a shutdown and a new one opens over the
...                 same store; the harness compares every record, the listing and the
...                 health with the oracle, which keeps every record. Tests are skipped on a
...                 backend that does not claim restart.
Resource            lifecycle.resource
Library             jobconform.conformance.restart.keywords.RestartLibrary
Test Tags           restart


*** Test Cases ***
Records Outlive A Restart Unchanged
    [Tags]    RS-001
    Start Runtime    slots=4
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Returns    a    {"answer": 42}
    Job Raises    b    ValueError    boom
    Advance Clock    5
    Submit Job    d
    Restart Runtime Over The Same Store
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    {"answer": 42}
    Job Status Should Be    c    running
    Job Status Should Be    d    queued
    Listing Should Show    a    b    c    d
    Timestamps Should Be UTC    a

Queued Work Keeps Its Place Across A Restart
    [Tags]    RS-002
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Restart Runtime Over The Same Store
    Submit Job    c
    Dispatch
    Job Status Should Be    a    running
    Job Returns    a
    Dispatch
    Job Status Should Be    b    running
    Job Status Should Be    c    queued

Work Running At A Restart Comes Back Through The Lease Pass
    [Tags]    RS-003
    Start Runtime    slots=2
    Submit Job    a
    Dispatch
    Advance Clock    10
    Restart Runtime Over The Same Store
    Expire Leases    60
    Job Status Should Be    a    running
    Advance Clock    51
    Expire Leases    60
    Job Status Should Be    a    queued
    Dispatch
    Job Returns    a    7
    Job Status Should Be    a    succeeded

SIGTERM Shuts The Runtime Down And The Next Runtime Finds What It Ended
    [Tags]    RS-004
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Returns    a    1
    Dispatch
    Advance Clock    3
    Send SIGTERM To The Runtime    grace_seconds=10
    Job Status Should Be    a    succeeded
    Job Status Should Be    b    cancelled
    Job Status Should Be    c    cancelled
    Submit Job    d
    Dispatch
    Job Status Should Be    d    running

SIGTERM After A Restart Ends The Jobs Queued Before It Too
    [Tags]    RS-004
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Restart Runtime Over The Same Store
    Dispatch
    Submit Job    c
    Send SIGTERM To The Runtime    grace_seconds=10
    Job Status Should Be    a    cancelled
    Job Status Should Be    b    cancelled
    Job Status Should Be    c    cancelled

SIGTERM Under Drain Lets The Work Run On And The Kill Changes No Record
    [Tags]    RS-005
    Start Runtime    slots=2
    Submit Job    a
    Submit Job    b
    Dispatch
    Job Returns    a    1
    Submit Job    c
    Advance Clock    3
    Send SIGTERM To The Runtime    grace_seconds=10
    Job Status Should Be    a    succeeded
    Job Status Should Be    b    running
    Job Status Should Be    c    queued
    Dispatch
    Job Status Should Be    c    running
    Job Status Should Be    b    running

Under Drain A Body Ending Within The Grace Period Ends Normally And Only The Rest Is Killed
    [Tags]    RS-006
    Start Runtime    slots=2
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Send Stop Signal During Which    SIGTERM    grace_seconds=10
    Advance Clock    3
    Job Returns    a    1
    End The Grace Period
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    1
    Job Status Should Be    b    running
    Job Status Should Be    c    queued

Under Drain A Runtime Whose Last Body Ends Within The Grace Period Exits By Itself
    [Tags]    RS-006
    Start Runtime    slots=1
    Submit Job    a
    Dispatch
    Send Stop Signal During Which    SIGTERM    grace_seconds=10
    Advance Clock    4
    Job Raises    a    ValueError    boom
    End The Grace Period
    Job Status Should Be    a    failed

A Drain Timeout Shorter Than The Grace Period Cancels What Is Left Before Any Kill
    [Tags]    RS-006
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Send Stop Signal    SIGTERM    grace_seconds=60
    Job Status Should Be    a    cancelled
    Job Status Should Be    b    cancelled

SIGINT Shuts The Runtime Down As SIGTERM Does
    [Tags]    RS-007
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    2
    Send Stop Signal    SIGINT    grace_seconds=10
    Job Status Should Be    a    cancelled
    Job Status Should Be    b    cancelled
    Submit Job    c
    Dispatch
    Job Status Should Be    c    running

A Runtime Stopped By SIGTERM Puts Back The Host's Signal Handlers
    [Tags]    RS-008
    Start Runtime    slots=1
    Submit Job    a
    Dispatch
    Send Stop Signal    SIGTERM    grace_seconds=10
    Job Status Should Be    a    cancelled
