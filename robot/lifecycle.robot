*** Settings ***
Documentation       Conformance checks for the job lifecycle (spec/lifecycle.yaml, LC-001..LC-025).
...
...                 Each test is tagged with the requirement IDs it checks. Run with
...                 `robot --variable BACKEND:memory --variable PROFILE:canonical robot/`.
...                 Tests that depend on a limit set it with `Start Runtime` so that they
...                 hold under every profile.
Resource            lifecycle.resource
Test Tags           lifecycle


*** Test Cases ***
# -- states and transitions ---------------------------------------------------------------

Every Job Is In One Of Five States
    [Documentation]    Queued, running, succeeded, failed and cancelled, side by side.
    [Tags]    LC-001
    Start Runtime    slots=3
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Submit Job    d
    Submit Job    e
    Cancel Should Apply    e
    Dispatch
    Job Returns    a    1
    Job Raises    b    ValueError    boom
    Job Status Should Be    a    succeeded
    Job Status Should Be    b    failed
    Job Status Should Be    c    running
    Job Status Should Be    d    queued
    Job Status Should Be    e    cancelled
    Health Should Show    queued=1    running=1    total=5

A Decided Body Does Not Let A Queued Job Skip Running
    [Documentation]    A job whose outcome is known while queued stays queued until a
    ...                dispatch starts it; it then passes through running to succeeded.
    [Tags]    LC-002
    Start Runtime
    Submit Job    a
    Job Returns    a    1
    Job Status Should Be    a    queued
    Job Should Not Have Started    a
    Job Should Not Have Finished    a
    Advance Clock    4
    Dispatch
    Job Status Should Be    a    succeeded
    Job Should Have Started At Second    a    4
    Job Should Have Finished At Second    a    4

A Terminal Job Never Changes State Again
    [Tags]    LC-002    LC-001
    Start Runtime
    Submit Job    a
    Run Job To Failure    a    RuntimeError    broken
    Advance Clock    5
    Dispatch
    Cancel Should Not Apply    a
    Job Status Should Be    a    failed
    Job Should Have Started At Second    a    0
    Job Should Have Finished At Second    a    0
    Job Error Should Be    a    RuntimeError: broken

# -- late outcomes -------------------------------------------------------------------------

A Body Ignoring Cancellation That Returns After Its Job Was Cancelled Changes Nothing
    [Documentation]    Shutdown cancels a running job whose body ignores cancellation; the
    ...                body's later return leaves status, result, finished_at and counters.
    [Tags]    LC-003    LC-022
    Start Runtime
    Submit Job Ignoring Cancellation    a
    Dispatch
    Advance Clock    2
    Shut Down Runtime
    Job Status Should Be    a    cancelled
    Job Should Have Finished At Second    a    2
    Advance Clock    3
    Job Returns    a    42
    Job Status Should Be    a    cancelled
    Job Result Should Be    a    null
    Job Error Should Be    a    ${NONE}
    Job Should Have Finished At Second    a    2
    Counters Should Show    processed=0    failed=0    cancelled=1

A Body That Raises After Its Job Was Cancelled Changes Nothing
    [Tags]    LC-003
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    1
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Advance Clock    4
    Job Raises    a    ValueError    late
    Job Status Should Be    a    cancelled
    Job Error Should Be    a    ${NONE}
    Job Should Have Finished At Second    a    1
    Counters Should Show    processed=0    failed=0    cancelled=1

# -- the record ----------------------------------------------------------------------------

A Record Carries Its Id And The Clock Reading At Each Transition
    [Tags]    LC-004
    Start Runtime
    Advance Clock    5
    Submit Job    a
    Submit Job    b
    Job Record Should Carry Its Id    a
    Job Should Have Been Submitted At Second    a    5
    Job Should Not Have Started    a
    Job Should Not Have Finished    a
    Job Result Should Be    a    null
    Job Error Should Be    a    ${NONE}
    Advance Clock    3
    Cancel Should Apply    b
    Dispatch
    Job Should Have Started At Second    a    8
    Job Should Not Have Finished    a
    Advance Clock    4
    Job Returns    a    "done"
    Job Should Have Finished At Second    a    12
    Job Should Have Been Submitted At Second    a    5
    Job Should Have Started At Second    a    8
    Job Should Not Have Started    b
    Job Should Have Finished At Second    b    8

