*** Settings ***
Documentation       Conformance checks for stuck-job detection (spec/stuck.yaml, ST-001..ST-005).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim, or which does not apply
...                 to the profile, is skipped with the reason. Run with
...                 `robot --variable BACKEND:memory --variable PROFILE:canonical robot/`.
Resource            lifecycle.resource
Test Tags           stuck


*** Variables ***
${STUCK_ERROR}      Heartbeat timeout — job stuck


*** Test Cases ***
# -- ST-001: heartbeats move last_heartbeat of running jobs only --------------------------

The Last Heartbeat Is The Start Time And A Heartbeat Moves It To Now
    [Tags]    ST-001
    Start Runtime
    Submit Job    a
    Advance Clock    5
    Dispatch
    Job Status Should Be    a    running
    Job Should Have Started At Second    a    5
    Job Last Heartbeat Should Be At Second    a    5
    Advance Clock    5
    Send Heartbeat    a
    Job Last Heartbeat Should Be At Second    a    10
    Job Should Have Started At Second    a    5
    Job Status Should Be    a    running

A Heartbeat Of A Queued Job Changes Nothing
    [Tags]    ST-001
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    10
    Send Heartbeat    b
    Job Status Should Be    b    queued
    Job Should Have No Last Heartbeat    b
    Job Should Not Have Started    b
    Job Returns    a    1
    Dispatch
    Job Status Should Be    b    running
    Job Last Heartbeat Should Be At Second    b    10

A Heartbeat Of A Finished Job Changes Nothing
    [Tags]    ST-001
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    3
    Job Returns    a    "done"
    Advance Clock    7
    Send Heartbeat    a
    Job Status Should Be    a    succeeded
    Job Last Heartbeat Should Be At Second    a    0
    Job Should Have Finished At Second    a    3
    Job Result Should Be    a    "done"

# -- ST-002: silent past the timeout -> failed as stuck -----------------------------------

A Job Silent For 61 Seconds Is Failed As Stuck With A Timeout Of 60
    [Tags]    ST-002
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    61
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Error Should Be    a    ${STUCK_ERROR}
    Job Should Have Finished At Second    a    61
    Job Result Should Be    a    null
    Counters Should Show    processed=1    failed=1    cancelled=0
    Health Should Show    queued=0    running=0    total=1

A Job Silent For Half A Second Past The Timeout Is Failed As Stuck
    [Tags]    ST-002    edge
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    60.5
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Should Have Finished At Second    a    60.5

A Job Failed As Stuck Frees Its Worker Slot For The Next Queued Job
    [Tags]    ST-002    LC-010
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Advance Clock    1
    Dispatch
    Advance Clock    61
    Stuck Detection Should Fail    60    1
    Job Status Should Be    b    queued
    Dispatch
    Job Status Should Be    b    running
    Job Returns    b    "done"
    Job Result Should Be    b    "done"

A Job Is Failed As Stuck Whatever Its Retry Policy
    [Tags]    ST-002    RT-001
    Start Runtime
    Submit Job With Retry    a    3
    Dispatch
    Advance Clock    61
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Error Should Be    a    ${STUCK_ERROR}

Detection Measures From The Last Heartbeat Not From The Start
    [Tags]    ST-001    ST-002
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    50
    Send Heartbeat    a
    Advance Clock    50
    Stuck Detection Should Fail    60    0
    Job Status Should Be    a    running
    Job Last Heartbeat Should Be At Second    a    50
    Counters Should Show    processed=0    failed=0    cancelled=0
    Advance Clock    11
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Error Should Be    a    ${STUCK_ERROR}
    Job Should Have Finished At Second    a    111

One Pass Fails Every Stuck Job And Counts Them
    [Tags]    ST-002
    Start Runtime
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    30
    Send Heartbeat    b
    Submit Job    c
    Dispatch
    Advance Clock    40
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Status Should Be    b    running
    Job Status Should Be    c    running
    Advance Clock    60
    ${count}=    Detect Stuck Jobs    60
    Should Be Equal As Integers    ${count}    2
    Job Status Should Be    b    failed
    Job Status Should Be    c    failed
    Counters Should Show    processed=3    failed=3    cancelled=0

# -- ST-003: the boundary is exclusive ----------------------------------------------------

A Job Exactly The Timeout Old Is Not Stuck And Half A Second More Is
    [Tags]    ST-003
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    60
    Stuck Detection Should Fail    60    0
    Job Status Should Be    a    running
    Job Error Should Be    a    ${NONE}
    Advance Clock    0.5
    Stuck Detection Should Fail    60    1
    Job Status Should Be    a    failed
    Job Should Have Finished At Second    a    60.5

# -- ST-004: running jobs only ------------------------------------------------------------

A Queued Job Of Any Age Is Never Failed As Stuck
    [Tags]    ST-004
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    1000
    Send Heartbeat    a
    Stuck Detection Should Fail    60    0
    Job Status Should Be    b    queued
    Job Error Should Be    b    ${NONE}
    Job Should Not Have Finished    b
    Job Status Should Be    a    running
    Counters Should Show    processed=0    failed=0    cancelled=0

Terminal Jobs Are Never Failed As Stuck
    [Tags]    ST-004
    Start Runtime
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Cancel Should Apply    c
    Dispatch
    Job Returns    a    "done"
    Job Raises    b    ValueError    boom
    Advance Clock    1000
    Stuck Detection Should Fail    60    0
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    "done"
    Job Error Should Be    a    ${NONE}
    Job Status Should Be    b    failed
    Job Error Should Be    b    ValueError: boom
    Job Status Should Be    c    cancelled
    Counters Should Show    processed=2    failed=1    cancelled=1

A Body That Ends After Its Job Was Failed As Stuck Changes Nothing
    [Tags]    ST-004    ST-002
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    61
    Stuck Detection Should Fail    60    1
    Advance Clock    1
    Job Returns    a    "late"
    Job Status Should Be    a    failed
    Job Error Should Be    a    ${STUCK_ERROR}
    Job Result Should Be    a    null
    Job Should Have Finished At Second    a    61
    Counters Should Show    processed=1    failed=1    cancelled=0
    Send Heartbeat    a
    Job Last Heartbeat Should Be At Second    a    0

# -- ST-005: the health report carries the last heartbeat ----------------------------------

The Health Report Keeps The Latest Heartbeat Of Its Jobs
    [Tags]    ST-005
    Start Runtime    slots=2
    Report Should Have No Last Heartbeat
    Submit Job    a
    Submit Job    b
    Advance Clock    5
    Dispatch
    Report Last Heartbeat Should Be At Second    5
    Advance Clock    5
    Send Heartbeat    a
    Report Last Heartbeat Should Be At Second    10
    Send Heartbeat    b
    Advance Clock    5
    Report Last Heartbeat Should Be At Second    10
    Job Returns    a    1
    Job Returns    b    2
    Advance Clock    60
    Cleanup Should Remove    60    2
    Report Last Heartbeat Should Be At Second    10
