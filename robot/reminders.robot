*** Settings ***
Documentation       Conformance checks for self-reminders (spec/reminders.yaml, RM-001..RM-021).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim is skipped with the reason
...                 (by the lifecycle library's listener). Run with
...                 `robot --variable BACKEND:memory robot/reminders.robot`.
Resource            lifecycle.resource
Library             jobconform.conformance.reminders.keywords.ReminderLibrary
Test Tags           reminders


*** Test Cases ***
A Delay Is Resolved Against The Clock
    [Tags]    RM-001
    Start Reminders
    Advance Reminder Clock    10
    Create Reminder    a    check the PR    delay=120
    Creation Should Be Accepted    a
    Reminder Status Should Be    a    pending
    Reminder Should Have Been Created At Second    a    10
    Reminder Should Fire At Second    a    130
    Reminder Should Be Due At Second    a    130
    Reminder Attempts Should Be    a    0
    Reminder Should Not Have Fired    a

An Absolute Fire Time Is Kept And Both Or Neither Are Refused
    [Tags]    RM-001
    Start Reminders
    Create Reminder    a    follow up    fire_at_second=3600
    Creation Should Be Accepted    a
    Reminder Should Fire At Second    a    3600
    Create Reminder    b    x    delay=120    fire_at_second=120
    Creation Should Be Rejected    b    schedule
    Create Reminder    c    x
    Creation Should Be Rejected    c    schedule
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    a

The Delay Bounds Are Inclusive
    [Tags]    RM-002
    Start Reminders
    Create Reminder    a    x    delay=60
    Create Reminder    b    x    delay=59
    Create Reminder    c    x    delay=2592000
    Create Reminder    d    x    delay=2592001
    Advance Reminder Clock    600
    Create Reminder    e    x    fire_at_second=300
    Creation Should Be Accepted    a
    Creation Should Be Rejected    b    delay_too_short
    Creation Should Be Accepted    c
    Creation Should Be Rejected    d    delay_too_long
    Creation Should Be Rejected    e    delay_too_short

Empty And Overlong Messages Are Refused
    [Tags]    RM-003
    Start Reminders
    Create Reminder    a    ${EMPTY}    delay=60
    Create Reminder    b    ${SPACE * 3}    delay=60
    ${ok}=    Evaluate    "m" * 4000
    ${long}=    Evaluate    "m" * 4001
    Create Reminder    c    ${ok}    delay=60
    Create Reminder    d    ${long}    delay=60
    Creation Should Be Rejected    a    message_empty
    Creation Should Be Rejected    b    message_empty
    Creation Should Be Accepted    c
    Creation Should Be Rejected    d    message_too_long

The Pending Cap Counts Pending Reminders Only
    [Tags]    RM-004
    Start Reminders    max_pending=2
    Create Reminders    a, b    delay=60
    Create Reminder    c    x    delay=600
    Creation Should Be Rejected    c    too_many_pending
    Cancel Reminder    a
    Create Reminder    d    x    delay=600
    Creation Should Be Accepted    d
    Advance Reminder Clock    60
    Reminder Status Should Be    b    firing
    Create Reminder    e    y    delay=600
    Creation Should Be Accepted    e

The Day's Creations Are Capped Over A Rolling Day
    [Tags]    RM-005
    Start Reminders    max_per_day=3
    Create Reminders    a, b, c    delay=2000000
    Cancel Reminder    a
    Create Reminder    d    x    delay=2000000
    Creation Should Be Rejected    d    daily_limit
    Advance Reminder Clock    86399
    Create Reminder    e    x    delay=600
    Creation Should Be Rejected    e    daily_limit
    Advance Reminder Clock    1
    Create Reminder    f    x    delay=600
    Creation Should Be Accepted    f

The Day's Count Survives A Restart
    [Tags]    RM-005    RM-012
    Start Reminders    max_per_day=2
    Create Reminders    a, b    delay=600
    Restart Reminders
    Create Reminder    c    x    delay=600
    Creation Should Be Rejected    c    daily_limit

The First Broken Rule Is Reported
    [Tags]    RM-006
    Start Reminders
    Create Reminder    a    ${SPACE}    delay=5    fire_at_second=1
    Create Reminder    b    ${EMPTY}    delay=5
    ${long}=    Evaluate    "m" * 4001
    Create Reminder    c    ${long}    delay=5
    Creation Should Be Rejected    a    schedule
    Creation Should Be Rejected    b    message_empty
    Creation Should Be Rejected    c    message_too_long

A Reminder Is Dispatched When Its Time Comes And Not Before
    [Tags]    RM-007
    Start Reminders
    Create Reminder    a    x    delay=61
    Advance Reminder Clock    60
    Reminder Status Should Be    a    pending
    Reminder Dispatches Should Be    a    0
    Advance Reminder Clock    1
    Reminder Status Should Be    a    firing
    Reminder Attempts Should Be    a    1
    Reminder Should Not Be Due    a
    Advance Reminder Clock    600
    Reminder Dispatches Should Be    a    1

A Reminder Due Between Whole Seconds Is Not Dispatched A Microsecond Before It
    [Tags]    RM-007
    Start Reminders
    Advance Reminder Clock    0.5
    Create Reminder    a    x    delay=60
    Advance Reminder Clock    59.999999
    Reminder Status Should Be    a    pending
    Reminder Dispatches Should Be    a    0
    Advance Reminder Clock    0.000001
    Reminder Status Should Be    a    firing
    Reminder Dispatches Should Be    a    1

A Dispatch That Lands Fires The Reminder
    [Tags]    RM-008
    Start Reminders
    Create Reminder    a    x    delay=60
    Advance Reminder Clock    75
    Dispatch Of Reminder    a    lands
    Reminder Status Should Be    a    fired
    Reminder Should Have Fired At Second    a    75
    Reminder Dispatches Should Be    a    1

Every Dispatch Of A Reminder, A Retry Included, Is Labelled As The Reminder's
    [Tags]    RM-021    RM-009
    Start Reminders
    Create Reminder    a    x    delay=60
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    fails
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    lands
    Reminder Status Should Be    a    fired
    Reminder Dispatches Should Be    a    2
    Reminder Dispatches Should Be Labelled    a

A Failed Dispatch Is Retried Up To The Attempt Cap
    [Tags]    RM-009
    Start Reminders
    Create Reminder    a    x    delay=60
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    fails
    Reminder Status Should Be    a    pending
    Reminder Should Be Due At Second    a    120
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    fails
    Advance Reminder Clock    60
    Reminder Status Should Be    a    firing
    Reminder Attempts Should Be    a    3
    Dispatch Of Reminder    a    fails
    Reminder Status Should Be    a    failed
    Advance Reminder Clock    86400
    Reminder Status Should Be    a    failed
    Reminder Dispatches Should Be    a    3

A Timed Out Dispatch Is Assumed Dispatched And Never Repeated
    [Tags]    RM-010
    Start Reminders
    Create Reminder    a    x    delay=60
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    times out
    Reminder Status Should Be    a    fired
    Reminder Should Have Fired At Second    a    60
    Advance Reminder Clock    86400
    Reminder Dispatches Should Be    a    1

Cancel Moves A Pending Reminder And Repeats As A No-Op
    [Tags]    RM-011
    Start Reminders
    Create Reminder    a    x    delay=60
    Cancel Should Answer    a    cancelled
    Reminder Status Should Be    a    cancelled
    Cancel Should Answer    a    already_cancelled
    Cancel Should Answer    ghost    not_found
    Advance Reminder Clock    600
    Reminder Dispatches Should Be    a    0

Cancelling A Fired, Firing Or Failed Reminder Is A Conflict
    [Tags]    RM-011
    Start Reminders    max_attempts=1
    Create Reminders    a, b, c    delay=60
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    lands
    Cancel Should Answer    a    conflict:fired
    Reminder Status Should Be    a    fired
    Cancel Should Answer    b    conflict:firing
    Dispatch Of Reminder    c    fails
    Cancel Should Answer    c    conflict:failed

A Pending Reminder Survives A Restart And Fires
    [Tags]    RM-012
    Start Reminders
    Create Reminder    a    x    delay=120
    Restart Reminders
    Reminder Status Should Be    a    pending
    Advance Reminder Clock    120
    Reminder Status Should Be    a    firing
    Create Reminder    b    x    delay=60
    Restart Reminders    down=300
    Reminder Status Should Be    b    firing
    Reminder Dispatches Should Be    b    1

A Dispatch In Flight At A Restart Is Reconciled Once And Final States Stay
    [Tags]    RM-012
    Start Reminders
    Create Reminders    a, b, c    delay=60
    Cancel Reminder    c
    Advance Reminder Clock    60
    Dispatch Of Reminder    b    lands
    Advance Reminder Clock    10
    Restart Reminders
    Reminder Status Should Be    a    fired
    Reminder Should Have Fired At Second    a    70
    Dispatch Of Reminder    a    fails
    Advance Reminder Clock    86400
    Reminder Status Should Be    a    fired
    Reminder Status Should Be    b    fired
    Reminder Should Have Fired At Second    b    60
    Reminder Status Should Be    c    cancelled
    Reminder Dispatches Should Be    a    1
    Reminder Dispatches Should Be    b    1

Autonomy Off Holds Reminders And On Fires The Past-Due Ones
    [Tags]    RM-015
    Start Reminders
    Create Reminder    a    x    delay=60
    Create Reminder    b    x    delay=600
    Set Reminder Autonomy    off
    Advance Reminder Clock    300
    Reminder Status Should Be    a    pending
    Reminder Should Be Due At Second    a    60
    Reminder Dispatches Should Be    a    0
    Restart Reminders
    Reminder Status Should Be    a    pending
    Set Reminder Autonomy    on
    Reminder Status Should Be    a    firing
    Reminder Attempts Should Be    a    1
    Reminder Dispatches Should Be    a    1
    Reminder Status Should Be    b    pending
    Dispatch Of Reminder    a    fails
    Set Reminder Autonomy    off
    Advance Reminder Clock    600
    Reminder Status Should Be    a    pending
    Reminder Status Should Be    b    pending
    Reminder Dispatches Should Be    a    1
    Set Reminder Autonomy    on
    Reminder Status Should Be    a    firing
    Reminder Status Should Be    b    firing
    Reminder Dispatches Should Be    a    2

The Retention Sweep Deletes Only Old Final Reminders
    [Tags]    RM-016
    Start Reminders    retention_days=1
    Create Reminders    a, c, d    60
    Create Reminder    b    x    delay=600
    Cancel Reminder    c
    Advance Reminder Clock    60
    Dispatch Of Reminder    a    lands
    Set Reminder Autonomy    off
    Advance Reminder Clock    3540
    Create Reminder    e    x    delay=60
    Cancel Reminder    e
    Advance Reminder Clock    82800
    ${swept}=    Sweep Reminders
    Swept Count Should Be    ${swept}    0
    Advance Reminder Clock    1
    ${swept}=    Sweep Reminders
    Swept Count Should Be    ${swept}    2
    Reminder Should Not Be Held    a
    Reminder Should Not Be Held    c
    Reminder Status Should Be    b    pending
    Reminder Status Should Be    d    firing
    Reminder Status Should Be    e    cancelled
    ${all}=    List Reminders
    Listed Reminders Should Be    ${all}    d, b, e

A Retention Window Of 0 Turns The Sweep Off
    [Tags]    RM-016    edge
    Start Reminders    retention_days=0
    Create Reminder    a    x    delay=60
    Cancel Reminder    a
    Advance Reminder Clock    31536000
    ${swept}=    Sweep Reminders
    Swept Count Should Be    ${swept}    0
    Reminder Status Should Be    a    cancelled

Listings Follow Creation Order And Reads Are Snapshots
    [Tags]    RM-013
    Start Reminders
    Create Reminder    a    x    delay=600
    Create Reminder    b    x    delay=60
    Create Reminder    c    x    delay=300
    Cancel Reminder    c
    ${all}=    List Reminders
    Listed Reminders Should Be    ${all}    a, b, c
    ${pending}=    List Reminders    pending
    Listed Reminders Should Be    ${pending}    a, b
    Read Reminder    b
    Advance Reminder Clock    60
    Reminder Status Should Be    b    firing
    Reminder Read Earlier Should Be Unchanged
    Read Reminder    ghost
    No Reminder Should Have Been Read

A Flood Of Creations Is Refused Before Any Other Rule Until The Window Moves On
    [Tags]    RM-020
    Start Reminders    create_rate_limit=2    create_window_seconds=60
    Create Reminder    a    x    delay=600    key=k1
    Create Reminder    retry    x    delay=600    key=k1
    Create Reminder    b    y    delay=600
    Creation Should Be Accepted    a
    Creation Should Answer Reminder    retry    a
    Creation Should Be Rejected    b    rate_limited
    Advance Reminder Clock    59
    Create Reminder    c    ${EMPTY}    delay=600
    Creation Should Be Rejected    c    rate_limited
    Advance Reminder Clock    1
    Create Reminder    d    ${EMPTY}    delay=600
    Creation Should Be Rejected    d    message_empty
    Create Reminder    e    y    delay=600
    Creation Should Be Accepted    e
    Create Reminder    f    z    delay=600
    Creation Should Be Rejected    f    rate_limited
    Restart Reminders
    Create Reminder    g    z    delay=600
    Creation Should Be Accepted    g

A Listing That Names No Status Lists The Pending Reminders
    [Tags]    RM-019
    Start Reminders
    Create Reminder    a    x    delay=60
    Create Reminder    b    x    delay=600
    Create Reminder    c    x    delay=300
    Cancel Reminder    c
    ${listed}=    List Reminders By Default
    Listed Reminders Should Be    ${listed}    a, b
    Advance Reminder Clock    60
    ${listed}=    List Reminders By Default
    Listed Reminders Should Be    ${listed}    b
    Dispatch Of Reminder    a    lands
    ${listed}=    List Reminders By Default
    Listed Reminders Should Be    ${listed}    b
    ${all}=    List Reminders
    Listed Reminders Should Be    ${all}    a, b, c

A Store Write That Fails Is Made Again And Nothing Is Dispatched Twice
    [Tags]    RM-014
    Start Reminders
    Require Store Faults
    Create Reminders    a, b    delay=60
    Advance Reminder Clock Under Store Fault    60    fail    1
    Reminder Status Should Be    a    firing
    Reminder Status Should Be    b    firing
    Reminder Dispatches Should Be    a    1
    Reminder Dispatches Should Be    b    1
    Dispatch Of Reminder Under Store Fault    a    lands    fail    1
    Reminder Status Should Be    a    fired
    Reminder Dispatches Should Be    a    1

A Crash Between Writes Loses No Reminder And Doubles No Dispatch
    [Tags]    RM-014    RM-012
    Start Reminders
    Require Store Faults
    Create Reminders    a, b, c    delay=60
    Advance Reminder Clock Under Store Fault    60    crash    2
    Reminder Status Should Be    a    fired
    Reminder Status Should Be    b    firing
    Reminder Status Should Be    c    firing
    Reminder Dispatches Should Be    a    1
    Reminder Dispatches Should Be    b    1
    Reminder Dispatches Should Be    c    1
    Dispatch Of Reminder Under Store Fault    b    fails    crash    1
    Reminder Status Should Be    b    fired
    Reminder Dispatches Should Be    b    1

# -- RM-017: idempotency keys on creation ---------------------------------------------------

A Retried Creation With The Same Key Answers Its Reminder Before Any Limit
    [Tags]    RM-017
    Start Reminders    max_pending=1
    Create Reminder    a    check the PR    delay=3600    key=k1
    Creation Should Be Accepted    a
    Create Reminder    retry    check the PR    delay=3600    key=k1
    Creation Should Answer Reminder    retry    a
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    a
    Create Reminder    other    check the PR    delay=3600    key=k2
    Creation Should Be Rejected    other    too_many_pending

A Key Stops Answering Once Its Reminder Is Final Or 24 Hours Old
    [Tags]    RM-017
    Start Reminders
    Create Reminder    a    x    delay=172800    key=k1
    Cancel Reminder    a
    Create Reminder    again    x    delay=172800    key=k1
    Creation Should Be Accepted    again
    Reminder Status Should Be    again    pending
    Create Reminder    plain    x    delay=172800
    Creation Should Be Accepted    plain
    Advance Reminder Clock    86399
    Create Reminder    inside    x    delay=3600    key=k1
    Creation Should Answer Reminder    inside    again
    Advance Reminder Clock    1
    Create Reminder    after    x    delay=3600    key=k1
    Creation Should Be Accepted    after
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    a, again, plain, after

# -- RM-018: keys derived for creations without one -----------------------------------------

A Retried Creation Without A Key Answers Its Reminder Before Any Limit
    [Tags]    RM-018
    Start Reminders    max_pending=2
    Create Reminder    a    check the PR    delay=3600
    Advance Reminder Clock    60
    Create Reminder    retry    check the PR    delay=3600
    Creation Should Answer Reminder    retry    a
    Reminder Should Fire At Second    a    3600
    Create Reminder    at    check the PR    fire_at_second=3600
    Creation Should Be Accepted    at
    Create Reminder    at-offset    check the PR    fire_at_second=3600    utc_offset_hours=2
    Creation Should Be Rejected    at-offset    too_many_pending
    Create Reminder    again    check the PR    delay=3600
    Creation Should Answer Reminder    again    a
    Create Reminder    other    check the PR!    delay=3600
    Creation Should Be Rejected    other    too_many_pending
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    a, at

A Derived Key Stops Answering Once Its Reminder Is Final Or 24 Hours Old
    [Tags]    RM-018
    Start Reminders
    Create Reminder    a    x    delay=172800
    Restart Reminders
    Create Reminder    retry    x    delay=172800
    Creation Should Answer Reminder    retry    a
    Cancel Reminder    a
    Create Reminder    again    x    delay=172800
    Creation Should Be Accepted    again
    Advance Reminder Clock    86399
    Create Reminder    inside    x    delay=172800
    Creation Should Answer Reminder    inside    again
    Advance Reminder Clock    1
    Create Reminder    after    x    delay=172800
    Creation Should Be Accepted    after
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    a, again, after

A Key Given And A Key Derived Never Answer Each Other
    [Tags]    RM-018
    Start Reminders
    Create Reminder    keyed    x    delay=600    key=k1
    Create Reminder    plain    x    delay=600
    Creation Should Be Accepted    plain
    Create Reminder    plain-retry    x    delay=600
    Creation Should Answer Reminder    plain-retry    plain
    Create Reminder    other-key    x    delay=600    key=k2
    Creation Should Be Accepted    other-key
    ${listed}=    List Reminders
    Listed Reminders Should Be    ${listed}    keyed, plain, other-key