Every Timestamp Is Timezone Aware UTC
    [Tags]    LC-005
    Start Runtime
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Cancel Should Apply    c
    Advance Clock    1.5
    Dispatch
    Job Returns    a    1
    Cancel Should Apply    b
    Job Should Have Finished At Second    a    1.5
    Timestamps Should Be UTC    a    b    c

Instants Are Kept To The Microsecond
    [Tags]    LC-005
    Start Runtime
    Submit Job    a
    Advance Clock    1.000001
    Dispatch
    Advance Clock    1.000001
    Job Returns    a    null
    Job Should Have Been Submitted At Second    a    0
    Job Should Have Started At Second    a    1.000001
    Job Should Have Finished At Second    a    2.000002

Result And Error Belong Only To Their Outcome
    [Tags]    LC-006
    Start Runtime    slots=3
    Submit Job    ok
    Submit Job    bad
    Submit Job Ignoring Cancellation    dropped
    Submit Job    waiting
    Dispatch
    Job Returns    ok    {"rows": 3}
    Job Raises    bad    KeyError    missing
    Cancel Should Apply    dropped
    Job Returns    dropped    {"rows": 9}
    Job Result Should Be    ok    {"rows": 3}
    Job Error Should Be    ok    ${NONE}
    Job Result Should Be    bad    null
    Job Error Should Be    bad    KeyError: missing
    Job Status Should Be    dropped    cancelled
    Job Result Should Be    dropped    null
    Job Error Should Be    dropped    ${NONE}
    Job Status Should Be    waiting    queued
    Job Result Should Be    waiting    null
    Job Error Should Be    waiting    ${NONE}

An Error Is Recorded As Type Colon Space Message
    [Tags]    LC-007
    Start Runtime
    Submit Job    a
    Submit Job    b
    Dispatch
    Job Raises    a    ValueError    boom
    Job Raises    b    QuotaExceeded    over 10 GiB: try later
    Submit Job    c
    Submit Job    d
    Dispatch
    Job Raises    c    RuntimeError    x
    Job Raises    d    ValueError    naïve ✓ — ünïcode
    Job Error Should Be    a    ValueError: boom
    Job Error Should Be    b    QuotaExceeded: over 10 GiB: try later
    Job Error Should Be    c    RuntimeError: x
    Job Error Should Be    d    ValueError: naïve ✓ — ünïcode
    Counters Should Show    processed=4    failed=4    cancelled=0

# -- submission and capacity ---------------------------------------------------------------

Submit Returns A New Id For A Queued Job That Has Not Begun
    [Tags]    LC-008
    Start Runtime
    ${first}=    Submit Job    a
    Job Status Should Be    a    queued
    Job Should Not Have Started    a
    ${second}=    Submit Job    b
    Should Not Be Equal    ${first}    ${second}    two submissions got the same id
    Job Record Should Carry Its Id    a
    Job Record Should Carry Its Id    b
    Health Should Show    queued=2    running=0    total=2

Submissions Made At Once From Several Threads Each Get A Job Of Their Own
    [Documentation]    Eight threads released together each submit a job: every one is
    ...                accepted with a new id and held once, queued; dispatch then starts
    ...                the oldest, in the order the runtime took them.
    [Tags]    LC-030
    Start Runtime    slots=2    task_cap=9
    Submit Job    p
    ${ids}=    Submit Jobs At Once    s1    s2    s3    s4    s5    s6    s7    s8
    Length Should Be    ${ids}    8
    Jobs Should Each Be Held Once    p    s1    s2    s3    s4    s5    s6    s7    s8
    Job Status Should Be    s5    queued
    Health Should Show    queued=9    running=0    total=9
    Dispatch
    Job Status Should Be    p    running
    Health Should Show    queued=7    running=2    total=9

