*** Settings ***
Documentation       Conformance checks for idempotency keys (spec/idempotency.yaml, IK-001..IK-018).
...
...                 Each test is tagged with the requirement IDs it checks; a test whose
...                 requirement's area the backend does not claim, or which does not apply
...                 to the profile, is skipped with the reason (the lifecycle library's
...                 listener). Every claim goes to the backend and to the oracle.
Resource            lifecycle.resource
Library             jobconform.conformance.idempotency.keywords.IdempotencyLibrary
Test Tags           idempotency


*** Test Cases ***
# -- IK-001 / IK-002: one claim starts, a duplicate in flight conflicts -------------------

The First Claim Starts And The Same Key In Another Scope Is Another Key
    [Tags]    IK-001
    Claim Key    first    alice    order-1    {"qty": 1}
    Claim Should Be Started    first
    Claim Key    other    bob    order-1    {"qty": 1}
    Claim Should Be Started    other

A Duplicate In Flight Is A Conflict
    [Tags]    IK-002    IK-001
    Claim Key    first    alice    order-1    {"qty": 1}
    Claim Key    again    alice    order-1    {"qty": 1}
    Claim Should Conflict    again
    Advance Key Clock    89
    Claim Key    later    alice    order-1    {"qty": 1}
    Claim Should Conflict    later

# -- IK-003: replay ------------------------------------------------------------------------

A Duplicate After Completion Replays The Result
    [Tags]    IK-003
    Claim Key    first    alice    order-1    {"qty": 1}
    Complete Claim    first    {"execution": "e-1"}
    Completion Should Be Stored    first
    Advance Key Clock    3600
    Claim Key    again    alice    order-1    {"qty": 1}
    Claim Should Replay Result    again    first    {"execution": "e-1"}

A Stored Error Is Replayed And Never Overwritten
    [Tags]    IK-003
    Claim Key    first    alice    order-1    {"qty": 1}
    Fail Claim    first    PaymentDeclined    card expired
    Completion Should Be Stored    first
    Complete Claim    first    "ok"
    Completion Should Be Refused    first
    Claim Key    again    alice    order-1    {"qty": 1}
    Claim Should Replay Error    again    first    PaymentDeclined    card expired

# -- IK-004: release -----------------------------------------------------------------------

A Released Claim Lets The Retry Start
    [Tags]    IK-004
    Claim Key    first    alice    order-1    {"qty": 1}
    Release Claim    first
    Release Should Be Accepted    first
    Claim Key    retry    alice    order-1    {"qty": 1}
    Claim Should Be Started    retry
    Complete Claim    first    "late"
    Completion Should Be Refused    first
    Release Claim    first
    Release Should Be Refused    first

# -- IK-005: no key ------------------------------------------------------------------------

Claims Without A Key All Start
    [Tags]    IK-005
    Claim Without Key    one    alice    {"qty": 1}
    Claim Should Be Started Without Token    one
    Claim Without Key    two    alice    {"qty": 1}
    Claim Should Be Started Without Token    two

# -- IK-006: mismatch ----------------------------------------------------------------------

Another Payload Under The Same Key Is A Mismatch
    [Tags]    IK-006
    Claim Key    first    alice    k    {"a": 1, "b": 2}
    Claim Key    changed    alice    k    {"a": 1, "b": 3}
    Claim Should Mismatch    changed    422
    Claim Key    reordered    alice    k    {"b": 2, "a": 1}
    Claim Should Conflict    reordered
    Complete Claim    first    "done"
    Claim Key    changed-later    alice    k    {"a": 2}
    Claim Should Mismatch    changed-later    422

The Mismatch Status Is A Parameter
    [Tags]    IK-006
    Start Key Runtime    mismatch_status=409
    Claim Key    first    alice    k    1
    Claim Key    changed    alice    k    2
    Claim Should Mismatch    changed    409

# -- IK-007: TTL ---------------------------------------------------------------------------

A Key Is Replayed For 24 Hours And Starts Fresh After
    [Tags]    IK-007    IK-003
    Claim Key    first    alice    k    1
    Complete Claim    first    "done"
    Advance Key Clock    86399
    Claim Key    within    alice    k    1
    Claim Should Replay Result    within    first    "done"
    Advance Key Clock    1
    Claim Key    after    alice    k    1
    Claim Should Be Started    after

A Purge Removes Keys At Least 24 Hours Old
    [Tags]    IK-007
    Claim Key    old    alice    k1    1
    Complete Claim    old    1
    Advance Key Clock    43200
    Claim Key    young    alice    k2    2
    Complete Claim    young    2
    Advance Key Clock    43200
    Purge Should Remove    1
    Claim Key    young-again    alice    k2    2
    Claim Should Replay Result    young-again    young    2
    Claim Key    old-again    alice    k1    1
    Claim Should Be Started    old-again

