*** Settings ***
Documentation       Conformance checks for retry and backoff (spec/retry.yaml, RT-001..RT-011).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim, or which does not apply
...                 to the profile, is skipped with the reason. Run with
...                 `robot --variable BACKEND:memory --variable PROFILE:canonical robot/`.
Resource            retry.resource
Test Tags           retry


*** Test Cases ***
# -- RT-001: per job, off by default ------------------------------------------------------

Without A Retry Policy A Failed Attempt Fails The Job
    [Tags]    RT-001
    Start Runtime
    Submit Job    a
    Run Job To Failure    a    ValueError    boom
    Job Error Should Be    a    ValueError: boom
    Job Retry State Should Be    a    retry_count=0    max_retries=0
    Counters Should Show    processed=1    failed=1    cancelled=0
    Advance Clock    100
    Dispatch
    Job Status Should Be    a    failed

A Policy Of Zero Retries Fails The Job At Its First Failure
    [Tags]    RT-001    edge
    Start Runtime
    Submit Job With Retry    a    0
    Run Job To Failure    a    ValueError    boom
    Job Retry State Should Be    a    retry_count=0    max_retries=0

A Policy Giving Only Max Retries Waits One Second Then Two
    [Tags]    RT-001    RT-002
    Start Runtime
    Submit Job With Retry    a    2
    Submit Job    b
    Dispatch
    Attempt Should Fail And Wait    a    1    2
    Job Retry State Should Be    b    retry_count=0    max_retries=0
    Job Should Wait Then Start    a    0.999    0.001    at=1
    Attempt Should Fail And Wait    a    2    2
    Job Should Wait Then Start    a    1.999    0.001    at=3
    Job Returns    a    "done"
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    "done"

A Backoff Ending Half A Second Into A Second Is Waited Out To The Microsecond
    [Tags]    RT-002    edge
    Start Runtime
    Submit Job With Retry    a    2
    Dispatch
    Advance Clock    0.5
    Attempt Should Fail And Wait    a    1    2
    Job Should Wait Then Start    a    0.999999    0.000001    at=1.5

The Default Delay Function Starts At One Second And Doubles
    [Tags]    RT-001    RT-002
    Start Runtime
    Delay Should Come Out As    0    1000
    Delay Should Come Out As    1    2000

# -- RT-002: exponential, zero-indexed, capped --------------------------------------------

The Delay Is Exponential From Attempt Zero And Capped
    [Tags]    RT-002
    [Setup]    Start Runtime
    [Template]    Delay Should Come Out As
    0        1000     delay_ms=1000    multiplier=2      cap_ms=60000
    1        2000     delay_ms=1000    multiplier=2      cap_ms=60000
    2        4000     delay_ms=1000    multiplier=2      cap_ms=60000
    3        8000     delay_ms=1000    multiplier=2      cap_ms=60000
    5        32000    delay_ms=1000    multiplier=2      cap_ms=60000
    6        60000    delay_ms=1000    multiplier=2      cap_ms=60000
    1100     60000    delay_ms=1000    multiplier=2      cap_ms=60000
    10000    60000    delay_ms=1000    multiplier=2      cap_ms=60000
    4        500      delay_ms=500     multiplier=1      cap_ms=60000
    2        2250     delay_ms=250     multiplier=3      cap_ms=5000
    3        5000     delay_ms=250     multiplier=3      cap_ms=5000
    10000    9000     delay_ms=250     multiplier=1.5    cap_ms=9000
    0        0        delay_ms=0       multiplier=2      cap_ms=0
    10000    0        delay_ms=0       multiplier=2      cap_ms=60000
    0        60000    delay_ms=60000   multiplier=2      cap_ms=60000
    2        1000000    delay_ms=1     multiplier=1000    cap_ms=1000000
    10000    1000000000000    delay_ms=1    multiplier=1000    cap_ms=1000000000000

The Runtime Waits The Capped Delay Not The Exponential One
    [Tags]    RT-002    RT-003
    Start Runtime
    Submit Job With Retry    a    3    delay_ms=1000    multiplier=10    cap_ms=5000
    Dispatch
    Attempt Should Fail And Wait    a    1    3
    Job Should Wait Then Start    a    0.999    0.001    at=1
    Attempt Should Fail And Wait    a    2    3
    Job Should Wait Then Start    a    4.999    0.001    at=6

# -- RT-003: back to queued, not before the delay -----------------------------------------

A Failed Attempt With Retries Left Goes Back To Queued With Nothing Recorded
    [Tags]    RT-003
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Advance Clock    2
    Attempt Should Fail And Wait    a    1    2
    Job Error Should Be    a    ${NONE}
    Job Result Should Be    a    null
    Job Should Not Have Finished    a
    Health Should Show    queued=1    running=0    total=1
    Counters Should Show    processed=0    failed=0    cancelled=0
    Listing Should Show    a    status=queued
    Listing Should Show    status=running

The First Retry Waits Exactly Retry Delay Ms
    [Documentation]    Zero-indexed: the first retry waits retry_delay_ms, not twice that.
    [Tags]    RT-003
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2
    Job Should Wait Then Start    a    0.999    0.001    at=1
    Job Retry State Should Be    a    retry_count=1    max_retries=2