A Shut-Down Runtime Refuses Every Submission Made At Once
    [Tags]    LC-030    LC-023
    Start Runtime
    Submit Job    a
    Dispatch
    Job Returns    a    1
    Shut Down Runtime
    Submit Jobs At Once    b    c    d    answer=shut down
    Health Should Show    queued=0    running=0    total=1

Terminal Records Count Against The Task Cap And Cleanup Makes Room
    [Tags]    LC-009
    Start Runtime    task_cap=2
    Submit Job    a
    Submit Job    b
    Dispatch
    Job Returns    a    1
    Advance Clock    5
    Job Raises    b    ValueError    boom
    Submission Should Be Refused For Capacity    c
    Health Should Show    queued=0    running=0    total=2
    Advance Clock    5
    Cleanup Should Remove    10    1
    Job Should Not Be Held    a
    Submit Job    d
    Submission Should Be Refused For Capacity    e
    Health Should Show    queued=1    running=0    total=2

Queued Records Count Against The Task Cap
    [Tags]    LC-009
    Start Runtime    task_cap=1
    Submit Job    a
    Submission Should Be Refused For Capacity    b
    Job Should Not Be Held    b
    Cancel Should Apply    a
    Submission Should Be Refused For Capacity    c
    Cleanup Should Remove    0    1
    Submit Job    d

# -- concurrency ---------------------------------------------------------------------------

With Two Slots Only Two Of Three Jobs Run
    [Tags]    LC-010
    Start Runtime    slots=2
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Status Should Be    a    running
    Job Status Should Be    b    running
    Job Status Should Be    c    queued
    Health Should Show    queued=1    running=2    total=3
    Dispatch
    Job Status Should Be    c    queued
    Job Returns    a    1
    Job Status Should Be    c    queued
    Dispatch
    Job Status Should Be    c    running
    Health Should Show    queued=0    running=2    total=3

Dispatch Starts Queued Jobs In Submission Order
    [Tags]    LC-010
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Status Should Be    a    running
    Job Returns    a    1
    Advance Clock    3
    Dispatch
    Job Status Should Be    b    running
    Job Should Have Started At Second    b    3
    Job Status Should Be    c    queued
    Job Should Not Have Started    c

# -- cancellation --------------------------------------------------------------------------

Cancel Of A Queued Job Cancels It At Once
    [Tags]    LC-011
    Start Runtime
    Submit Job    a
    Submit Job Ignoring Cancellation    b
    Advance Clock    7
    Cancel Should Apply    a
    Cancel Should Apply    b
    Job Status Should Be    a    cancelled
    Job Status Should Be    b    cancelled
    Job Should Have Finished At Second    a    7
    Job Should Have Finished At Second    b    7
    Job Should Not Have Started    a
    Counters Should Show    processed=0    failed=0    cancelled=2
    Health Should Show    queued=0    running=0    total=2

A Cancelled Queued Job Never Starts
    [Tags]    LC-012
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Cancel Should Apply    a
    Job Returns    a    1
    Dispatch
    Job Status Should Be    a    cancelled
    Job Should Not Have Started    a
    Job Status Should Be    b    running
    Job Returns    b    2
    Dispatch
    Job Status Should Be    a    cancelled
    Job Should Not Have Started    a
    Job Result Should Be    a    null

Submit And Cancel Have Made Their Change When They Return
    [Documentation]    The harness reads the job straight after each submit and each cancel
    ...                of a queued job, before the runtime gets any other call (LC-031).
    [Tags]    LC-031
    Start Runtime    slots=1
    Advance Clock    2
    Submit Job    a
    Job Status Should Be    a    queued
    Submit Job    b
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Advance Clock    3
    Cancel Should Apply    b
    Job Status Should Be    b    cancelled
    Counters Should Show    processed=0    failed=0    cancelled=2

