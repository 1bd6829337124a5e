*** Settings ***
Documentation       Conformance checks for a self-running runtime (spec/self-running.yaml,
...                 SR-001..SR-009).
...
...                 The runtime is opened with open_self_running and acts by itself: no test
...                 dispatches, detects stuck jobs or expires leases. Keywords only submit,
...                 end bodies, send heartbeats and let time pass; the harness reads at the
...                 last instant each action is still forbidden, inside its window and at its
...                 close. Tests are skipped on a backend that does not claim self-running,
...                 and those of SR-002, SR-003, SR-004, SR-005, SR-006, SR-007, SR-008 and
...                 SR-009 on one that does not also claim stuck, redelivery, retry, reaper,
...                 scheduling, breaker-seams, reminders or scheduling and scheduling-ends.
Resource            lifecycle.resource
Library             jobconform.conformance.self_running.keywords.SelfRunningLibrary
Test Tags           self-running


*** Test Cases ***
Queued Work Starts Within One Poll Interval Without A Dispatch
    [Tags]    SR-001
    Open Self-Running Runtime    slots=1
    Submit To Self-Running Runtime    a
    Submit To Self-Running Runtime    b
    Let Time Pass On Self-Running Runtime    3
    Self-Running Job Status Should Be    a    running
    Self-Running Job Status Should Be    b    queued
    Self-Running Job Returns    a
    Let Time Pass On Self-Running Runtime    1
    Self-Running Job Status Should Be    b    running

A Silent Job Is Failed As Stuck Within One Poll Interval After Its Timeout
    [Tags]    SR-002
    Open Self-Running Runtime    job_timeout=20
    Submit To Self-Running Runtime    a
    Let Time Pass On Self-Running Runtime    10
    Self-Running Job Sends A Heartbeat    a
    Let Self-Running Windows Pass
    Self-Running Job Status Should Be    a    failed

A Job Whose Lease Lapsed Is Running Again Within Two Poll Intervals
    [Tags]    SR-003
    Open Self-Running Runtime    lease=20    job_timeout=2000
    Submit To Self-Running Runtime    a
    Let Time Pass On Self-Running Runtime    23
    Self-Running Job Status Should Be    a    running
    Self-Running Job Should Be Re-Delivered    a    1

A Retried Failure Starts Again When Due And Not Before
    [Tags]    SR-004
    Open Self-Running Runtime
    Submit To Self-Running Runtime    a    retries=1    delay_ms=5000
    Let Time Pass On Self-Running Runtime    1
    Self-Running Job Raises    a
    Self-Running Job Status Should Be    a    queued
    Let Self-Running Windows Pass
    Self-Running Job Status Should Be    a    running
    Self-Running Job Returns    a
    Self-Running Job Status Should Be    a    succeeded

A Retry That Comes Due Between Two Polls Starts Within One Poll Interval
    [Documentation]    Due at 4.5 s, half a poll after a tick: a runtime whose scheduler
    ...                moves it to the queue only after its workers' poll at 5 s starts it
    ...                at 6 s, past the window at 5.5 s.
    [Tags]    SR-004    edge
    Open Self-Running Runtime
    Submit To Self-Running Runtime    a    retries=2    delay_ms=3000
    Let Time Pass On Self-Running Runtime    0.5
    Let Time Pass On Self-Running Runtime    1
    Self-Running Job Raises    a
    Let Time Pass On Self-Running Runtime    0.5
    Let Time Pass On Self-Running Runtime    0.5
    Let Time Pass On Self-Running Runtime    1
    Let Time Pass On Self-Running Runtime    2
    Self-Running Job Status Should Be    a    running

An Ended Job Is Removed By The Runtime's Own Reaper Within One Sweep Interval
    [Tags]    SR-005
    Open Self-Running Runtime
    Submit To Self-Running Runtime    a
    Let Time Pass On Self-Running Runtime    1
    Self-Running Job Raises    a
    Let The Reaper's Time To Live Pass On Self-Running Runtime
    Self-Running Job Status Should Be    a    failed
    Let Self-Running Windows Pass
    Self-Running Job Should Be Removed    a

Schedules Fire By Themselves Within One Poll Interval And Never Early
    [Tags]    SR-006
    Open Self-Running Runtime
    Schedule One-Shot Job On Self-Running Scheduler    report    30
    Schedule Cron On Self-Running Scheduler    digest    */2 * * * *
    Let Time Pass On Self-Running Runtime    29
    Self-Running Schedule Should Have Fired    report    0
    Let Time Pass On Self-Running Runtime    250
    Self-Running Schedule Should Have Fired    report    1
    Self-Running Schedule Should Have Fired    digest    2

The Scheduler Learns How Each Execution Ended By Itself Within One Poll Interval
    [Tags]    SR-009
    Open Self-Running Runtime
    Schedule One-Shot Job On Self-Running Scheduler    report    30    runs=5.5    ends=succeeded
    Schedule Cron On Self-Running Scheduler    digest    */2 * * * *    runs=10    ends=failed
    Let Time Pass On Self-Running Runtime    35
    Self-Running Schedule Should Have Learned Ends    report    0
    Let Time Pass On Self-Running Runtime    250
    Self-Running Schedule Should Have Learned Ends    report    1
    Self-Running Schedule Should Have Learned Ends    digest    2

The Breaker's Backstop Sweeps By Itself At Its Interval And Never Early
    [Tags]    SR-007
    Open Self-Running Runtime
    Let Time Pass On Self-Running Runtime    10
    Trip Self-Running Breaker With Lost Drain    a    w1, w2
    Trip Self-Running Breaker With Lost Drain    b    v
    Let Time Pass On Self-Running Runtime    49
    Self-Running Breaker Should Queue    a    w1, w2
    Self-Running Breaker Should Queue    b    v
    Let Time Pass On Self-Running Runtime    1
    Self-Running Breaker Should Have Failed    a    w1, w2
    Self-Running Breaker Should Have Failed    b    v
    Trip Self-Running Breaker With Lost Drain    a    w3
    Let Time Pass On Self-Running Runtime    59
    Self-Running Breaker Should Queue    a    w3
    Let Time Pass On Self-Running Runtime    1
    Self-Running Breaker Should Have Failed    a    w1, w2, w3

Reminders Are Dispatched By The Runtime Itself At Their Due Time And Never Early
    [Tags]    SR-008
    Open Self-Running Runtime
    Remind On Self-Running Runtime    check the PR    60
    Remind On Self-Running Runtime    follow up    75    failures=2
    Let Time Pass On Self-Running Runtime    59
    Self-Running Reminder Should Have Been Dispatched    check the PR    0
    Let Time Pass On Self-Running Runtime    1
    Self-Running Reminder Should Have Been Dispatched    check the PR    1
    Self-Running Reminder Status Should Be    check the PR    fired
    Let Time Pass On Self-Running Runtime    15
    Self-Running Reminder Status Should Be    follow up    pending
    Let Time Pass On Self-Running Runtime    120
    Self-Running Reminder Should Have Been Dispatched    follow up    3
    Self-Running Reminder Status Should Be    follow up    fired