A Job In Backoff Does Not Hold Up The Queue And Then Takes Its Turn
    [Tags]    RT-003    LC-004
    Start Runtime    slots=1
    Submit Job With Retry    a    1    delay_ms=1000    multiplier=2    cap_ms=60000
    Submit Job    b
    Submit Job    c
    Advance Clock    1
    Dispatch
    Attempt Should Fail And Wait    a    1    1
    Dispatch
    Job Status Should Be    b    running
    Job Status Should Be    a    queued
    Job Returns    b    1
    Advance Clock    1
    Dispatch
    Job Status Should Be    a    running
    Job Should Have Started At Second    a    2
    Job Status Should Be    c    queued

# -- RT-004: the last failure fails the job -----------------------------------------------

The Last Failure Is Final And Keeps That Attempt's Error
    [Tags]    RT-004
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2    message=first
    Advance Clock    1
    Dispatch
    Attempt Should Fail And Wait    a    2    2    message=second
    Advance Clock    2
    Dispatch
    Job Raises    a    TimeoutError    third
    Job Status Should Be    a    failed
    Job Error Should Be    a    TimeoutError: third
    Job Retry State Should Be    a    retry_count=2    max_retries=2
    Job Should Have Finished At Second    a    3
    Counters Should Show    processed=1    failed=1    cancelled=0
    Advance Clock    100
    Dispatch
    Job Status Should Be    a    failed

# -- RT-005: non-retryable errors ---------------------------------------------------------

A Non Retryable Error Type Fails The Job At Once With Retries Left
    [Tags]    RT-005
    Start Runtime
    Submit Job With Retry    a    3    delay_ms=1000    multiplier=2    cap_ms=60000
    ...    not_retried=KeyError
    Dispatch
    Job Raises    a    KeyError    missing
    Job Status Should Be    a    failed
    Job Error Should Be    a    KeyError: missing
    Job Retry State Should Be    a    retry_count=0    max_retries=3
    Counters Should Show    processed=1    failed=1    cancelled=0

Non Retryable Names Match Exactly And Other Errors Are Retried
    [Tags]    RT-005
    Start Runtime
    Submit Job With Retry    a    3    not_retried=KeyError, PlanError
    Dispatch
    Attempt Should Fail And Wait    a    1    3    error_type=MissingKeyError
    Advance Clock    1
    Dispatch
    Job Raises    a    PlanError    fatal
    Job Status Should Be    a    failed
    Job Error Should Be    a    PlanError: fatal
    Job Retry State Should Be    a    retry_count=1    max_retries=3

# -- RT-006: cancelled in backoff ---------------------------------------------------------

Cancelling A Job In Backoff Cancels It At Once And It Never Runs Again
    [Tags]    RT-006
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2
    Advance Clock    0.5
    Cancel Should Apply    a
    Job Status Should Be    a    cancelled
    Job Should Have Finished At Second    a    0.5
    Counters Should Show    processed=0    failed=0    cancelled=1
    Job Returns    a    "too late"
    Advance Clock    5
    Dispatch
    Job Status Should Be    a    cancelled
    Job Result Should Be    a    null
    Job Should Have Finished At Second    a    0.5
    Health Should Show    queued=0    running=0    total=1
    Cancel Should Not Apply    a

# -- RT-007: only the final outcome counts ------------------------------------------------

A Job Retried And Then Succeeded Is Counted Once As Processed
    [Tags]    RT-007
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2
    Counters Should Show    processed=0    failed=0    cancelled=0
    Advance Clock    1
    Dispatch
    Job Returns    a    "ok"
    Job Status Should Be    a    succeeded
    Job Result Should Be    a    "ok"
    Job Retry State Should Be    a    retry_count=1    max_retries=2
    Counters Should Show    processed=1    failed=0    cancelled=0

A Job Retried And Then Failed For Good Is Counted Once As Failed
    [Tags]    RT-007    RT-004
    Start Runtime
    Submit Job With Retry    a    1    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    1    message=first
    Counters Should Show    processed=0    failed=0    cancelled=0
    Advance Clock    1
    Dispatch
    Job Raises    a    ValueError    second
    Job Status Should Be    a    failed
    Job Error Should Be    a    ValueError: second
    Counters Should Show    processed=1    failed=1    cancelled=0

# -- RT-008: retry state in the record ----------------------------------------------------

The Record Shows The Retries Taken And The Budget
    [Tags]    RT-008
    Start Runtime
    Submit Job With Retry    a    3    delay_ms=1000    multiplier=2    cap_ms=60000
    Submit Job    b
    Job Retry State Should Be    a    retry_count=0    max_retries=3
    Job Retry State Should Be    b    retry_count=0    max_retries=0
    Dispatch
    Attempt Should Fail And Wait    a    1    3
    Read Job    a
    Advance Clock    1
    Dispatch
    Attempt Should Fail And Wait    a    2    3    message=flaky again
    Earlier Record Should Still Show    a    queued

# -- RT-009: jitter -----------------------------------------------------------------------