Cancel Of A Running Job Ignoring Cancellation Leaves It Running Until The Body Ends
    [Tags]    LC-013
    Start Runtime
    Submit Job Ignoring Cancellation    a
    Dispatch
    Advance Clock    2
    Cancel Should Apply    a
    Job Status Should Be    a    running
    Job Should Not Have Finished    a
    Health Should Show    queued=0    running=1    total=1
    Advance Clock    8
    Dispatch
    Job Status Should Be    a    running
    Counters Should Show    processed=0    failed=0    cancelled=0
    Job Returns    a    1
    Job Status Should Be    a    cancelled
    Job Should Have Finished At Second    a    10
    Counters Should Show    processed=0    failed=0    cancelled=1

The Owner Of A Running Job Honouring Cancellation Moves It To Cancelled
    [Tags]    LC-013
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    3
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Job Should Have Started At Second    a    0
    Job Should Have Finished At Second    a    3
    Counters Should Show    processed=0    failed=0    cancelled=1

A Requested Cancellation Wins Over The Body's Outcome
    [Tags]    LC-014    LC-013
    Start Runtime
    Submit Job Ignoring Cancellation    a
    Submit Job Ignoring Cancellation    b
    Dispatch
    Cancel Should Apply    a
    Cancel Should Apply    b
    Advance Clock    1
    Job Returns    a    {"kept": false}
    Job Raises    b    ValueError    boom
    Job Status Should Be    a    cancelled
    Job Status Should Be    b    cancelled
    Job Result Should Be    a    null
    Job Error Should Be    b    ${NONE}
    Job Should Have Finished At Second    a    1
    Counters Should Show    processed=0    failed=0    cancelled=2

Cancel Answers False And Changes Nothing When It Cannot Apply
    [Tags]    LC-015    LC-013
    Start Runtime
    Cancel Should Not Apply    ghost
    Submit Job    done
    Submit Job Ignoring Cancellation    slow
    Dispatch
    Job Returns    done    1
    Cancel Should Not Apply    done
    Job Status Should Be    done    succeeded
    Job Result Should Be    done    1
    Cancel Should Apply    slow
    Cancel Should Not Apply    slow
    Job Status Should Be    slow    running
    Advance Clock    2
    Job Returns    slow
    Cancel Should Not Apply    slow
    Job Should Have Finished At Second    slow    2
    Counters Should Show    processed=1    failed=0    cancelled=1

# -- reads ---------------------------------------------------------------------------------

A Record Read Earlier Still Shows The Old Status
    [Tags]    LC-016
    Start Runtime
    Submit Job    a
    Read Job    a
    Dispatch
    Job Returns    a    {"n": 1}
    Job Status Should Be    a    succeeded
    Earlier Record Should Still Show    a    queued

Reading An Unknown Job Returns Nothing
    [Tags]    LC-016
    Start Runtime
    ${view}=    Read Job    ghost
    Should Be Equal    ${view}    ${None}
    Submit Job    a
    Run Job To Success    a
    Cleanup Should Remove    0    1
    Job Should Not Be Held    a

Get Result Answers By Status
    [Tags]    LC-017
    Start Runtime    slots=4
    Reading Result Should Fail With    ghost    not found
    Submit Job    ok
    Submit Job    bad
    Submit Job    gone
    Submit Job    busy
    Submit Job    waiting
    Dispatch
    Reading Result Should Fail With    waiting    not completed (status=queued)
    Reading Result Should Fail With    busy    not completed (status=running)
    Job Returns    ok    {"answer": 42}
    Job Raises    bad    ValueError    boom
    Cancel Should Apply    gone
    Result Should Be    ok    {"answer": 42}
    Reading Result Should Fail With    bad    not completed (status=failed)
    Reading Result Should Fail With    gone    not completed (status=cancelled)

Listings, Reads, Counts And Dispatch Hold Over 300 Jobs
    [Documentation]    Seed 000's indexes make reads fast; a user relies on the answers
    ...                staying whole and exact at volume (LC-038). Every step compares
    ...                every held job, the listing and the health snapshot with the oracle.
    [Tags]    LC-038
    Start Runtime    slots=10    task_cap=1000
    Submit Jobs In Range    v1    v300
    Listing Should Show Jobs In Range    v1    v300
    Health Should Show    queued=300    running=0    total=300
    Cancel Jobs In Range    v151    v300
    Dispatch
    Listing Should Show Jobs In Range    v1    v10    status=running
    Jobs In Range Return    v1    v10    1
    Dispatch
    Listing Should Show Jobs In Range    v1    v10    status=succeeded
    Listing Should Show Jobs In Range    v11    v20    status=running
    Listing Should Show Jobs In Range    v21    v150    status=queued
    Listing Should Show Jobs In Range    v151    v300    status=cancelled
    Job Status Should Be    v300    cancelled
    Job Status Should Be    v150    queued
    Health Should Show    queued=130    running=10    total=300

