Feature: Idempotency keys
  A trigger claims an idempotency key before it creates an execution, and an execution
  claims each outbound effect before it performs it. A claim answers started (do the
  work), conflict (the first caller is still working, 409), replay (the stored outcome)
  or mismatch (the same key with another payload). Claims are named by handles such as
  "first"; time passes only on the virtual key clock. Scenarios here are skipped on a
  backend that does not claim the idempotency area.

  # -- IK-001: one claim starts the work -----------------------------------------------------

  @IK-001
  Scenario: The first claim of a key starts the work; the same key elsewhere is another key
    When claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "first" is started
    When claim "other" is made on key "order-1" in scope "bob" with payload {"qty": 1}
    Then claim "other" is started
    When claim "next" is made on key "order-2" in scope "alice" with payload {"qty": 1}
    Then claim "next" is started

  # -- IK-002: in flight -> conflict ---------------------------------------------------------

  @IK-002 @IK-001
  Scenario: A duplicate while the first is in flight is a conflict, not a replay
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" is refused as a conflict
    When 89 seconds pass on the key clock
    And claim "later" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "later" is refused as a conflict

  # -- IK-003: completed -> replay -----------------------------------------------------------

  @IK-003
  Scenario: A duplicate after completion replays the stored result
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "first" completes with result {"execution": "e-1", "status": "queued"}
    Then the completion of claim "first" is stored
    When 3600 seconds pass on the key clock
    And claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" replays claim "first" returning {"execution": "e-1", "status": "queued"}

  @IK-003
  Scenario: A stored error is replayed as an error, and the stored outcome never changes
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "first" fails with PaymentDeclined "card expired"
    Then the completion of claim "first" is stored
    When claim "first" completes with result "ok"
    Then the completion of claim "first" is refused
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" replays claim "first" raising PaymentDeclined "card expired"

  # -- IK-004: release before the work started ----------------------------------------------

  @IK-004
  Scenario: A claim refused at capacity is released, so the retry starts
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "first" is released
    Then the release of claim "first" is accepted
    When claim "retry" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "retry" is started
    When claim "first" completes with result "late"
    Then the completion of claim "first" is refused
    When claim "first" is released
    Then the release of claim "first" is refused

  @IK-004 @IK-003
  Scenario: A completed claim cannot be released
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    And claim "first" completes with result 7
    When claim "first" is released
    Then the release of claim "first" is refused
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" replays claim "first" returning 7

  # -- IK-005: no key, no de-duplication -----------------------------------------------------

  @IK-005
  Scenario: Claims without a key all start and record nothing
    When claim "one" is made without a key in scope "alice" with payload {"qty": 1}
    Then claim "one" is started without a token
    When claim "two" is made without a key in scope "alice" with payload {"qty": 1}
    Then claim "two" is started without a token

  # -- IK-006: same key, other payload -> mismatch -------------------------------------------

  @IK-006
  Scenario: Another payload under the same key is a mismatch, in flight and after completion
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "changed" is made on key "order-1" in scope "alice" with payload {"qty": 2}
    Then claim "changed" is refused as a mismatch with status 422
    When claim "first" completes with result "done"
    And claim "changed-later" is made on key "order-1" in scope "alice" with payload {"qty": 2}
    Then claim "changed-later" is refused as a mismatch with status 422
    When claim "same" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "same" replays claim "first" returning "done"

  @IK-006 @IK-002
  Scenario: Members in another order are the same payload
    Given claim "first" is made on key "k" in scope "alice" with payload {"a": 1, "b": [1, 2]}
    When claim "reordered" is made on key "k" in scope "alice" with payload {"b": [1, 2], "a": 1}
    Then claim "reordered" is refused as a conflict
    When claim "reversed" is made on key "k" in scope "alice" with payload {"a": 1, "b": [2, 1]}
    Then claim "reversed" is refused as a mismatch with status 422

  @IK-006
  Scenario: The mismatch status is a parameter: 409 in designs other than the IETF draft
    Given idempotency keys with a mismatch status of 409
    And claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When claim "changed" is made on key "order-1" in scope "alice" with payload {"qty": 2}
    Then claim "changed" is refused as a mismatch with status 409

  # -- IK-007: TTL ---------------------------------------------------------------------------

  @IK-007 @IK-003
  Scenario: A key is replayed for 24 hours and starts fresh after
    Given claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    And claim "first" completes with result "done"
    When 86399 seconds pass on the key clock
    And claim "within" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "within" replays claim "first" returning "done"
    When 1 seconds pass on the key clock
    And claim "after" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "after" is started

  @IK-007
  Scenario: A purge removes the keys at least 24 hours old and answers how many
    Given claim "old" is made on key "k1" in scope "alice" with payload 1
    And claim "old" completes with result 1
    And 12 hours pass on the key clock
    And claim "young" is made on key "k2" in scope "alice" with payload 2
    And claim "young" completes with result 2
    When 12 hours pass on the key clock
    And the expired keys are purged
    Then 1 key records were purged
    When claim "young-again" is made on key "k2" in scope "alice" with payload 2
    Then claim "young-again" replays claim "young" returning 2
    When claim "old-again" is made on key "k1" in scope "alice" with payload 1
    Then claim "old-again" is started

  @IK-007
  Scenario: A key first claimed between whole seconds is replayed until a microsecond before its TTL
    Given idempotency keys with a TTL of 60 seconds
    And 0.5 seconds pass on the key clock
    And claim "first" is made on key "k" in scope "alice" with payload 1
    And claim "first" completes with result "done"
    When 59.999999 seconds pass on the key clock
    And claim "within" is made on key "k" in scope "alice" with payload 1
    Then claim "within" replays claim "first" returning "done"
    When 0.000001 seconds pass on the key clock
    And claim "after" is made on key "k" in scope "alice" with payload 1
    Then claim "after" is started

  @IK-007
  Scenario: An expired holder can neither complete nor release, and its key can change payload
    Given idempotency keys with a TTL of 60 seconds
    And claim "first" is made on key "k" in scope "alice" with payload 1
    When 60 seconds pass on the key clock
    And claim "first" completes with result "late"
    Then the completion of claim "first" is refused
    When claim "first" is released
    Then the release of claim "first" is refused
    When claim "fresh" is made on key "k" in scope "alice" with payload 2
    Then claim "fresh" is started

  # -- IK-008: derived webhook keys ------------------------------------------------------------

  @IK-008
  Scenario: A webhook without a key is de-duplicated by its token and body
    When webhook claim "delivery" arrives for token "hook-7" with body "{\"event\": 1}"
    Then claim "delivery" is started
    When claim "delivery" completes with result "accepted"
    And webhook claim "redelivery" arrives for token "hook-7" with body "{\"event\": 1}"
    Then claim "redelivery" replays claim "delivery" returning "accepted"
    When webhook claim "new-event" arrives for token "hook-7" with body "{\"event\": 2}"
    Then claim "new-event" is started
    When webhook claim "other-hook" arrives for token "hook-8" with body "{\"event\": 1}"
    Then claim "other-hook" is started

  @IK-008 @IK-006
  Scenario: A webhook with a key uses it, its body being the payload
    When keyed webhook claim "one" arrives for token "hook-7" with key "evt-1" and body "a"
    Then claim "one" is started
    When keyed webhook claim "two" arrives for token "hook-7" with key "evt-1" and body "b"
    Then claim "two" is refused as a mismatch with status 422
    When keyed webhook claim "three" arrives for token "hook-7" with key "evt-2" and body "a"
    Then claim "three" is started

  # -- IK-016: keys derived from MCP call arguments ----------------------------------------------

  @IK-016
  Scenario: A tool call's retry is de-duplicated by its arguments; other arguments are another call
    When tool call claim "call" is made to "chat_with_agent" with arguments {"agent": "ops", "message": "hi"}
    Then claim "call" is started
    When tool call claim "retry" is made to "chat_with_agent" with arguments {"message": "hi", "agent": "ops"}
    Then claim "retry" is refused as a conflict
    When claim "call" completes with result {"execution": "e-1"}
    And tool call claim "late-retry" is made to "chat_with_agent" with arguments {"agent": "ops", "message": "hi"}
    Then claim "late-retry" replays claim "call" returning {"execution": "e-1"}
    When tool call claim "other" is made to "chat_with_agent" with arguments {"agent": "ops", "message": "bye"}
    Then claim "other" is started
    When tool call claim "fan" is made to "fan_out" with arguments {"agent": "ops", "message": "hi"}
    Then claim "fan" is started

  # -- IK-009: scheduler keys --------------------------------------------------------------------

  @IK-009
  Scenario: The scheduler's key is sched:{execution_id}
    When the scheduler key of execution "exec-42" is asked for
    Then the scheduler key of execution "exec-42" is "sched:exec-42"

  @IK-009 @IK-002 @IK-003
  Scenario: A re-send resolves to the same execution; a fresh retry is not suppressed
    Given scheduler claim "send" is sent for execution "exec-1" with payload {"agent": "a"}
    When scheduler claim "resend" is sent for execution "exec-1" with payload {"agent": "a"}
    Then claim "resend" is refused as a conflict
    When claim "send" fails with BackendError "502"
    And scheduler claim "resend-after" is sent for execution "exec-1" with payload {"agent": "a"}
    Then claim "resend-after" replays claim "send" raising BackendError "502"
    When scheduler claim "retry" is sent for execution "exec-2" with payload {"agent": "a"}
    Then claim "retry" is started

  # -- IK-010: stale takeover ----------------------------------------------------------------------

  @IK-010
  Scenario: A claim in flight for more than 90 seconds is taken over
    Given claim "dead" is made on key "k" in scope "alice" with payload 1
    When 90 seconds pass on the key clock
    And claim "too-early" is made on key "k" in scope "alice" with payload 1
    Then claim "too-early" is refused as a conflict
    When 0.5 seconds pass on the key clock
    And claim "rescuer" is made on key "k" in scope "alice" with payload 1
    Then claim "rescuer" is started
    When claim "dead" completes with result "zombie"
    Then the completion of claim "dead" is refused
    When claim "rescuer" completes with result "done"
    And claim "again" is made on key "k" in scope "alice" with payload 1
    Then claim "again" replays claim "rescuer" returning "done"

  @IK-010 @IK-007
  Scenario: A takeover keeps the key's creation time for the TTL
    Given idempotency keys with a stale-lock timeout of 10 seconds
    And claim "dead" is made on key "k" in scope "alice" with payload 1
    And 86000 seconds pass on the key clock
    And claim "rescuer" is made on key "k" in scope "alice" with payload 1
    When 400 seconds pass on the key clock
    And the expired keys are purged
    Then 1 key records were purged
    When claim "rescuer" completes with result "too late"
    Then the completion of claim "rescuer" is refused

  # -- IK-011 and IK-012: effects ------------------------------------------------------------------

  @IK-011 @IK-012
  Scenario: A re-run's effect with new content replays the first send's snapshot
    Given effect claim "send" is made by execution "e1" for "message" to "to=bob, channel=sms" with content "Hi Bob"
    And claim "send" completes with result {"message_id": "m-1"}
    When effect claim "rerun" is made by execution "e1" for "message" to "channel=sms, to=bob" with content "Hello Bob!"
    Then claim "rerun" replays claim "send" returning {"message_id": "m-1"}

  @IK-011
  Scenario: Another execution, type, target or label is another effect
    Given effect claim "send" is made by execution "e1" for "message" to "to=bob" with content "x"
    When effect claim "other-exec" is made by execution "e2" for "message" to "to=bob" with content "x"
    Then claim "other-exec" is started
    When effect claim "other-type" is made by execution "e1" for "call" to "to=bob" with content "x"
    Then claim "other-type" is started
    When effect claim "other-target" is made by execution "e1" for "message" to "to=carol" with content "x"
    Then claim "other-target" is started
    When labelled effect claim "on-purpose" with dedup label "reminder" is made by execution "e1" for "message" to "to=bob" with content "x"
    Then claim "on-purpose" is started

  @IK-012
  Scenario: An effect in flight is a conflict, never a silent success
    Given effect claim "send" is made by execution "e1" for "share_file" to "file=report.pdf" with content null
    When effect claim "again" is made by execution "e1" for "share_file" to "file=report.pdf" with content null
    Then claim "again" is refused as a conflict
    When claim "send" fails with ShareError "quota"
    And effect claim "after" is made by execution "e1" for "share_file" to "file=report.pdf" with content null
    Then claim "after" replays claim "send" raising ShareError "quota"

  @IK-014
  Scenario: An effect without an execution id is not guarded
    Given effect claim "first" is made with no execution id for "message" to "to=bob" with content "Hi"
    Then claim "first" is started without a token
    When effect claim "second" is made with no execution id for "message" to "to=bob" with content "Hi"
    Then claim "second" is started without a token
    When effect claim "scoped" is made by execution "e1" for "message" to "to=bob" with content "Hi"
    Then claim "scoped" is started

  @IK-018
  Scenario: Once executions may be re-delivered, an effect without an execution id is refused
    Given idempotency keys whose executions may be re-delivered
    And effect claim "first" is made with no execution id for "message" to "to=bob" with content "Hi"
    Then claim "first" is refused for want of an execution id
    When effect claim "again" is made with no execution id for "message" to "to=bob" with content "Hi"
    Then claim "again" is refused for want of an execution id
    When effect claim "scoped" is made by execution "e1" for "message" to "to=bob" with content "Hi"
    Then claim "scoped" is started
    When effect claim "scoped-again" is made by execution "e1" for "message" to "to=bob" with content "Hi"
    Then claim "scoped-again" is refused as a conflict

  # -- IK-013: failures stored or released -----------------------------------------------------

  @IK-013 @IK-003
  Scenario: By default a failure is stored and replayed, a result too
    Given claim "first" is made on key "k" in scope "alice" with payload 1
    When claim "first" fails with TimeoutError "upstream"
    Then the completion of claim "first" is stored
    When claim "retry" is made on key "k" in scope "alice" with payload 1
    Then claim "retry" replays claim "first" raising TimeoutError "upstream"

  @IK-013
  Scenario: With failures released, a failed claim frees the key and the retry starts
    Given idempotency keys that are released when the work fails
    And claim "first" is made on key "k" in scope "alice" with payload 1
    When claim "first" fails with TimeoutError "upstream"
    Then the completion of claim "first" is stored
    When claim "retry" is made on key "k" in scope "alice" with payload 1
    Then claim "retry" is started
    When claim "retry" completes with result "ok"
    Then the completion of claim "retry" is stored
    When claim "again" is made on key "k" in scope "alice" with payload 1
    Then claim "again" replays claim "retry" returning "ok"

  # -- IK-015: a failed store write holds nothing ----------------------------------------------

  @IK-015
  Scenario: A claim whose write fails holds nothing, so the same request starts the work later
    Given the idempotency keys take store faults
    When store write 1 fails while claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "first" is answered unavailable
    When claim "retry" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "retry" is started

  @IK-015 @IK-003
  Scenario: A completion whose write fails leaves the claim in flight until it is stored
    Given the idempotency keys take store faults
    And claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When store write 1 fails while claim "first" completes with result {"execution": "e-1"}
    Then the completion of claim "first" is answered unavailable
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" is refused as a conflict
    When claim "first" completes with result {"execution": "e-1"}
    Then the completion of claim "first" is stored
    When claim "later" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "later" replays claim "first" returning {"execution": "e-1"}

  @IK-015 @IK-004
  Scenario: A release whose write fails keeps the key held until it is released
    Given the idempotency keys take store faults
    And claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    When store write 1 fails while claim "first" is released
    Then the release of claim "first" is answered unavailable
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" is refused as a conflict
    When claim "first" is released
    Then the release of claim "first" is accepted

  # -- IK-017: an audit event on every replay -----------------------------------------------------

  @IK-017 @IK-002 @IK-003 @IK-006
  Scenario: Every replay emits one idempotent_replay event; the claim, a conflict and a mismatch none
    Given the idempotency keys emit audit events
    When claim "first" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "first" is started
    And the audit log holds no idempotent_replay event
    When claim "early" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "early" is refused as a conflict
    And the audit log holds no idempotent_replay event
    When claim "first" completes with result {"execution": "e-1"}
    And claim "other" is made on key "order-1" in scope "alice" with payload {"qty": 2}
    Then claim "other" is refused as a mismatch with status 422
    And the audit log holds no idempotent_replay event
    When claim "again" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then claim "again" replays claim "first" returning {"execution": "e-1"}
    And the audit log holds 1 idempotent_replay events, the last for claim "first" on key "order-1" in scope "alice"
    When claim "storm-1" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    And claim "storm-2" is made on key "order-1" in scope "alice" with payload {"qty": 1}
    Then the audit log holds 3 idempotent_replay events, the last for claim "first" on key "order-1" in scope "alice"