Jitter Scales The Capped Delay By The Injected Draw
    [Tags]    RT-009
    [Setup]    Start Runtime
    [Template]    Delay Should Come Out As
    2        4000     jitter=none     draw=0.5
    2        2000     jitter=full     draw=0.5
    2        0        jitter=full     draw=0
    2        3000     jitter=equal    draw=0.5
    2        2000     jitter=equal    draw=0
    6        30000    jitter=full     draw=0.5
    10000    45000    jitter=equal    draw=0.5
    0        1000     jitter=none     draw=0
    10000    60000    jitter=none     draw=0.999
    2        3000     jitter=full     draw=0.75
    10000    59970    jitter=equal    draw=0.999

Full Jitter Stays Random At The Cap And Never Exceeds It
    [Tags]    RT-009
    Start Runtime
    Compute Delay    10000    delay_ms=1000    multiplier=2    cap_ms=60000    jitter=full
    ...    draw=0.99
    Delay Should Be At Most The Cap
    Delay Should Be Below The Cap
    Delay Should Be More Than    54000
    Delay Should Be    59400

Equal Jitter Stays Random At The Cap And Never Exceeds It
    [Tags]    RT-009
    Start Runtime
    Compute Delay    10000    delay_ms=1000    multiplier=2    cap_ms=60000    jitter=equal
    ...    draw=0.99
    Delay Should Be At Most The Cap
    Delay Should Be Below The Cap
    Delay Should Be    59700

Decorrelated Jitter Grows From The Previous Delay Within The Cap
    [Documentation]    previous defaults to retry_delay_ms before the first retry.
    [Tags]    RT-009
    [Setup]    Start Runtime
    [Template]    Delay Should Come Out As
    1    3500     jitter=decorrelated    draw=0.5    previous_ms=2000
    0    2000     jitter=decorrelated    draw=0.5
    3    1000     jitter=decorrelated    draw=0      previous_ms=30000
    4    60000    jitter=decorrelated    draw=0.9    previous_ms=50000
    0    1000     jitter=decorrelated    draw=0
    1    1000     jitter=decorrelated    draw=0.9    previous_ms=0
    5    60000    jitter=decorrelated    draw=0.5    previous_ms=1000000000

# -- RT-010: retry-after as a floor -------------------------------------------------------

A Server Retry After Is A Floor On The Delay And The Cap Still Holds
    [Tags]    RT-010
    [Setup]    Start Runtime
    [Template]    Delay Should Come Out As
    0        5000     retry_after_ms=5000
    0        1000     retry_after_ms=500
    0        60000    retry_after_ms=90000
    10000    60000    retry_after_ms=90000
    0        1000     retry_after_ms=0
    0        1000     retry_after_ms=1000
    0        60000    retry_after_ms=1000000000000

A Server Retry After Is A Floor On A Jittered Delay Too
    [Documentation]    Skipped, with the jitter, on a backend claiming retry without jitter modes.
    [Tags]    RT-010    RT-009
    [Setup]    Start Runtime
    [Template]    Delay Should Come Out As
    2        3000     jitter=full    draw=0    retry_after_ms=3000
    10000    0        jitter=full    draw=0    retry_after_ms=0

# Where the retry-after outlasts the runtime's own delay, a dispatch within that delay
# comes first: a runtime that starts the job there waits out no delay at all (RT-002),
# and only one that waits its own delay and starts the job before the retry-after has
# ended ignores the retry-after (RT-010).
The Runtime Waits Out A Retry After Longer Than Its Own Delay
    [Tags]    RT-010    RT-003
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2    message=busy    retry_after_ms=5000
    Job Should Wait    a    0.5
    Job Should Wait Then Start    a    4.4    0.1    at=5

A Retry After Beyond The Cap Waits Only The Cap
    [Tags]    RT-010    RT-003
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=10000
    Dispatch
    Attempt Should Fail And Wait    a    1    2    message=busy    retry_after_ms=30000
    Job Should Wait    a    0.5
    Job Should Wait Then Start    a    9.4    0.1    at=10

A Retry After Shorter Than The Runtime's Own Delay Does Not Shorten It
    [Tags]    RT-010    RT-003
    Start Runtime
    Submit Job With Retry    a    2    delay_ms=1000    multiplier=2    cap_ms=60000
    Dispatch
    Attempt Should Fail And Wait    a    1    2    message=busy    retry_after_ms=200
    Job Should Wait Then Start    a    0.5    0.5    at=1

# -- RT-011: the deprecated attempt_number ------------------------------------------------------
# Where the backend claims deprecated-aliases, every record the runtime hands out is read
# for attempt_number too, which must equal its retry_count; elsewhere this is skipped as
# not claimed.

The Deprecated Attempt Number Reads As The Retries Taken
    [Tags]    RT-011
    Start Runtime
    Submit Job With Retry    a    3    delay_ms=1000    multiplier=2    cap_ms=60000
    Job Retry State Should Be    a    retry_count=0    max_retries=3
    Dispatch
    Attempt Should Fail And Wait    a    1    3
    Read Job    a
    Advance Clock    1
    Dispatch
    Attempt Should Fail And Wait    a    2    3    message=flaky again