A Long Error And A Long Result Come Back Whole
    [Documentation]    Texts of 70 000 characters, past the 65 535 bytes of a MySQL TEXT
    ...                column, read back in full (LC-039).
    [Tags]    LC-039
    Start Runtime    slots=2
    Submit Job    a
    Submit Job    b
    Dispatch
    Job Raises With A Long Message    a    ValueError    70000
    Job Returns A Long Text    b    70000
    Job Status Should Be    a    failed
    Job Error Should Be The Long Message    a    ValueError    70000
    Job Status Should Be    b    succeeded
    Job Result Should Be The Long Text    b    70000

Listing Keeps Submission Order And Filters By Exact Status
    [Tags]    LC-018
    Start Runtime    slots=3
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Submit Job    d
    Dispatch
    Job Returns    c    2
    Job Raises    b    ValueError    boom
    Job Returns    a    1
    Listing Should Show    a    b    c    d
    Listing Should Show    a    c    status=succeeded
    Listing Should Show    b    status=failed
    Listing Should Show    d    status=queued
    Listing Should Show    status=running
    Listing Should Show    status=cancelled

# -- retention -----------------------------------------------------------------------------

Cleanup Never Removes A Queued Or Running Job
    [Tags]    LC-019
    Start Runtime    slots=1
    Submit Job    a
    Submit Job    b
    Dispatch
    Advance Clock    100000
    Cleanup Should Remove    0    0
    Job Status Should Be    a    running
    Job Status Should Be    b    queued
    Health Should Show    queued=1    running=1    total=2
    Job Returns    a    1
    Cleanup Should Remove    0    1
    Job Should Not Be Held    a
    Listing Should Show    b

Cleanup Keeps A Job 0.4 Milliseconds Younger Than The Max Age
    [Tags]    LC-020    edge
    Start Runtime
    Submit Job    a
    Advance Clock    1.0005
    Run Job To Success    a
    Advance Clock    3599.9996
    Cleanup Should Remove    ${MAX_AGE}    0
    Job Status Should Be    a    succeeded
    Advance Clock    0.0004
    Cleanup Should Remove    ${MAX_AGE}    1

Cleanup Removes A Job Exactly Max Age Old But Not One Second Younger
    [Tags]    LC-020
    Start Runtime
    Submit Job    a
    Advance Clock    10
    Run Job To Success    a
    Job Should Have Finished At Second    a    10
    Advance Clock    3599
    Cleanup Should Remove    ${MAX_AGE}    0
    Job Status Should Be    a    succeeded
    Advance Clock    1
    Cleanup Should Remove    ${MAX_AGE}    1
    Job Should Not Be Held    a

Cleanup Measures Age From Finished At Not Submitted At
    [Tags]    LC-020
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    100
    Job Returns    a    1
    Advance Clock    3550
    Cleanup Should Remove    ${MAX_AGE}    0
    Job Status Should Be    a    succeeded
    Advance Clock    50
    Cleanup Should Remove    ${MAX_AGE}    1

Cleanup Returns The Number Of Records It Removed
    [Tags]    LC-021
    Start Runtime
    Cleanup Should Remove    0    0
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Returns    a    1
    Job Raises    b    ValueError    boom
    Cancel Should Apply    c
    Advance Clock    60
    Submit Job    d
    Cleanup Should Remove    ${MAX_AGE}    0
    Cleanup Should Remove    60    3
    Listing Should Show    d
    Cleanup Should Remove    0    0

# -- shutdown ------------------------------------------------------------------------------

