*** Settings ***
Documentation       Conformance checks for re-delivery and poison parking
...                 (spec/redelivery.yaml, RD-001..RD-008).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim, or which does not apply
...                 to the profile, is skipped with the reason. Leases are in seconds.
Resource            lifecycle.resource
Test Tags           redelivery


*** Variables ***
${POISON_ERROR}     poison_lease: re-delivery cap reached


*** Keywords ***
Lease Lapses And Job Is Delivered Again
    [Documentation]    61 seconds of silence, a lease pass of 60 s, and a dispatch.
    Advance Clock    61
    Expire Leases    60
    Dispatch


*** Test Cases ***
# -- RD-001: re-queue under the cap ------------------------------------------------------

An Expired Lease Puts The Same Job Back In The Queue
    [Tags]    RD-001
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    61
    Lease Pass Should Re-queue And Park    60    1    0
    Job Status Should Be    a    queued
    Job Redelivery Count Should Be    a    1
    Job Should Not Be Parked    a
    Counters Should Show    processed=0    failed=0    cancelled=0
    Health Should Show    queued=1    running=0    total=1
    Dispatch
    Job Status Should Be    a    running
    Job Should Have Started At Second    a    61
    Job Returns    a    "done"
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    "done"
    Job Redelivery Count Should Be    a    1

A Job Silent For Its Lease Plus A Microsecond Is Re-delivered
    [Tags]    RD-001    edge
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    60.000001
    Lease Pass Should Re-queue And Park    60    1    0
    Job Status Should Be    a    queued

A Re-delivery Spends No Retry
    [Tags]    RD-001    RT-001
    Start Runtime
    Submit Job With Retry    a    2
    Dispatch
    Advance Clock    61
    Expire Leases    60
    Job Status Should Be    a    queued
    Job Retry State Should Be    a    retry_count=0    max_retries=2
    Job Redelivery Count Should Be    a    1

The Next Delivery Waits For Its Own Outcome
    [Tags]    RD-001
    Start Runtime
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Job Status Should Be    a    running
    Job Should Not Have Finished    a
    Advance Clock    1
    Job Raises    a    ValueError    boom
    Job Status Should Be    a    failed
    Job Error Should Be    a    ValueError: boom
    Job Should Not Be Parked    a

# -- RD-002: the cap -------------------------------------------------------------------------

With The Default Cap Of 3 The Fourth Expiry Parks The Job
    [Tags]    RD-002    RD-003
    Start Runtime
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Lease Lapses And Job Is Delivered Again
    Lease Lapses And Job Is Delivered Again
    Job Redelivery Count Should Be    a    3
    Job Status Should Be    a    running
    Advance Clock    61
    Lease Pass Should Re-queue And Park    60    0    1
    Job Should Be Parked As Poison    a
    Job Redelivery Count Should Be    a    3
    Job Should Have Finished At Second    a    244
    Counters Should Show    processed=1    failed=1    cancelled=0

A Cap Of 0 Parks At The First Expiry
    [Tags]    RD-002    RD-003    edge
    Start Runtime    redelivery_cap=0
    Submit Job    a
    Dispatch
    Advance Clock    61
    Lease Pass Should Re-queue And Park    60    0    1
    Job Should Be Parked As Poison    a
    Job Redelivery Count Should Be    a    0
    Operator Alerts Should Be    a

# -- RD-003: alert first, once, then poison ---------------------------------------------------

Parking Alerts The Operator Once Per Job In Order And Fails The Jobs As Poison
    [Tags]    RD-003
    Start Runtime    redelivery_cap=1
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Advance Clock    61
    Expire Leases    60
    Dispatch
    Advance Clock    30
    Send Heartbeat    a
    Advance Clock    31
    Lease Pass Should Re-queue And Park    60    0    2
    Job Should Be Parked As Poison    b
    Job Should Be Parked As Poison    c
    Job Status Should Be    a    running
    Operator Alerts Should Be    b    c
    Advance Clock    60
    Lease Pass Should Re-queue And Park    60    0    1
    Job Should Be Parked As Poison    a
    Job Error Should Be    a    ${POISON_ERROR}
    Operator Alerts Should Be    b    c    a
    Counters Should Show    processed=3    failed=3    cancelled=0

A Job That Ends On Its Own Is Never Alerted
    [Tags]    RD-003
    Start Runtime
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Job Returns    a    1
    Job Status Should Be    a    succeeded
    Job Should Not Be Parked    a
    Operator Alerts Should Be

# -- RD-004: raw attempts, never reset -----------------------------------------------------------

Heartbeats After A Re-delivery Do Not Reset The Count
    [Tags]    RD-004    RD-001
    Start Runtime    redelivery_cap=2
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Advance Clock    30
    Send Heartbeat    a
    Advance Clock    30
    Send Heartbeat    a
    Job Redelivery Count Should Be    a    1
    Lease Lapses And Job Is Delivered Again
    Advance Clock    10
    Send Heartbeat    a
    Job Redelivery Count Should Be    a    2
    Advance Clock    61
    Lease Pass Should Re-queue And Park    60    0    1
    Job Should Be Parked As Poison    a

# -- RD-005: only running jobs past the lease ----------------------------------------------------