A Key First Claimed Between Whole Seconds Is Replayed Until A Microsecond Before Its TTL
    [Tags]    IK-007
    Start Key Runtime    ttl_seconds=60
    Advance Key Clock    0.5
    Claim Key    first    alice    k    1
    Complete Claim    first    "done"
    Advance Key Clock    59.999999
    Claim Key    within    alice    k    1
    Claim Should Replay Result    within    first    "done"
    Advance Key Clock    0.000001
    Claim Key    after    alice    k    1
    Claim Should Be Started    after

An Expired Holder Can Neither Complete Nor Release
    [Tags]    IK-007
    Start Key Runtime    ttl_seconds=60
    Claim Key    first    alice    k    1
    Advance Key Clock    60
    Complete Claim    first    "late"
    Completion Should Be Refused    first
    Release Claim    first
    Release Should Be Refused    first
    Claim Key    fresh    alice    k    2
    Claim Should Be Started    fresh

# -- IK-008: webhooks ----------------------------------------------------------------------

A Webhook Without A Key Is De-duplicated By Token And Body
    [Tags]    IK-008
    Claim Webhook    delivery    hook-7    {"event": 1}
    Claim Should Be Started    delivery
    Complete Claim    delivery    "accepted"
    Claim Webhook    redelivery    hook-7    {"event": 1}
    Claim Should Replay Result    redelivery    delivery    "accepted"
    Claim Webhook    new-event    hook-7    {"event": 2}
    Claim Should Be Started    new-event
    Claim Webhook    other-hook    hook-8    {"event": 1}
    Claim Should Be Started    other-hook

A Webhook With A Key Uses It
    [Tags]    IK-008    IK-006
    Claim Webhook    one    hook-7    a    key=evt-1
    Claim Should Be Started    one
    Claim Webhook    two    hook-7    b    key=evt-1
    Claim Should Mismatch    two    422

# -- IK-016: MCP tool calls ----------------------------------------------------------------

A Tool Call Retry Is De-duplicated By Its Arguments
    [Tags]    IK-016
    Claim Tool Call    call    chat_with_agent    {"agent": "ops", "message": "hi"}
    Claim Should Be Started    call
    Claim Tool Call    retry    chat_with_agent    {"message": "hi", "agent": "ops"}
    Claim Should Conflict    retry
    Complete Claim    call    {"execution": "e-1"}
    Claim Tool Call    late-retry    chat_with_agent    {"agent": "ops", "message": "hi"}
    Claim Should Replay Result    late-retry    call    {"execution": "e-1"}
    Claim Tool Call    other    chat_with_agent    {"agent": "ops", "message": "bye"}
    Claim Should Be Started    other
    Claim Tool Call    fan    fan_out    {"agent": "ops", "message": "hi"}
    Claim Should Be Started    fan

# -- IK-009: scheduler ---------------------------------------------------------------------

The Scheduler Key Is Sched Colon Execution Id
    [Tags]    IK-009
    Scheduler Key Should Be    exec-42    sched:exec-42

A Re-send Resolves To The Same Execution And A Fresh Retry Is Not Suppressed
    [Tags]    IK-009    IK-003
    Claim Scheduler Send    send    exec-1    {"agent": "a"}
    Fail Claim    send    BackendError    502
    Claim Scheduler Send    resend    exec-1    {"agent": "a"}
    Claim Should Replay Error    resend    send    BackendError    502
    Claim Scheduler Send    retry    exec-2    {"agent": "a"}
    Claim Should Be Started    retry

# -- IK-010: stale takeover ----------------------------------------------------------------

A Claim In Flight For More Than 90 Seconds Is Taken Over
    [Tags]    IK-010
    Claim Key    dead    alice    k    1
    Advance Key Clock    90
    Claim Key    too-early    alice    k    1
    Claim Should Conflict    too-early
    Advance Key Clock    0.5
    Claim Key    rescuer    alice    k    1
    Claim Should Be Started    rescuer
    Complete Claim    dead    "zombie"
    Completion Should Be Refused    dead
    Release Claim    dead
    Release Should Be Refused    dead
    Complete Claim    rescuer    "done"
    Claim Key    again    alice    k    1
    Claim Should Replay Result    again    rescuer    "done"

# -- IK-011 / IK-012: effects --------------------------------------------------------------

A Re-run Effect With New Content Replays The Snapshot
    [Tags]    IK-011    IK-012
    Claim Effect    send    e1    message    to=bob, channel=sms    "Hi Bob"
    Complete Claim    send    {"message_id": "m-1"}
    Claim Effect    rerun    e1    message    channel=sms, to=bob    "Hello Bob!"
    Claim Should Replay Result    rerun    send    {"message_id": "m-1"}

Another Execution Type Target Or Label Is Another Effect
    [Tags]    IK-011
    Claim Effect    send    e1    message    to=bob    "x"
    Claim Effect    other-exec    e2    message    to=bob    "x"
    Claim Should Be Started    other-exec
    Claim Effect    other-type    e1    call    to=bob    "x"
    Claim Should Be Started    other-type
    Claim Effect    other-target    e1    message    to=carol    "x"
    Claim Should Be Started    other-target
    Claim Effect    on-purpose    e1    message    to=bob    "x"    dedup_label=reminder
    Claim Should Be Started    on-purpose