Shutdown Cancels Every Queued And Running Job
    [Tags]    LC-022
    Start Runtime    slots=2
    Submit Job Ignoring Cancellation    busy
    Submit Job    done
    Submit Job    waiting
    Dispatch
    Job Returns    done    1
    Job Returns    waiting    7
    Advance Clock    5
    Shut Down Runtime
    Job Status Should Be    busy    cancelled
    Job Status Should Be    waiting    cancelled
    Job Status Should Be    done    succeeded
    Job Should Have Finished At Second    busy    5
    Job Should Have Finished At Second    waiting    5
    Job Should Not Have Started    waiting
    Job Returns    busy    99
    Job Status Should Be    busy    cancelled
    Job Result Should Be    busy    null
    Health Should Show    queued=0    running=0    total=3
    Counters Should Show    processed=1    failed=0    cancelled=2

A Second Shutdown Changes Nothing And Submissions Are Refused
    [Tags]    LC-023    LC-022
    Start Runtime
    Submit Job    a
    Advance Clock    1
    Shut Down Runtime
    Advance Clock    1
    Shut Down Runtime
    Job Status Should Be    a    cancelled
    Job Should Have Finished At Second    a    1
    Counters Should Show    processed=0    failed=0    cancelled=1
    Submission Should Be Refused As Shut Down    b
    Job Should Not Be Held    b
    Health Should Show    queued=0    running=0    total=1

After Shutdown The Refusal Is Shut Down Even At The Task Cap
    [Tags]    LC-023    LC-009    LC-022
    Start Runtime    task_cap=1
    Submit Job    a
    Shut Down Runtime
    Submission Should Be Refused As Shut Down    b
    Cleanup Should Remove    0    1
    Submission Should Be Refused As Shut Down    c
    Health Should Show    queued=0    running=0    total=0

Drain Shutdown Lets Active Jobs Finish Until Its Timeout
    [Documentation]    Under a drain-mode profile (draining-worker), shutdown refuses new
    ...                submissions, queued jobs still start and bodies still end; at the
    ...                timeout the rest are cancelled at that instant, their bodies unrun.
    [Tags]    LC-028    LC-023
    Start Runtime    slots=1
    Submit Job Ignoring Cancellation    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Shut Down Runtime
    Submission Should Be Refused As Shut Down    x
    Job Status Should Be    a    running
    Job Returns    a    1
    Advance Clock    10
    Dispatch
    Job Status Should Be    a    succeeded
    Job Should Have Started At Second    b    10
    Advance Clock    10
    Shut Down Runtime
    Advance Clock    15
    Job Status Should Be    b    cancelled
    Job Status Should Be    c    cancelled
    Job Should Have Finished At Second    b    30
    Job Should Have Finished At Second    c    30
    Job Should Not Have Started    c
    Job Returns    b    2
    Job Returns    c    3
    Dispatch
    Job Status Should Be    b    cancelled
    Job Body Should Have Run    b    0
    Job Body Should Have Run    c    0
    Counters Should Show    processed=1    failed=0    cancelled=2

# -- the task manager (seed 004) ----------------------------------------------------------------

Cancel Interrupts The Running Invocation
    [Documentation]    Under task-manager (D-18), cancel interrupts the running body even
    ...                when the body ignores its token; its later decision never runs. The
    ...                harness reads the job and the health straight after the cancel
    ...                returns: it is cancelled and counted by then.
    [Tags]    LC-026
    Start Runtime    slots=1
    Submit Job Ignoring Cancellation    a
    Submit Job    b
    Dispatch
    Advance Clock    2
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Job Should Have Finished At Second    a    2
    Job Body Should Have Been Interrupted    a
    Cancel Should Not Apply    a
    Job Returns    a    "late"
    Dispatch
    Job Body Should Have Run    a    0
    Job Status Should Be    b    running
    Counters Should Show    processed=0    failed=0    cancelled=1