A Job That Beat Within The Lease Keeps It However Long Ago It Started
    [Tags]    RD-005
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    50
    Send Heartbeat    a
    Advance Clock    30
    Lease Pass Should Re-queue And Park    60    0    0
    Job Status Should Be    a    running
    Job Redelivery Count Should Be    a    0

A Job Exactly The Lease Old Keeps Its Lease
    [Tags]    RD-005
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    60
    Lease Pass Should Re-queue And Park    60    0    0
    Job Status Should Be    a    running
    Job Redelivery Count Should Be    a    0
    Advance Clock    0.5
    Lease Pass Should Re-queue And Park    60    1    0

Queued And Finished Jobs Are Never Re-queued Or Parked
    [Tags]    RD-005
    Start Runtime    slots=1    redelivery_cap=0
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Cancel Should Apply    c
    Dispatch
    Job Returns    a    1
    Advance Clock    1000
    Lease Pass Should Re-queue And Park    60    0    0
    Job Status Should Be    a    succeeded
    Job Status Should Be    b    queued
    Job Status Should Be    c    cancelled
    Operator Alerts Should Be

A Heartbeat Of A Re-queued Job Changes Nothing Until It Runs Again
    [Tags]    RD-005
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    61
    Expire Leases    60
    Advance Clock    10
    Send Heartbeat    a
    Job Status Should Be    a    queued
    Job Redelivery Count Should Be    a    1

# -- RD-006: a superseded delivery writes nothing -------------------------------------------------

The Owner That Lost A Job To A Lease Pass Cannot Write It Once It Is Claimed Again
    [Tags]    RD-006
    Start Runtime
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Advance Clock    5
    Previous Owner Write Should Be Refused    a    outcome
    Job Status Should Be    a    running
    Job Should Not Have Finished    a
    Previous Owner Write Should Be Refused    a    heartbeat
    Previous Owner Write Should Be Refused    a    failure
    Advance Clock    56
    Lease Pass Should Re-queue And Park    60    1    0
    Job Redelivery Count Should Be    a    2
    Dispatch
    Job Returns    a    "done"
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    "done"
    Counters Should Show    processed=1    failed=0    cancelled=0

The Previous Owner Cannot Write A Re-queued Or A Parked Job Either
    [Tags]    RD-006
    Start Runtime    redelivery_cap=1
    Submit Job    a
    Dispatch
    Advance Clock    61
    Expire Leases    60
    Previous Owner Write Should Be Refused    a    outcome
    Job Status Should Be    a    queued
    Dispatch
    Advance Clock    61
    Lease Pass Should Re-queue And Park    60    0    1
    Job Should Be Parked As Poison    a
    Previous Owner Write Should Be Refused    a    outcome
    Job Should Be Parked As Poison    a

# -- RD-007: store faults in a lease pass ----------------------------------------------------

A Lease Pass Whose Store Writes Fail Parks And Re-queues Each Job Once
    [Tags]    RD-007
    Start Runtime    redelivery_cap=1
    Submit Job    a
    Dispatch
    Lease Lapses And Job Is Delivered Again
    Submit Job    b
    Dispatch
    Advance Clock    61
    Lease Pass Under Store Fault Should Re-queue And Park    60    fail    2    1    1
    Job Should Be Parked As Poison    a
    Job Status Should Be    b    queued
    Job Redelivery Count Should Be    b    1
    Operator Alerts Should Be    a

A Crash Between The Writes Of A Lease Pass Loses No Count And Doubles No Alert
    [Tags]    RD-007    RD-003
    Start Runtime    redelivery_cap=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    61
    Lease Pass Under Store Fault Should Re-queue And Park    60    crash    2    1    0
    Job Redelivery Count Should Be    a    1
    Job Redelivery Count Should Be    b    1
    Dispatch
    Submit Job    c
    Dispatch
    Advance Clock    61
    Lease Pass Under Store Fault Should Re-queue And Park    60    crash    2    1    2
    Job Should Be Parked As Poison    a
    Job Should Be Parked As Poison    b
    Job Status Should Be    c    queued
    Job Redelivery Count Should Be    c    1
    Operator Alerts Should Be    a    b

A Crash At A Park's First Write Leaves No Alert Before The Restart
    [Tags]    RD-007
    Start Runtime    redelivery_cap=0
    Submit Job    a
    Dispatch
    Advance Clock    61
    Lease Pass Under Store Fault Should Re-queue And Park    60    crash    1    0    1
    Job Should Be Parked As Poison    a
    Operator Alerts Should Be    a

# -- RD-008: the operator queue, unique per agent and request id -----------------------------

Two Agents That Reuse One Request Id Hold Two Requests
    [Tags]    RD-008
    Start Runtime
    Parked Request Should Be    scout    approval-1    1
    Parked Request Should Be    critic    approval-1    2
    Operator Requests Should Be    scout approval-1    critic approval-1

A Re-park Under Re-delivery Lands On The Request Parked First
    [Tags]    RD-008    RD-001
    Start Runtime
    Submit Job    a
    Dispatch
    Parked Request Should Be    scout    approval-a    1
    Parked Request Should Be    scout    deploy-a    2
    Lease Lapses And Job Is Delivered Again
    Job Status Should Be    a    running
    Job Redelivery Count Should Be    a    1
    Parked Request Should Be    scout    approval-a    1
    Operator Requests Should Be    scout approval-a    scout deploy-a
    Operator Alerts Should Be
