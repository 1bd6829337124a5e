*** Settings ***
Documentation       Conformance checks for scheduling and autonomy (spec/scheduling.yaml,
...                 SC-001..SC-024).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim is skipped with the reason
...                 (by the lifecycle library's listener). Instants are ISO 8601 with an
...                 offset; the clock starts at 2026-01-01T00:00:00Z unless `Start Scheduling`
...                 names another start. Run with
...                 `robot --variable BACKEND:memory robot/scheduling.robot`.
Resource            lifecycle.resource
Library             jobconform.conformance.scheduling.keywords.SchedulingLibrary
Test Tags           scheduling


*** Variables ***
# New York: 02:00 EST jumps to 03:00 EDT on 2026-03-08 (07:00Z); 01:00-02:00 repeats on
# 2026-11-01 (05:00Z as EDT, 06:00Z as EST).
${BEFORE_GAP}       2026-03-08T06:00:00Z
${BEFORE_FOLD}      2026-11-01T04:00:00Z
${NEW_YORK}         America/New_York


*** Test Cases ***
A One-Shot Job Is Scheduled By Exactly One Time
    [Tags]    SC-001
    Start Scheduling
    Advance Scheduling Clock    10
    Schedule One-Shot Job    a    report    delay=120
    Creation Should Be Accepted    a
    Created At Should Be    a    2026-01-01T00:00:10Z
    Next Fire Should Be    a    2026-01-01T00:02:10Z
    Schedule One-Shot Job    b    renew    run_at=2026-01-01T03:00:00+02:00
    Next Fire Should Be    b    2026-01-01T01:00:00Z
    Schedule One-Shot Job    c    x    delay=60    run_at=2026-01-01T01:00:00Z
    Creation Should Be Rejected    c    schedule
    Schedule One-Shot Job    d    x
    Creation Should Be Rejected    d    schedule
    Schedule One-Shot Job    e    x    delay=-1
    Creation Should Be Rejected    e    schedule
    ${listed}=    List Schedules
    Listed Schedules Should Be    ${listed}    a    b

A One-Shot Job Runs Once When Due And Never Before
    [Tags]    SC-002
    Start Scheduling    missed_fires=none
    Schedule One-Shot Job    a    renew    run_at=2026-01-01T01:00:00Z
    Schedule One-Shot Job    b    later    delay=7200
    Advance Scheduling Clock To    2026-01-01T00:59:59Z
    Dispatches Should Be    a    0
    Advance Scheduling Clock    1
    Dispatches Should Be    a    1
    Execution Should Be    a    1    schedule    2026-01-01T01:00:00Z
    Execution Should Have Dispatched    a    1    renew
    Should Have No Next Fire    a
    Restart Schedulers    down=3600
    Dispatches Should Be    a    1
    Dispatches Should Be    b    1
    Execution Should Have Started At    b    1    2026-01-01T02:00:00Z

Cron Fire Times Come From The Expression
    [Tags]    SC-003
    Start Scheduling    start=2026-06-01T12:00:00Z
    Create Cron Schedule    a    0 * * * *    UTC
    Create Cron Schedule    g    0 12 * * *    UTC
    Next Fire Should Be    a    2026-06-01T13:00:00Z
    Next Fire Should Be    g    2026-06-02T12:00:00Z
    Advance Scheduling Clock To    2026-06-01T13:00:00Z
    Next Fire Should Be    a    2026-06-01T14:00:00Z
    Create Cron Schedule    d    61 * * * *    UTC
    Creation Should Be Rejected    d    expression
    Create Cron Schedule    e    0 * * * *    Mars/Olympus_Mons
    Creation Should Be Rejected    e    timezone
    Create Cron Schedule    f    every hour    Mars/Olympus_Mons
    Creation Should Be Rejected    f    expression

Cron Fire Times Are Read On The Zone's Wall Clock
    [Tags]    SC-003    zones
    Start Scheduling    start=2026-06-01T12:00:00Z
    Create Cron Schedule    b    0 9 * * *    Europe/Berlin
    Create Cron Schedule    c    0 9 * * *    ${NEW_YORK}
    Next Fire Should Be    b    2026-06-02T07:00:00Z
    Next Fire Should Be    c    2026-06-01T13:00:00Z
    Advance Scheduling Clock To    2026-06-01T13:00:00Z
    Next Fire Should Be    c    2026-06-02T13:00:00Z

A Time In The Spring-Forward Gap Fires When The Gap Ends
    [Tags]    SC-004
    Start Scheduling    start=${BEFORE_GAP}
    Create Cron Schedule    a    30 2 * * *    ${NEW_YORK}
    Create Cron Schedule    b    */30 * * * *    ${NEW_YORK}
    Next Fire Should Be    a    2026-03-08T07:00:00Z
    Advance Scheduling Clock To    2026-03-08T07:30:00Z
    Executions Should Be    a    1
    Execution Should Be    a    1    schedule    2026-03-08T07:00:00Z
    Next Fire Should Be    a    2026-03-09T06:30:00Z
    Executions Should Be    b    3
    Execution Should Be    b    2    schedule    2026-03-08T07:00:00Z

A Repeated Hour Fires Once Unless The Hour Is A Wildcard
    [Tags]    SC-005
    Start Scheduling    start=${BEFORE_FOLD}
    Create Cron Schedule    a    30 1 * * *    ${NEW_YORK}
    Create Cron Schedule    b    0 * * * *    ${NEW_YORK}
    Advance Scheduling Clock To    2026-11-01T07:00:00Z
    Executions Should Be    a    1
    Execution Should Be    a    1    schedule    2026-11-01T05:30:00Z
    Next Fire Should Be    a    2026-11-02T06:30:00Z
    Executions Should Be    b    3
    Execution Should Be    b    1    schedule    2026-11-01T05:00:00Z
    Execution Should Be    b    2    schedule    2026-11-01T06:00:00Z

A Wildcard Hour Fires Once At The End Of The Spring-Forward Gap
    [Tags]    SC-004
    Start Scheduling    start=${BEFORE_GAP}
    Create Cron Schedule    a    0 * * * *    ${NEW_YORK}
    Advance Scheduling Clock To    2026-03-08T08:00:00Z
    Executions Should Be    a    2
    Execution Should Be    a    1    schedule    2026-03-08T07:00:00Z
    Execution Should Be    a    2    schedule    2026-03-08T08:00:00Z

A Wildcard Minute Fires In Both Occurrences Of The Repeated Hour
    [Tags]    SC-005
    Start Scheduling    start=${BEFORE_FOLD}
    Create Cron Schedule    a    */30 * * * *    ${NEW_YORK}
    Advance Scheduling Clock To    2026-11-01T06:30:00Z
    Executions Should Be    a    5
    Execution Should Be    a    3    schedule    2026-11-01T05:30:00Z
    Execution Should Be    a    4    schedule    2026-11-01T06:00:00Z
    Execution Should Be    a    5    schedule    2026-11-01T06:30:00Z

A Running Scheduler Fires Every Fire Time Once And Never Early
    [Tags]    SC-006
    Start Scheduling
    Create Cron Schedule    a    */30 * * * *
    Advance Scheduling Clock    1799
    Dispatches Should Be    a    0
    Advance Scheduling Clock    1
    Dispatches Should Be    a    1
    Execution Should Have Started At    a    1    2026-01-01T00:30:00Z
    Advance Scheduling Clock    5400
    Dispatches Should Be    a    4
    Execution Should Be    a    4    schedule    2026-01-01T02:00:00Z

Commands About Other Schedules Within A Fire's Minute Do Not Fire It Again
    [Tags]    SC-006
    Start Scheduling
    Create Cron Schedule    a    */30 * * * *
    Create Cron Schedule    b    0 9 * * *
    Advance Scheduling Clock    1820
    Dispatches Should Be    a    1
    # Still in the minute of a's fire: creating, editing or deleting another schedule is no
    # fire time of a (a scheduler that tests its crontabs on every change fires it again).
    Schedule One-Shot Job    c    once    delay=600
    Edit Schedule    b    message=weekly report
    Delete Schedule    c
    Dispatches Should Be    a    1
    Next Fire Should Be    a    2026-01-01T01:00:00Z

Missed Fires Follow missed_fires One
    [Tags]    SC-007
    Start Scheduling    missed_fires=one
    Create Cron Schedule    a    0 * * * *
    Restart Schedulers    down=9000
    Executions Should Be    a    1
    Execution Should Be    a    1    catch_up    2026-01-01T02:00:00Z
    Execution Should Have Started At    a    1    2026-01-01T02:30:00Z
    Next Fire Should Be    a    2026-01-01T03:00:00Z

Missed Fires Follow missed_fires All
    [Tags]    SC-007
    Start Scheduling    missed_fires=all
    Create Cron Schedule    a    0 * * * *
    Restart Schedulers    down=9000
    Executions Should Be    a    2
    Execution Should Be    a    1    catch_up    2026-01-01T01:00:00Z
    Execution Should Be    a    2    catch_up    2026-01-01T02:00:00Z

Missed Fires Follow missed_fires None
    [Tags]    SC-007
    Start Scheduling    missed_fires=none
    Create Cron Schedule    a    0 * * * *
    Restart Schedulers    down=9000
    Executions Should Be    a    0
    Next Fire Should Be    a    2026-01-01T03:00:00Z

Two Schedulers Make One Execution Per Fire
    [Tags]    SC-008
    Start Scheduling
    Create Cron Schedule    a    */30 * * * *
    Schedule One-Shot Job    b    once    delay=900
    Start Second Scheduler
    Advance Scheduling Clock    3600
    Dispatches Should Be    a    2
    Executions Should Be    a    2
    Dispatches Should Be    b    1

A Manual Trigger Fires At Once And Bypasses The Pre-Check
    [Tags]    SC-009
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=poll    pre_check=skip
    Advance Scheduling Clock    600
    ${answer}=    Trigger Schedule    a
    Answer Should Be    ${answer}    triggered
    Execution Should Be    a    1    manual    2026-01-01T00:10:00Z
    Execution Should Have Dispatched    a    1    poll
    Execution Pre-Check Should Be    a    1
    Pre-Check Calls Should Be    a    0
    Next Fire Should Be    a    2026-01-01T01:00:00Z
    Turn Autonomy    off
    Trigger Schedule    a
    Dispatches Should Be    a    2
    ${answer}=    Trigger Schedule    ghost
    Answer Should Be    ${answer}    not_found

Autonomy Off Holds Every Schedule
    [Tags]    SC-010
    Start Scheduling
    Create Cron Schedule    a    */30 * * * *
    Schedule One-Shot Job    b    once    delay=600
    Turn Autonomy    off
    Advance Scheduling Clock    3600
    Executions Should Be    a    0
    Dispatches Should Be    b    0
    Restart Schedulers    down=3600
    Executions Should Be    a    0
    Dispatches Should Be    b    0

Autonomy Back On Resumes Without A Burst
    [Tags]    SC-011
    Start Scheduling
    Create Cron Schedule    a    */30 * * * *
    Schedule One-Shot Job    b    once    delay=600
    Turn Autonomy    off
    Advance Scheduling Clock To    2026-01-01T01:10:00Z
    Turn Autonomy    on
    Executions Should Be    a    0
    Next Fire Should Be    a    2026-01-01T01:30:00Z
    Dispatches Should Be    b    1
    Advance Scheduling Clock To    2026-01-01T01:30:00Z
    Executions Should Be    a    1

An Empty Pre-Check Answer Skips The Fire At Zero Cost
    [Tags]    SC-012
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=poll    pre_check=skip
    Advance Scheduling Clock    3600
    Executions Should Be    a    1
    Execution Should Be    a    1    schedule    2026-01-01T01:00:00Z
    Execution Should Be Skipped At Zero Cost    a    1
    Execution Pre-Check Should Be    a    1    skip
    Pre-Check Calls Should Be    a    1
    Dispatches Should Be    a    0

The Pre-Check Output Replaces The Message For That Fire
    [Tags]    SC-013
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=poll    pre_check=prompt
    Advance Scheduling Clock    3600
    Execution Should Have Dispatched    a    1    work found by the pre-check
    Execution Pre-Check Should Be    a    1    prompt
    Pre-Check Answers    a    error
    Advance Scheduling Clock    3600
    Execution Should Have Dispatched    a    2    poll

A Failing Or Timed-Out Pre-Check Fails Open
    [Tags]    SC-014
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=poll    pre_check=error
    Advance Scheduling Clock    3600
    Execution Should Have Dispatched    a    1    poll
    Execution Pre-Check Should Be    a    1    error
    Pre-Check Answers    a    timeout
    Advance Scheduling Clock    3600
    Execution Should Have Dispatched    a    2    poll
    Execution Pre-Check Should Be    a    2    timeout
    Dispatches Should Be    a    2

Each Schedule Keeps Its Own History
    [Tags]    SC-015
    Start Scheduling
    Create Cron Schedule    a    0 * * * *
    Create Cron Schedule    b    30 * * * *
    Advance Scheduling Clock    3660
    Trigger Schedule    a
    Restart Schedulers
    Executions Should Be    a    2
    Execution Should Be    a    1    schedule    2026-01-01T01:00:00Z
    Execution Should Be    a    2    manual    2026-01-01T01:01:00Z
    Executions Should Be    b    1
    Read History    a
    ${answer}=    Read History    ghost
    Answer Should Be    ${answer}    not_found

Reads Are Snapshots In Creation Order
    [Tags]    SC-016
    Start Scheduling
    Create Cron Schedule    a    0 * * * *
    Schedule One-Shot Job    b    once    delay=60
    Read Schedule    a
    Advance Scheduling Clock    3600
    Schedule Read Earlier Should Be Unchanged
    Restart Schedulers    down=60
    ${listed}=    List Schedules
    Listed Schedules Should Be    ${listed}    a    b

An Edit Changes The Fields Given And Restarts The Timetable
    [Tags]    SC-017
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Schedule One-Shot Job    b    once    delay=7200
    Advance Scheduling Clock    1800
    ${answer}=    Edit Schedule    a    message=every quarter to
    Answer Should Be    ${answer}    edited
    Message Should Be    a    every quarter to
    Next Fire Should Be    a    2026-01-01T01:00:00Z
    Edit Schedule    a    expression=45 * * * *    timezone=UTC
    Next Fire Should Be    a    2026-01-01T00:45:00Z
    ${answer}=    Edit Schedule    a    expression=not cron
    Answer Should Be    ${answer}    rejected:expression
    Next Fire Should Be    a    2026-01-01T00:45:00Z
    ${answer}=    Edit Schedule    b    timezone=UTC
    Answer Should Be    ${answer}    rejected:schedule
    ${answer}=    Edit Schedule    ghost    message=x
    Answer Should Be    ${answer}    not_found
    Advance Scheduling Clock    900
    Execution Should Be    a    1    schedule    2026-01-01T00:45:00Z
    Execution Should Have Dispatched    a    1    every quarter to

An Edit Into Another Zone Reads The Timetable On That Zone's Wall Clock
    [Tags]    SC-017    zones
    Start Scheduling
    Create Cron Schedule    a    0 9 * * *    UTC    message=nine
    Schedule One-Shot Job    b    once    delay=7200
    Next Fire Should Be    a    2026-01-01T09:00:00Z
    ${answer}=    Edit Schedule    a    timezone=Europe/Berlin
    Answer Should Be    ${answer}    edited
    Next Fire Should Be    a    2026-01-01T08:00:00Z
    Edit Schedule    a    timezone=${NEW_YORK}
    Next Fire Should Be    a    2026-01-01T14:00:00Z
    ${answer}=    Edit Schedule    b    timezone=Europe/Berlin
    Answer Should Be    ${answer}    rejected:schedule
    Advance Scheduling Clock To    2026-01-01T14:00:00Z
    Execution Should Be    a    1    schedule    2026-01-01T14:00:00Z

An Edit Exactly On A Fire Time Of The New Timetable Fires After It
    [Tags]    SC-017
    Start Scheduling
    Create Cron Schedule    a    30 * * * *    message=half past
    Advance Scheduling Clock    3600
    Edit Schedule    a    expression=0 * * * *    timezone=UTC
    Next Fire Should Be    a    2026-01-01T02:00:00Z
    Advance Scheduling Clock    1
    Dispatches Should Be    a    1

A Deleted Schedule Never Fires Again
    [Tags]    SC-018
    Start Scheduling
    Create Cron Schedule    a    0 * * * *
    Create Cron Schedule    b    30 * * * *
    Advance Scheduling Clock    3600
    Dispatches Should Be    a    1
    ${answer}=    Delete Schedule    a
    Answer Should Be    ${answer}    deleted
    Schedule Should Not Be Held    a
    Advance Scheduling Clock    7200
    Restart Schedulers    down=7200
    Dispatches Should Be    a    1
    ${listed}=    List Schedules
    Listed Schedules Should Be    ${listed}    b
    ${answer}=    Trigger Schedule    a
    Answer Should Be    ${answer}    not_found
    ${answer}=    Read History    a
    Answer Should Be    ${answer}    not_found
    ${answer}=    Delete Schedule    a
    Answer Should Be    ${answer}    not_found

The History Learns How Each Dispatched Execution Ended And The First End Stays
    [Tags]    SC-019
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Create Cron Schedule    b    0 * * * *    message=checked    pre_check=skip
    Advance Scheduling Clock    7200
    Trigger Schedule    a
    Executions Should Be    a    3
    Execution Should Not Have Ended    a    1
    ${answer}=    End Execution    a    2026-01-01T01:00:00Z    succeeded    cost=0.25
    Answer Should Be    ${answer}    ended
    Execution Should Have Ended    a    1    succeeded    cost=0.25
    Execution Should Not Have Ended    a    2
    ${answer}=    End Execution    a    2026-01-01T01:00:00Z    failed
    Answer Should Be    ${answer}    refused
    Execution Should Have Ended    a    1    succeeded    cost=0.25
    End Execution    a    2026-01-01T02:00:00Z    failed    cost=0.5
    End Execution    a    2026-01-01T02:00:00Z    cancelled    cost=0
    Execution Should Have Ended    a    2    failed    cost=0.5
    Execution Should Have Ended    a    3    cancelled    cost=0
    ${answer}=    End Execution    b    2026-01-01T01:00:00Z    succeeded
    Answer Should Be    ${answer}    refused
    ${answer}=    End Execution    a    2026-01-01T01:30:00Z    succeeded
    Answer Should Be    ${answer}    refused
    Restart Schedulers    down=60
    Execution Should Have Ended    a    1    succeeded    cost=0.25
    Delete Schedule    a
    ${answer}=    End Execution    a    2026-01-01T01:00:00Z    failed
    Answer Should Be    ${answer}    not_found

Each Schedule Has Its Own Validation Switch And Timeout
    [Tags]    SC-020
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Create Cron Schedule    b    0 6 * * *    message=daily
    Schedule Validation Should Be    a    ${False}
    ${answer}=    Set Validation    a    ${True}    timeout=600
    Answer Should Be    ${answer}    validation_set
    Schedule Validation Should Be    a    ${True}    timeout=600
    Schedule Validation Should Be    b    ${False}
    ${answer}=    Set Validation    a    ${True}    timeout=0
    Answer Should Be    ${answer}    rejected:validation
    Schedule Validation Should Be    a    ${True}    timeout=600
    Edit Schedule    a    message=edited
    Restart Schedulers    down=60
    Schedule Validation Should Be    a    ${True}    timeout=600
    Set Validation    a    ${False}    timeout=300
    Schedule Validation Should Be    a    ${False}    timeout=300
    Delete Schedule    a
    ${answer}=    Set Validation    a    ${True}    timeout=600
    Answer Should Be    ${answer}    not_found

Only A Technical Success With Validation On Waits For A Linked Validation Run
    [Tags]    SC-021
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Set Validation    a    ${True}    timeout=600
    Advance Scheduling Clock    14400
    Business Status Should Be    a    1
    Validation Run Should Be    a    1
    End Execution    a    2026-01-01T01:00:00Z    succeeded
    Business Status Should Be    a    1    pending_validation
    Validation Run Should Be    a    1    2026-01-01T04:00:00+00:00    timeout=600
    End Execution    a    2026-01-01T02:00:00Z    failed
    End Execution    a    2026-01-01T03:00:00Z    cancelled
    Business Status Should Be    a    2    skipped
    Validation Run Should Be    a    2
    Business Status Should Be    a    3    skipped
    Validation Run Should Be    a    3
    Set Validation    a    ${False}    timeout=600
    End Execution    a    2026-01-01T04:00:00Z    succeeded
    Business Status Should Be    a    4    skipped
    Validation Run Should Be    a    4
    Restart Schedulers    down=60
    Business Status Should Be    a    1    pending_validation
    Validation Run Should Be    a    1    2026-01-01T04:00:00+00:00    timeout=600
    Scheduling Alerts Should Be

A Validation Run's Verdict Decides The Business Status Once Within Its Timeout
    [Tags]    SC-022
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Set Validation    a    ${True}    timeout=600
    Advance Scheduling Clock    7200
    End Execution    a    2026-01-01T01:00:00Z    succeeded
    End Execution    a    2026-01-01T02:00:00Z    succeeded
    ${answer}=    End Validation    a    2026-01-01T01:00:00Z    pass
    Answer Should Be    ${answer}    decided
    Business Status Should Be    a    1    validated
    ${answer}=    End Validation    a    2026-01-01T01:00:00Z    fail
    Answer Should Be    ${answer}    refused
    Business Status Should Be    a    1    validated
    Advance Scheduling Clock    600
    Business Status Should Be    a    2    pending_validation
    Advance Scheduling Clock    1
    ${answer}=    End Validation    a    2026-01-01T02:00:00Z    pass
    Answer Should Be    ${answer}    decided
    Business Status Should Be    a    2    failed_validation
    ${answer}=    End Validation    a    2026-01-01T01:30:00Z    pass
    Answer Should Be    ${answer}    refused
    Delete Schedule    a
    ${answer}=    End Validation    a    2026-01-01T01:00:00Z    pass
    Answer Should Be    ${answer}    not_found

A Verdict That Is Not A Clear Pass Or Fail Counts As A Failed Validation
    [Tags]    SC-023
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Set Validation    a    ${True}    timeout=3600
    Advance Scheduling Clock    10800
    End Execution    a    2026-01-01T01:00:00Z    succeeded
    End Execution    a    2026-01-01T02:00:00Z    succeeded
    End Execution    a    2026-01-01T03:00:00Z    succeeded
    End Validation    a    2026-01-01T01:00:00Z    prose
    End Validation    a    2026-01-01T02:00:00Z    odd_json
    End Validation    a    2026-01-01T03:00:00Z    pass
    Business Status Should Be    a    1    failed_validation
    Business Status Should Be    a    2    failed_validation
    Business Status Should Be    a    3    validated

A Failed Validation Raises One Operator Alert
    [Tags]    SC-024
    Start Scheduling
    Create Cron Schedule    a    0 * * * *    message=hourly
    Create Cron Schedule    b    0 * * * *    message=hourly
    Set Validation    a    ${True}    timeout=600
    Set Validation    b    ${True}    timeout=600
    Advance Scheduling Clock    7200
    End Execution    a    2026-01-01T01:00:00Z    succeeded
    End Execution    a    2026-01-01T02:00:00Z    succeeded
    End Execution    b    2026-01-01T01:00:00Z    succeeded
    End Execution    b    2026-01-01T02:00:00Z    failed
    End Validation    b    2026-01-01T01:00:00Z    fail
    Scheduling Alerts Should Be    b:1
    End Validation    a    2026-01-01T01:00:00Z    pass
    Scheduling Alerts Should Be    b:1
    End Validation    a    2026-01-01T02:00:00Z    fail
    ${answer}=    End Validation    a    2026-01-01T02:00:00Z    fail
    Answer Should Be    ${answer}    refused
    Scheduling Alerts Should Be    b:1    a:2
    Restart Schedulers    down=60
    Scheduling Alerts Should Be    b:1    a:2
    Delete Schedule    b
    Scheduling Alerts Should Be    b:1    a:2