A Cancelled Running Job Keeps No Outcome, And A Second Cancel Does Not Apply
    [Documentation]    Whether cancel interrupts the body (LC-026) or the body honours the
    ...                request (LC-013), the job ends cancelled and its outcome is dropped.
    [Tags]    LC-014    LC-015
    Start Runtime
    Submit Job    a
    Dispatch
    Advance Clock    1
    Cancel Should Apply    a
    Cancel Should Not Apply    a
    Job Returns    a    {"kept": true}
    Job Status Should Be    a    cancelled
    Job Result Should Be    a    null
    Job Should Have Finished At Second    a    1
    Counters Should Show    processed=0    failed=0    cancelled=1

Submit Refuses A Malformed Or Unknown Module Id
    [Documentation]    Under task-manager, submit checks the module id before the task
    ...                cap; a shut-down runtime's refusal comes first.
    [Tags]    LC-027
    Start Runtime    task_cap=2
    Submit Job For Module    a    data.process_batch
    Submission For Module Should Be Refused    x    Data.Process    malformed
    Submission For Module Should Be Refused    y    data..process    malformed
    Submission For Module Should Be Refused    z    billing.charge_card    unknown
    Submit Job For Module    b    mail.send_digest
    Submission For Module Should Be Refused    v    no-such-module    malformed
    Submission For Module Should Be Refused    w    data.process_batch    capacity
    Shut Down Runtime
    Submission For Module Should Be Refused    u    Bad Id    shut down
    Health Should Show    queued=0    running=0    total=2

# -- health --------------------------------------------------------------------------------

Health Counts Agree With The Held Records
    [Tags]    LC-024
    Start Runtime    slots=1
    Health Should Show    queued=0    running=0    total=0
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Health Should Show    queued=3    running=0    total=3
    Dispatch
    Health Should Show    queued=2    running=1    total=3
    Job Returns    a    1
    Health Should Show    queued=2    running=0    total=3
    Cancel Should Apply    b
    Health Should Show    queued=1    running=0    total=3
    Cleanup Should Remove    0    2
    Health Should Show    queued=1    running=0    total=1

The Health Report Names One Worker Running Until Shutdown
    [Documentation]    The worker's id is the same in every snapshot and no other runtime's;
    ...                its status is running until a cancel-mode shutdown, then stopped.
    [Tags]    LC-029    LC-022
    Start Runtime    slots=1
    Worker Status Should Be    running
    A Second Runtime Should Name Another Worker
    Submit Job    a
    Submit Job    b
    Dispatch
    Job Returns    a    1
    Worker Status Should Be    running
    Shut Down Runtime
    Worker Status Should Be    stopped
    Job Status Should Be    b    cancelled

The Worker Is Stopping While A Drain Lasts
    [Documentation]    Under a drain-mode profile the worker is stopping until the drain's
    ...                timeout, then stopped.
    [Tags]    LC-029    LC-028
    Start Runtime    slots=1
    Submit Job Ignoring Cancellation    a
    Dispatch
    Shut Down Runtime
    Worker Status Should Be    stopping
    Advance Clock    29
    Worker Status Should Be    stopping
    Advance Clock    1
    Job Status Should Be    a    cancelled
    Worker Status Should Be    stopped

A Cancelled Job Is Counted As Cancelled Only
    [Tags]    LC-025
    Start Runtime
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Submit Job Ignoring Cancellation    d
    Cancel Should Apply    c
    Dispatch
    Job Returns    a    1
    Job Raises    b    ValueError    boom
    Cancel Should Apply    d
    Job Returns    d    2
    Counters Should Show    processed=2    failed=1    cancelled=2

Counters Survive Cleanup
    [Tags]    LC-025    LC-021
    Start Runtime
    Submit Job    a
    Submit Job    b
    Submit Job    c
    Dispatch
    Job Returns    a    1
    Job Raises    b    ValueError    boom
    Cancel Should Apply    c
    Advance Clock    1
    Cleanup Should Remove    0    3
    Health Should Show    queued=0    running=0    total=0
    Counters Should Show    processed=2    failed=1    cancelled=1

# -- a job's arguments (LC-036) and queued execution off (LC-037) -------------------------------