An Effect In Flight Is A Conflict
    [Tags]    IK-012
    Claim Effect    send    e1    share_file    file=report.pdf
    Claim Effect    again    e1    share_file    file=report.pdf
    Claim Should Conflict    again
    Fail Claim    send    ShareError    quota
    Claim Effect    after    e1    share_file    file=report.pdf
    Claim Should Replay Error    after    send    ShareError    quota

An Effect Without An Execution Id Is Not Guarded
    [Tags]    IK-014
    Claim Effect Without Execution    first    message    to=bob    "Hi"
    Claim Should Be Started Without Token    first
    Claim Effect Without Execution    second    message    to=bob    "Hi"
    Claim Should Be Started Without Token    second
    Claim Effect    scoped    e1    message    to=bob    "Hi"
    Claim Should Be Started    scoped

An Effect Without An Execution Id Is Refused Once Executions May Be Re-Delivered
    [Tags]    IK-018
    Start Key Runtime    redelivery=enabled
    Claim Effect Without Execution    first    message    to=bob    "Hi"
    Claim Should Be Refused Without Execution    first
    Claim Effect Without Execution    again    message    to=bob    "Hi"
    Claim Should Be Refused Without Execution    again
    Claim Effect    scoped    e1    message    to=bob    "Hi"
    Claim Should Be Started    scoped
    Claim Effect    scoped-again    e1    message    to=bob    "Hi"
    Claim Should Conflict    scoped-again

# -- IK-013: failures stored or released ---------------------------------------------------

By Default A Failure Is Stored And Replayed
    [Tags]    IK-013    IK-003
    Claim Key    first    alice    k    1
    Fail Claim    first    TimeoutError    upstream
    Completion Should Be Stored    first
    Claim Key    retry    alice    k    1
    Claim Should Replay Error    retry    first    TimeoutError    upstream

With Failures Released A Failed Claim Frees The Key
    [Tags]    IK-013
    Start Key Runtime    failure_policy=release
    Claim Key    first    alice    k    1
    Fail Claim    first    TimeoutError    upstream
    Completion Should Be Stored    first
    Claim Key    retry    alice    k    1
    Claim Should Be Started    retry
    Complete Claim    retry    "ok"
    Claim Key    again    alice    k    1
    Claim Should Replay Result    again    retry    "ok"

# -- IK-015: a failed store write holds nothing --------------------------------------------

A Claim Whose Write Fails Holds Nothing And The Retry Starts
    [Tags]    IK-015
    Require Store Faults
    Claim Key While Store Write Fails    1    first    alice    order-1    {"qty": 1}
    Answer Should Be Unavailable    first
    Claim Key    retry    alice    order-1    {"qty": 1}
    Claim Should Be Started    retry

A Completion Or Release Whose Write Fails Keeps The Claim In Flight
    [Tags]    IK-015    IK-003    IK-004
    Require Store Faults
    Claim Key    first    alice    order-1    {"qty": 1}
    Complete Claim While Store Write Fails    1    first    {"execution": "e-1"}
    Answer Should Be Unavailable    complete:first
    Claim Key    again    alice    order-1    {"qty": 1}
    Claim Should Conflict    again
    Complete Claim    first    {"execution": "e-1"}
    Completion Should Be Stored    first
    Claim Key    later    alice    order-1    {"qty": 1}
    Claim Should Replay Result    later    first    {"execution": "e-1"}
    Claim Key    second    alice    order-2    {"qty": 2}
    Release Claim While Store Write Fails    1    second
    Answer Should Be Unavailable    release:second
    Claim Key    duplicate    alice    order-2    {"qty": 2}
    Claim Should Conflict    duplicate

# -- IK-017: an audit event on every replay -------------------------------------------------

Every Replay Emits One Audit Event And Nothing Else Does
    [Tags]    IK-017    IK-002    IK-003    IK-006
    Require Audit Events
    Claim Key    first    alice    order-1    {"qty": 1}
    Claim Should Be Started    first
    Audit Log Should Hold    0
    Claim Key    early    alice    order-1    {"qty": 1}
    Claim Should Conflict    early
    Audit Log Should Hold    0
    Complete Claim    first    {"execution": "e-1"}
    Claim Key    other    alice    order-1    {"qty": 2}
    Audit Log Should Hold    0
    Claim Key    again    alice    order-1    {"qty": 1}
    Claim Should Replay Result    again    first    {"execution": "e-1"}
    Audit Log Should Hold    1    first    order-1    alice
    Claim Key    storm-1    alice    order-1    {"qty": 1}
    Claim Key    storm-2    alice    order-1    {"qty": 1}
    Audit Log Should Hold    3    first    order-1    alice