A Job's Arguments Read Back And Reach Its Body As Submitted
    [Documentation]    Every digit of a 64-bit integer (past a float's 53 bits), a float
    ...                apart from an integer, every code point of a string (combining marks,
    ...                a NUL, one beyond the BMP), nesting and nulls: the record and the
    ...                body both get them back as given; an object's keys in any order.
    [Tags]    LC-036
    Start Runtime    slots=1
    Submit Job With Arguments    a    {"big": 9223372036854775807, "small": -9223372036854775808, "odd": 9007199254740993, "float": 0.1, "whole float": 2.0, "negative zero": -0.0, "text": "naïve café 𝄞 \\u0000 e\\u0301", "flags": [true, false, null], "nested": {"list": [[], {}, [1, "1", 1.0]]}}
    Submit Job With Arguments    b    "just a string"
    Submit Job    c
    Job Arguments Should Be    a    {"nested": {"list": [[], {}, [1, "1", 1.0]]}, "flags": [true, false, null], "text": "naïve café 𝄞 \\u0000 e\\u0301", "negative zero": -0.0, "whole float": 2.0, "float": 0.1, "odd": 9007199254740993, "small": -9223372036854775808, "big": 9223372036854775807}
    Job Arguments Should Be    c    null
    Dispatch
    Job Returns    a    "done"
    Job Body Should Have Received    a    {"big": 9223372036854775807, "small": -9223372036854775808, "odd": 9007199254740993, "float": 0.1, "whole float": 2.0, "negative zero": -0.0, "text": "naïve café 𝄞 \\u0000 e\\u0301", "flags": [true, false, null], "nested": {"list": [[], {}, [1, "1", 1.0]]}}
    Dispatch
    Job Raises    b    ValueError    boom
    Dispatch
    Job Returns    c    1
    Job Body Should Have Received    b    "just a string"
    Job Body Should Have Received    c    null
    Job Arguments Should Be    b    "just a string"

A Cancelled Job Keeps Its Arguments
    [Tags]    LC-036
    Start Runtime
    Submit Job With Arguments    a    {"id": 42}
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Job Arguments Should Be    a    {"id": 42}
    Job Body Should Have Run    a    0

With Queued Execution Off Submit Runs The Body And Returns It Ended
    [Documentation]    Seed 000's async.enabled false: the body runs inside submit; the
    ...                job is never queued, its three timestamps are the call's instant,
    ...                and it is counted by the time submit returns.
    [Tags]    LC-037
    Start Runtime    queued_execution=${False}
    Advance Clock    5
    Submit Job That Returns    a    {"rows": 3}
    Job Status Should Be    a    succeeded
    Job Should Have Been Submitted At Second    a    5
    Job Should Have Started At Second    a    5
    Job Should Have Finished At Second    a    5
    Job Result Should Be    a    {"rows": 3}
    Job Body Should Have Run    a    1
    Counters Should Show    1    0    0
    Health Should Show    queued=0    running=0    total=1
    Submit Job That Raises    b    ValueError    bad plan
    Job Status Should Be    b    failed
    Job Error Should Be    b    ValueError: bad plan
    Counters Should Show    2    1    0
    Dispatch
    Cancel Should Not Apply    a
    Job Body Should Have Run    a    1

With Queued Execution Off The Body Receives Its Arguments Inside Submit
    [Tags]    LC-037    LC-036
    Start Runtime    queued_execution=${False}
    Submit Job That Returns    a    true    arguments={"plan": "01HXYZ", "phase": "execute"}
    Job Status Should Be    a    succeeded
    Job Body Should Have Received    a    {"phase": "execute", "plan": "01HXYZ"}
    Job Arguments Should Be    a    {"plan": "01HXYZ", "phase": "execute"}

With Queued Execution Off A Refused Submission Never Runs Its Body
    [Tags]    LC-037    LC-009    LC-023
    Start Runtime    task_cap=1    queued_execution=${False}
    Submit Job That Returns    a    1
    Submission Should Be Refused For Capacity    b
    Health Should Show    queued=0    running=0    total=1
    Run Cleanup    0
    Shut Down Runtime
    Submission Should Be Refused As Shut Down    c
    Counters Should Show    1    0    0
